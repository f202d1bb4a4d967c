// tests/node-runner.test.js — the only test file that uses Node APIs.
// Runs the shared JS suite under `node --test`: evaluates tests/fake-host.js first, then every
// manifest file with vm.runInThisContext (so file names appear in stack traces), then the files
// listed in tests/js-test-files.json after fake-host.js (harness, fixtures, *.spec.js), and
// registers every collected jsTest with node:test, cleaning up (__bridge.destroy(),
// __testHost.reset()) after each. A JavaScriptCore host runs the same suite by evaluating the
// manifest files and tests/js-test-files.json in the same way (fake-host.js first) and calling
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

const manifest = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'manifest.json'), 'utf8'));
const benchmarkManifest = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'benchmarks', 'manifest.json'), 'utf8'));
const testFiles = JSON.parse(fs.readFileSync(path.join(testsRoot, 'js-test-files.json'), 'utf8'));
const specFiles = fs.readdirSync(testsRoot).filter((name) => name.endsWith('.spec.js')).sort();

nodeAssert.equal(testFiles[0], 'fake-host.js', 'js-test-files.json must start with fake-host.js');
evaluate(path.join(testsRoot, 'fake-host.js'));
for (const file of manifest) evaluate(path.join(runtimeRoot, file));
// Benchmark-only scripts are tested here; production engines never load them.
for (const file of benchmarkManifest) evaluate(path.join(runtimeRoot, 'benchmarks', file));
for (const file of testFiles.slice(1)) evaluate(path.join(testsRoot, file));

test('js-test-files.json lists harness.js, fixtures.js and every *.spec.js in order', () => {
  nodeAssert.deepEqual(testFiles, ['fake-host.js', 'harness.js', 'fixtures.js', ...specFiles]);
});

test('every JSRuntime script is listed in the manifest or is a test file', () => {
  const scripts = [];
  for (const dir of ['polyfills', 'core', 'bridge', 'service']) {
    for (const name of fs.readdirSync(path.join(runtimeRoot, dir))) {
      if (name.endsWith('.js')) scripts.push(`${dir}/${name}`);
    }
  }
  nodeAssert.deepEqual([...scripts].sort(), [...manifest].sort());
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

// The bridge contract (bridge-contract.json, which the Swift side declares and checks in
// JavaScriptCore): every function the host calls exists with its arity, __bridge and __service
// export nothing else, and the native callbacks the scripts name are exactly the declared ones.
test('JSRuntime keeps the bridge contract of bridge-contract.json', () => {
  const contract = JSON.parse(fs.readFileSync(path.join(runtimeRoot, 'bridge-contract.json'), 'utf8'));
  // A fresh context with only the production scripts: the suite above installed test globals.
  const context = vm.createContext({ console });
  vm.runInContext(fs.readFileSync(path.join(testsRoot, 'fake-host.js'), 'utf8'), context);
  const sources = manifest.map((file) => fs.readFileSync(path.join(runtimeRoot, file), 'utf8'));
  manifest.forEach((file, index) => vm.runInContext(sources[index], context, { filename: file }));
  for (const [fnPath, arity] of Object.entries(contract.functions)) {
    const found = vm.runInContext(`typeof ${fnPath} === 'function' ? ${fnPath}.length : -1`, context);
    nodeAssert.equal(found, arity, `${fnPath}/${arity}`);
  }
  for (const object of ['__bridge', '__service']) {
    for (const key of JSON.parse(vm.runInContext(`JSON.stringify(Object.keys(${object}))`, context))) {
      nodeAssert.ok(`${object}.${key}` in contract.functions, `${object}.${key} is exported but not in the contract`);
    }
  }
  const named = new Set(sources.join('\n').match(/__native[A-Za-z0-9_]+/g));
  nodeAssert.deepEqual([...named].sort(), Object.keys(contract.natives).sort());
  nodeAssert.deepEqual(JSON.parse(vm.runInContext('JSON.stringify(__optimization.requestEventMethods)', context)).sort(),
    contract.requestEventMethods.slice().sort());
});

// Explicit dependencies: every file of the manifest declares what it provides and uses
// (core/namespace.js), the declaration is exactly what its source reads and writes on the
// namespace, and the loaded graph is whole (every use provided once, every declared name there).
test('every JSRuntime file declares exactly what it provides and uses', () => {
  const { analyze, declarationOf } = require('./declarations.js');
  for (const file of [...manifest, ...benchmarkManifest.map((name) => 'benchmarks/' + name)]) {
    const source = fs.readFileSync(path.join(runtimeRoot, file), 'utf8');
    const declaration = declarationOf(source, file);
    nodeAssert.ok(declaration, `${file} has no __optimization.declare('${file}', …) call`);
    nodeAssert.deepEqual(declaration, analyze(source), `${file}: the declaration differs from what the source does`);
  }
  nodeAssert.deepEqual(globalThis.__optimization.checkModules(), []);
  nodeAssert.deepEqual(globalThis.__optimization.modules().map((module) => module.file).filter((file) => manifest.includes(file)), manifest);
});

test('a file that reads a name it did not declare fails the declaration check', () => {
  const { analyze, declarationOf } = require('./declarations.js');
  const file = 'core/consent.js';
  const source = fs.readFileSync(path.join(runtimeRoot, file), 'utf8').replace(
    'function logBlocked(', 'function logBlocked(method, payload) { return ns.guards; }\n  function unusedLogBlocked(');
  nodeAssert.notDeepEqual(declarationOf(source, file), analyze(source));
  nodeAssert.ok(analyze(source).uses.includes('guards'));
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
