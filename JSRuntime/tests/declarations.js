// tests/declarations.js: reads what a JSRuntime file really provides and uses, from its source
// text, to check it against the file's `__optimization.declare(...)` call (node-runner.test.js),
// and hands the suite load-order.js (the declarations' parser and the load order).
// Node only (CommonJS); the scripts themselves never load it.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

/// load-order.js (the one parser of declarations and sorter of files, shared with the Swift
/// build tool), evaluated in a context of its own: its `__loadOrder` object.
function loadOrderModule() {
  const context = vm.createContext({});
  const file = path.join(__dirname, '..', 'load-order.js');
  vm.runInContext(fs.readFileSync(file, 'utf8'), context, { filename: 'load-order.js' });
  return context.__loadOrder;
}
const loadOrder = loadOrderModule();

const NAME = '[A-Za-z_$][\\w$]*';

/// The source without comments and without the contents of string literals.
function code(source) {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''")
    .replace(/\/\/[^\n]*/g, ' ');
}

/// The namespace names a member access stands for: `polyfills.<member>` for the polyfills
/// object, otherwise the top-level name.
function nameOf(first, second) {
  return first === 'polyfills' && second ? 'polyfills.' + second : first;
}

/// {provides, uses, globals} of one file, each sorted: names the file assigns on
/// `__optimization`, names it reads there without assigning them, and the globals it assigns.
function analyze(source) {
  const text = code(source);
  const provides = new Set();
  const referenced = new Set();
  const globals = new Set();
  const access = new RegExp(`\\b(?:ns|globalThis\\.__optimization)\\.(${NAME})(?:\\.(${NAME}))?(\\s*=(?!=))?`, 'g');
  for (const match of text.matchAll(access)) {
    const name = nameOf(match[1], match[2]);
    if (name === 'declare' || name === 'polyfills') continue;
    (match[3] ? provides : referenced).add(name);
  }
  // Polyfill files publish through their local `polyfills` alias of `ns.polyfills`.
  for (const match of text.matchAll(new RegExp(`(?<![.\\w$])polyfills\\.(${NAME})(\\s*=(?!=))?`, 'g'))) {
    (match[2] ? provides : referenced).add('polyfills.' + match[1]);
  }
  for (const match of text.matchAll(new RegExp(`\\bglobalThis\\.(${NAME})\\s*=(?!=)`, 'g'))) {
    if (match[1] !== '__optimization') globals.add(match[1]);
  }
  const uses = [...referenced].filter((name) => !provides.has(name));
  return { provides: [...provides].sort(), uses: uses.sort(), globals: [...globals].sort() };
}

/// The declaration of a file (load-order.js): {provides, uses, globals}, each sorted, or null.
function declarationOf(source, file) {
  const declaration = loadOrder.declarationOf(source, file);
  return declaration === null ? null : { provides: [...declaration.provides], uses: [...declaration.uses], globals: [...declaration.globals] };
}

module.exports = { analyze, declarationOf, loadOrder };
