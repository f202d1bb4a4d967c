// tests/node-runner.test.js — the only test file that uses Node APIs.
// Runs the shared JS suite under `node --test`: evaluates tests/fake-host.js first, then every
// file of every role in load order (load-order.js over manifest.json, `all`) with
// vm.runInThisContext (so file names appear in stack traces), then the files
// listed in tests/js-test-files.json after fake-host.js (harness, fixtures, *.spec.js), and
// registers every collected jsTest with node:test, cleaning up (__bridge.destroy(),
// __testHost.reset()) after each. A JavaScriptCore host runs the same suite by evaluating the
// same files and tests/js-test-files.json in the same way (fake-host.js first) and calling
// __runJsTests(callback). It also checks that js-test-files.json lists every spec file, and runs
// the resolver over every entry of the test space in Fixtures/space.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { test } = require('node:test');
const nodeAssert = require('node:assert/strict');

const runtimeRoot = path.resolve(__dirname, '..');
const testsRoot = __dirname;

function evaluate(file) {
  const source = fs.readFileSync(file, 'utf8');
  vm.runInThisContext(source, { filename: path.relative(runtimeRoot, file) });
}

const { loadOrder } = require('./declarations.js');
const contractTables = require('./contract-tables.js');
const roles = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'manifest.json'), 'utf8'));
const roleFiles = Object.values(roles).flat();
const sources = Object.fromEntries(roleFiles.map((file) => [file, fs.readFileSync(path.join(runtimeRoot, file), 'utf8')]));
// Copied out of load-order.js's context, so node:assert compares them as plain arrays.
const order = JSON.parse(JSON.stringify(loadOrder.loadOrder(roles, sources)));
const loadedFiles = order.all;
const benchmarkManifest = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'benchmarks', 'manifest.json'), 'utf8'));
const testFiles = JSON.parse(fs.readFileSync(path.join(testsRoot, 'js-test-files.json'), 'utf8'));
const specFiles = fs.readdirSync(testsRoot).filter((name) => name.endsWith('.spec.js')).sort();

nodeAssert.equal(testFiles[0], 'fake-host.js', 'js-test-files.json must start with fake-host.js');
evaluate(path.join(testsRoot, 'fake-host.js'));
for (const file of loadedFiles) evaluate(path.join(runtimeRoot, file));
// Benchmark-only scripts are tested here; production engines never load them.
for (const file of benchmarkManifest) evaluate(path.join(runtimeRoot, 'benchmarks', file));
for (const file of testFiles.slice(1)) evaluate(path.join(testsRoot, file));

test('js-test-files.json lists harness.js, fixtures.js and every *.spec.js in order', () => {
  nodeAssert.deepEqual(testFiles, ['fake-host.js', 'harness.js', 'fixtures.js', ...specFiles]);
});

test('every JSRuntime script is in the role of its folder', () => {
  const folders = { core: ['core', 'polyfills'], client: ['bridge'], service: ['service'] };
  nodeAssert.deepEqual(Object.keys(roles).sort(), Object.keys(folders).sort());
  for (const [role, dirs] of Object.entries(folders)) {
    const scripts = [];
    for (const dir of dirs) {
      for (const name of fs.readdirSync(path.join(runtimeRoot, dir))) {
        if (name.endsWith('.js')) scripts.push(`${dir}/${name}`);
      }
    }
    nodeAssert.deepEqual([...roles[role]].sort(), scripts.sort(), `role ${role}`);
  }
  const benchmarks = fs.readdirSync(path.join(runtimeRoot, 'benchmarks')).filter((name) => name.endsWith('.js'));
  nodeAssert.deepEqual(benchmarks.sort(), [...benchmarkManifest].sort());
});

for (const jsTestCase of globalThis.__jsTests) {
  test(jsTestCase.name, async () => {
    try {
      await jsTestCase.fn();
    } finally {
      globalThis.__jsTestCleanup();
    }
  });
}

