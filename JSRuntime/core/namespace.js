// core/namespace.js
// Contract: creates `globalThis.__optimization`, the namespace every file of the manifest
// publishes on, and the declarations that make the dependencies between the files explicit.
//   declare(file, {provides?, uses?, globals?}) → the namespace   called first by every other
//       file of the manifest, with its own path: `provides` the namespace names it defines,
//       `uses` the names of other files it reads (at load or later, at call time), `globals` the
//       globals it installs. A file reads and writes only what it declares (checked by
//       tests/node-runner.test.js against the source text). Evaluating a file again replaces its
//       declaration.
//   modules() → [{file, provides, uses, globals}]   the declarations, in load order (copies).
//   checkModules() → [string]   what the loaded declarations get wrong: a name used but provided
//       by no file, a name provided by two files, a declared name or global that does not exist.
//       Empty when the graph is whole. Run once everything is loaded.
// Names are top-level namespace members (`host`, `createEventEmitter`), or `polyfills.<member>`
// for the polyfills object.
(function () {
  'use strict';
  var ns = globalThis.__optimization || (globalThis.__optimization = {});
  var declared = [];

  function names(file, declaration, key) {
    var value = declaration[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some(function (name) { return typeof name !== 'string'; })) {
      throw new TypeError(file + ': "' + key + '" must be an array of names.');
    }
    return value.slice();
  }

  function copy(module) {
    return { file: module.file, provides: module.provides.slice(), uses: module.uses.slice(), globals: module.globals.slice() };
  }

  function declare(file, declaration) {
    if (typeof file !== 'string' || typeof declaration !== 'object' || declaration === null) {
      throw new TypeError('declare(file, {provides, uses, globals}) needs a path and a declaration.');
    }
    var module = {
      file: file,
      provides: names(file, declaration, 'provides'),
      uses: names(file, declaration, 'uses'),
      globals: names(file, declaration, 'globals'),
    };
    declared = declared.filter(function (existing) { return existing.file !== file; });
    declared.push(module);
    return ns;
  }

  function lookup(name) {
    var parts = name.split('.');
    var value = ns;
    for (var i = 0; i < parts.length; i += 1) {
      if (value === null || (typeof value !== 'object' && typeof value !== 'function') || !(parts[i] in value)) return false;
      value = value[parts[i]];
    }
    return true;
  }

  function checkModules() {
    var problems = [];
    var providers = {};
    declared.forEach(function (module) {
      module.provides.forEach(function (name) {
        if (providers[name] !== undefined) problems.push(name + ' is provided by ' + providers[name] + ' and ' + module.file);
        providers[name] = module.file;
        if (!lookup(name)) problems.push(module.file + ' declares ' + name + ' but does not provide it');
      });
      module.globals.forEach(function (name) {
        if (!(name in globalThis)) problems.push(module.file + ' declares the global ' + name + ' but does not install it');
      });
    });
    declared.forEach(function (module) {
      module.uses.forEach(function (name) {
        if (providers[name] === undefined) problems.push(module.file + ' uses ' + name + ', which no file provides');
      });
    });
    return problems;
  }

  ns.declare = declare;
  ns.modules = function modules() { return declared.map(copy); };
  ns.checkModules = checkModules;
  globalThis.__optimization.declare('core/namespace.js', { provides: ['checkModules', 'modules'] });
})();
