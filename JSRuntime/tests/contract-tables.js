// tests/contract-tables.js — the tables of JSRuntime/README.md that show bridge-contract.json.
// Not a runtime script: Node only (like declarations.js). The README marks each table:
//   <!-- contract-table: __bridge / Lifecycle -->   (an object and a topic of its functions)
//   <!-- contract-table: __service -->              (an object whose functions have no topic)
//   <!-- contract-table: natives / Host bindings --> (the native callbacks of a topic)
//   ...the generated table...
//   <!-- /contract-table -->
// Every group of the file (object or natives, and topic) has exactly one table; a marker that
// names no group, a group without a marker and a marker without its end are refused.
//   node JSRuntime/tests/contract-tables.js           fails (exit 1) when the README is out of date
//   node JSRuntime/tests/contract-tables.js --write   rewrites the tables
// The Node suite (node-runner.test.js) runs the check.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

function readContract(runtimeRoot) {
  return JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'bridge-contract.json'), 'utf8'));
}

// The dotted path a host call takes (globalThis functions: the bare name).
function pathOf(object, fn) {
  return object.object === 'globalThis' ? fn.name : `${object.object}.${fn.name}`;
}

// The groups of the contract in its order: {key, heading, rows: [[signature, doc]]}.
function groupsOf(contract) {
  const groups = [];
  const add = (owner, name, functions) => {
    for (const fn of functions) {
      const key = fn.topic === undefined ? owner : `${owner} / ${fn.topic}`;
      let group = groups.find((candidate) => candidate.key === key);
      if (group === undefined) {
        group = { key, rows: [] };
        groups.push(group);
      }
      group.rows.push([`\`${name(fn)}(${fn.params.join(', ')})\``, fn.doc]);
    }
  };
  for (const object of contract.objects) {
    add(object.object, (fn) => (object.closed ? fn.name : pathOf(object, fn)), object.functions);
  }
  add('natives', (fn) => fn.name, contract.natives.functions);
  return groups;
}

function table(group) {
  const cell = (text) => text.replace(/\|/g, '\\|');
  const header = group.key.startsWith('natives') ? '| callback | contract |' : '| function | behaviour |';
  return [header, '|---|---|', ...group.rows.map(([signature, doc]) => `| ${cell(signature)} | ${cell(doc)} |`)].join('\n');
}

const BEGIN = /<!-- contract-table: (.+?) -->\n/g;
const END = '<!-- /contract-table -->';

// `readme` with every marked table rewritten from `contract`; throws on a missing or unknown mark.
function renderReadme(readme, contract) {
  const groups = new Map(groupsOf(contract).map((group) => [group.key, group]));
  const seen = new Set();
  let output = '';
  let rest = 0;
  for (const match of readme.matchAll(BEGIN)) {
    if (match.index < rest) throw new Error(`README.md: the table of ${match[1]} starts inside another table`);
    const key = match[1];
    const group = groups.get(key);
    if (group === undefined) throw new Error(`README.md has a table for ${key}, which bridge-contract.json does not have`);
    if (seen.has(key)) throw new Error(`README.md has two tables for ${key}`);
    seen.add(key);
    const start = match.index + match[0].length;
    const end = readme.indexOf(END, start);
    if (end === -1) throw new Error(`README.md: the table of ${key} has no ${END}`);
    output += readme.slice(rest, start) + table(group) + '\n';
    rest = end;
  }
  for (const key of groups.keys()) {
    if (!seen.has(key)) throw new Error(`README.md has no table for ${key} (<!-- contract-table: ${key} -->)`);
  }
  return output + readme.slice(rest);
}

module.exports = { readContract, renderReadme };

if (require.main === module) {
  const runtimeRoot = path.resolve(__dirname, '..');
  const readmePath = path.join(runtimeRoot, 'README.md');
  const readme = fs.readFileSync(readmePath, 'utf8');
  const expected = renderReadme(readme, readContract(runtimeRoot));
  if (process.argv.includes('--write')) {
    if (expected !== readme) fs.writeFileSync(readmePath, expected);
    console.log('JSRuntime/README.md: the contract tables are written');
  } else if (expected !== readme) {
    console.error('JSRuntime/README.md is out of date: run node JSRuntime/tests/contract-tables.js --write');
    process.exit(1);
  }
}