// The bridge contract (bridge-contract.json, the one place it is written; the Swift lists are
// generated from it and checked in JavaScriptCore): every function the host calls exists with its
// arity (the number of its params), a closed object (__bridge, __service) exports nothing else,
// the native callbacks the scripts name are exactly the declared ones, and the event functions are
// the methods __service.call accepts. The benchmark's functions are checked after loading the
// benchmark scripts, which production engines never load.
test('JSRuntime keeps the bridge contract of bridge-contract.json', () => {
  const contract = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'bridge-contract.json'), 'utf8'));
  // A fresh context with only the production scripts: the suite above installed test globals.
  const context = vm.createContext({ console });
  vm.runInContext(fs.readFileSync(path.join(testsRoot, 'fake-host.js'), 'utf8'), context);
  const scripts = loadedFiles.map((file) => sources[file]);
  loadedFiles.forEach((file, index) => vm.runInContext(scripts[index], context, { filename: file }));
  const checkFunctions = (objects) => {
    for (const object of objects) {
      for (const fn of object.functions) {
        const fnPath = object.object === 'globalThis' ? fn.name : `${object.object}.${fn.name}`;
        const found = vm.runInContext(`typeof ${fnPath} === 'function' ? ${fnPath}.length : -1`, context);
        nodeAssert.equal(found, fn.params.length, `${fnPath}/${fn.params.length}`);
      }
    }
  };
  checkFunctions(contract.objects.filter((object) => !object.benchmark));
  for (const object of contract.objects.filter((candidate) => candidate.closed)) {
    const declared = new Set(object.functions.map((fn) => fn.name));
    for (const key of JSON.parse(vm.runInContext(`JSON.stringify(Object.keys(${object.object}))`, context))) {
      nodeAssert.ok(declared.has(key), `${object.object}.${key} is exported but not in the contract`);
    }
  }
  const named = new Set(scripts.join('\n').match(/__native[A-Za-z0-9_]+/g));
  nodeAssert.deepEqual([...named].sort(), contract.natives.functions.map((native) => native.name).sort());
  const events = contract.objects.flatMap((object) => object.functions.filter((fn) => fn.event).map((fn) => fn.name));
  nodeAssert.deepEqual(JSON.parse(vm.runInContext('JSON.stringify(__optimization.requestEventMethods)', context)).sort(),
    events.sort());
  for (const file of benchmarkManifest) {
    vm.runInContext(fs.readFileSync(path.join(runtimeRoot, 'benchmarks', file), 'utf8'), context, { filename: file });
  }
  checkFunctions(contract.objects.filter((object) => object.benchmark));
});

// The README's tables of the contract are generated from bridge-contract.json
// (`node JSRuntime/tests/contract-tables.js --write`): they must read as the file says.
test('JSRuntime/README.md shows the tables of bridge-contract.json', () => {
  const readme = fs.readFileSync(path.join(runtimeRoot, 'README.md'), 'utf8');
  const expected = contractTables.renderReadme(readme, contractTables.readContract(runtimeRoot));
  nodeAssert.ok(readme === expected, 'JSRuntime/README.md is out of date: run node JSRuntime/tests/contract-tables.js --write');
});

test('a README without the table of a contract group is refused', () => {
  const readme = fs.readFileSync(path.join(runtimeRoot, 'README.md'), 'utf8');
  const withoutService = readme.replace(/<!-- contract-table: __service -->[\s\S]*?<!-- \/contract-table -->\n?/, '');
  nodeAssert.throws(() => contractTables.renderReadme(withoutService, contractTables.readContract(runtimeRoot)),
    /no table for __service/);
});

// Explicit dependencies: every file of the manifest declares what it provides and uses
// (core/namespace.js), the declaration is exactly what its source reads and writes on the
// namespace, and the loaded graph is whole (every use provided once, every declared name there).
test('every JSRuntime file declares exactly what it provides and uses', () => {
  const { analyze, declarationOf } = require('./declarations.js');
  for (const file of [...loadedFiles, ...benchmarkManifest.map((name) => 'benchmarks/' + name)]) {
    const source = fs.readFileSync(path.join(runtimeRoot, file), 'utf8');
    const declaration = declarationOf(source, file);
    nodeAssert.ok(declaration, `${file} has no __optimization.declare('${file}', …) call`);
    nodeAssert.deepEqual(declaration, analyze(source), `${file}: the declaration differs from what the source does`);
  }
  nodeAssert.deepEqual(globalThis.__optimization.checkModules(), []);
  nodeAssert.deepEqual(globalThis.__optimization.modules().map((module) => module.file).filter((file) => loadedFiles.includes(file)), loadedFiles);
});

