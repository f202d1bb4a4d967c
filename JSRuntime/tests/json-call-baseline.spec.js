// tests/json-call-baseline.spec.js — the bench's per-call JSON pattern gives the resolver's answer.
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var ns = globalThis.__optimization;

  jsTest('jsonCallBaseline: parses, resolves and stringifies like the shared resolver', function () {
    var oe = fx.optimizedEntry();
    var selections = fx.selectedOptimizations();
    var expected = ns.resolver.resolveOptimizedEntry(oe, selections);
    var output = JSON.parse(ns.jsonCallBaseline(JSON.stringify(oe), JSON.stringify(selections)));
    assert.deepEqual(output.entry, JSON.parse(JSON.stringify(expected.entry)));
    assert.deepEqual(output.selectedOptimization, JSON.parse(JSON.stringify(expected.selectedOptimization)));
    assert.equal(output.entry.sys.id === oe.sys.id, false);
  });

  jsTest('jsonCallBaseline: "null" selections give the baseline; invalid JSON throws', function () {
    var oe = fx.optimizedEntry();
    var output = JSON.parse(ns.jsonCallBaseline(JSON.stringify(oe), 'null'));
    assert.equal(output.entry.sys.id, oe.sys.id);
    assert.equal('selectedOptimization' in output, false);
    assert.throws(function () { ns.jsonCallBaseline('{', 'null'); });
  });
})();