test('a file that reads a name it did not declare fails the declaration check', () => {
  const { analyze, declarationOf } = require('./declarations.js');
  const file = 'core/consent.js';
  const source = fs.readFileSync(path.join(runtimeRoot, file), 'utf8').replace(
    'function logBlocked(', 'function logBlocked(method, payload) { return ns.guards; }\n  function unusedLogBlocked(');
  nodeAssert.notDeepEqual(declarationOf(source, file), analyze(source));
  nodeAssert.ok(analyze(source).uses.includes('guards'));
});

// The load order (load-order.js, which the Swift build tool runs too): computed from the
// declarations, stable, and refused with a message naming the problem.
test('the load order puts every file after the files it uses, core/namespace.js first', () => {
  const { declarationOf } = require('./declarations.js');
  for (const [role, files] of Object.entries(order)) {
    nodeAssert.equal(files[0], 'core/namespace.js', role);
    const position = new Map(files.map((file, index) => [file, index]));
    const providers = new Map();
    for (const file of files) for (const name of declarationOf(sources[file], file).provides) providers.set(name, file);
    for (const file of files) {
      for (const name of declarationOf(sources[file], file).uses) {
        nodeAssert.ok(position.get(providers.get(name)) < position.get(file), `${role}: ${file} loads after the provider of ${name}`);
      }
    }
  }
  for (const role of ['client', 'service']) {
    const other = role === 'client' ? 'service' : 'client';
    nodeAssert.deepEqual(order[role], order.all.filter((file) => order[role].includes(file)), `${role}: in the order of all`);
    nodeAssert.ok(roles[role].every((file) => order[role].includes(file)), `${role}: every file of the role`);
    nodeAssert.ok(!roles[other].some((file) => order[role].includes(file)), `${role}: no file of the ${other} role`);
  }
});

test('an engine kind loads the core files its role needs, the polyfills and nothing else', () => {
  const { declarationOf } = require('./declarations.js');
  for (const role of ['client', 'service']) {
    const loaded = new Set(order[role]);
    const used = new Set(order[role].flatMap((file) => declarationOf(sources[file], file).uses));
    for (const file of roles.core) {
      const declaration = declarationOf(sources[file], file);
      const needed = file === 'core/namespace.js' || declaration.globals.length > 0 || declaration.provides.some((name) => used.has(name));
      nodeAssert.equal(loaded.has(file), needed, `${role}: ${file}`);
    }
  }
  // The visitor-state machinery of the client is not in a service engine.
  for (const file of ['core/state.js', 'bridge/experience-link.js', 'core/event-emitter.js', 'core/screen-tracker.js']) {
    nodeAssert.ok(!order.service.includes(file) && order.client.includes(file), file);
  }
});

test('the load order does not depend on the order of the manifest', () => {
  const reversed = Object.fromEntries(Object.entries(roles).map(([role, files]) => [role, [...files].reverse()]));
  nodeAssert.deepEqual(JSON.parse(JSON.stringify(loadOrder.loadOrder(reversed, sources))), order);
});

function sortError(declarations) {
  try {
    loadOrder.sortFiles(declarations);
  } catch (error) {
    return String(error.message);
  }
  return null;
}

test('a used name that no file provides is refused, naming the file and the name', () => {
  nodeAssert.equal(sortError([
    { file: 'core/namespace.js', provides: [], uses: [] },
    { file: 'core/a.js', provides: ['a'], uses: ['missing'] },
  ]), 'core/a.js uses missing, which no file provides');
});

test('a name provided by two files is refused, naming both', () => {
  nodeAssert.equal(sortError([
    { file: 'core/b.js', provides: ['shared'], uses: [] },
    { file: 'core/a.js', provides: ['shared'], uses: [] },
  ]), 'shared is provided by core/a.js and core/b.js');
});

test('declarations that form a cycle are refused, naming the cycle', () => {
  nodeAssert.equal(sortError([
    { file: 'core/namespace.js', provides: ['modules'], uses: [] },
    { file: 'core/free.js', provides: ['free'], uses: [] },
    { file: 'core/a.js', provides: ['a'], uses: ['b', 'free'] },
    { file: 'core/b.js', provides: ['b'], uses: ['c'] },
    { file: 'core/c.js', provides: ['c'], uses: ['a'] },
  ]), 'the declarations form a cycle: core/a.js (b) → core/b.js (c) → core/c.js (a) → core/a.js');
  // The real graph sorts; the same graph with one use added backwards does not.
  nodeAssert.equal(sortError([
    { file: 'core/host.js', provides: ['host'], uses: ['createResponse'] },
    { file: 'core/http-response.js', provides: ['createResponse'], uses: ['host'] },
  ]), 'the declarations form a cycle: core/host.js (createResponse) → core/http-response.js (host) → core/host.js');
});

test('the manifest refuses a file in two roles and a role it does not know', () => {
  const twice = { ...roles, client: [...roles.client, 'core/host.js'] };
  nodeAssert.throws(() => loadOrder.loadOrder(twice, sources), (error) => error.message === 'core/host.js is in the roles core and client');
  nodeAssert.throws(() => loadOrder.loadOrder({ ...roles, extra: [] }, sources), (error) => /unknown role "extra"/.test(error.message));
  const missing = { ...sources, 'service/service-bridge.js': sources['service/service-bridge.js'].replace("'settleReturning',", "'settleLater',") };
  nodeAssert.throws(() => loadOrder.loadOrder(roles, missing),
    (error) => error.message === 'role service: service/service-bridge.js uses settleLater, which no file provides');
});

// Each role loads on its own: a service engine has no visitor bridge, a client engine no service.
function roleContext(role) {
  const context = vm.createContext({ console });
  vm.runInContext(fs.readFileSync(path.join(testsRoot, 'fake-host.js'), 'utf8'), context);
  for (const file of order[role]) vm.runInContext(sources[file], context, { filename: file });
  return context;
}

test('the service role loads without the client bridge and its graph is whole', () => {
  const context = roleContext('service');
  nodeAssert.equal(vm.runInContext('typeof __bridge', context), 'undefined');
  nodeAssert.equal(vm.runInContext('typeof __service.configure', context), 'function');
  nodeAssert.equal(vm.runInContext('JSON.stringify(__optimization.checkModules())', context), '[]');
});

test('the client role loads without the service face and its graph is whole', () => {
  const context = roleContext('client');
  nodeAssert.equal(vm.runInContext('typeof __service', context), 'undefined');
  nodeAssert.equal(vm.runInContext('typeof __bridge.initialize', context), 'function');
  nodeAssert.equal(vm.runInContext('JSON.stringify(__optimization.checkModules())', context), '[]');
});

// The test space (Fixtures/space): every raw CDA collection resolves for the new visitor as
// Fixtures/README.md says.
const spaceFixtures = path.resolve(runtimeRoot, '..', 'Fixtures', 'space');
const expectedVariants = {
  'hero-home': 'hero-home-europe',
  'promo-strip': 'promo-strip-b',
  'holiday-banner': 'holiday-banner-c',
  'shipping-note': 'shipping-note-eu',
};
test('the test space\'s CDA collections resolve for the new visitor', () => {
  const envelope = JSON.parse(fs.readFileSync(path.join(spaceFixtures, 'experience', 'new-visitor.json'), 'utf8'));
  const selections = envelope.data.experiences;
  const entriesDir = path.join(spaceFixtures, 'entries');
  const files = fs.readdirSync(entriesDir).filter((name) => name.endsWith('.json')).sort();
  nodeAssert.ok(files.length > 0);
  for (const name of files) {
    const collection = JSON.parse(fs.readFileSync(path.join(entriesDir, name), 'utf8'));
    const baselineId = collection.items[0].sys.id;
    const result = globalThis.__optimization.resolver.resolveOptimizedEntry(collection, selections);
    const expected = expectedVariants[baselineId];
    if (expected === undefined) {
      nodeAssert.equal(result.entry, collection.items[0], `${name} resolves to itself`);
    } else {
      nodeAssert.equal(result.entry.sys.id, expected, `${name} resolves to its variant`);
      nodeAssert.ok(result.selectedOptimization, `${name} reports its selection`);
    }
  }
});
