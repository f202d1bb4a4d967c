// tests/context-registry.spec.js — the optimization-context registry.
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  jsTest('the context registry keeps 1000 contexts, evicting the least recently accessed; ids are never shared', function () {
    var registry = ns.createContextRegistry();
    var ids = [];
    for (var i = 0; i < 1001; i++) ids.push(registry.register({ n: i }));
    assert.equal(registry.size, 1000);
    assert.equal(registry.lookup(ids[0]), undefined, 'the 1st context is gone');
    assert.deepEqual(registry.lookup(ids[1000]), { n: 1000 });
    var unique = {};
    ids.forEach(function (id) { unique[id] = true; });
    assert.equal(Object.keys(unique).length, 1001);
  });

  jsTest('a context lookup refreshes recency, so the next eviction takes another context', function () {
    var registry = ns.createContextRegistry({ capacity: 3 });
    var a = registry.register('a');
    var b = registry.register('b');
    registry.register('c');
    assert.equal(registry.lookup(a), 'a');
    registry.register('d');
    assert.equal(registry.lookup(b), undefined, 'b was least recently accessed');
    assert.equal(registry.lookup(a), 'a');
  });

  jsTest('a context idle for more than 30 minutes is gone, exactly at the boundary it is kept', function () {
    var registry = ns.createContextRegistry();
    assert.equal(__testHost.now(), Date.UTC(2026, 0, 1));
    var first = registry.register('first');
    var second = registry.register('second');
    __testHost.advance(1800000);
    assert.equal(registry.lookup(second), 'second', 'exactly 30:00.000 idle is kept (and refreshed)');
    __testHost.advance(1);
    assert.equal(registry.lookup(first), undefined, '30:00.001 after creation it is gone');
    assert.equal(registry.lookup(second), 'second', 'refreshed by the earlier lookup');
    __testHost.advance(1800001);
    assert.equal(registry.lookup(second), undefined);
    assert.equal(registry.size, 0);
  });

  jsTest('registration uses host.randomUUID and clear() empties the registry', function () {
    var registry = ns.createContextRegistry();
    assert.equal(registry.register('x'), '00000000-0000-4000-8000-000000000001');
    assert.equal(registry.register('y'), '00000000-0000-4000-8000-000000000002');
    registry.clear();
    assert.equal(registry.size, 0);
    assert.equal(registry.lookup('00000000-0000-4000-8000-000000000001'), undefined);
    assert.equal(registry.lookup('unknown'), undefined);
  });

  jsTest('registerAs replays a registration at its own time: same eviction and idle rules as register', function () {
    var eager = ns.createContextRegistry({ capacity: 3 });
    var replayed = ns.createContextRegistry({ capacity: 3 });
    var start = __testHost.now();
    var ids = [];
    for (var i = 0; i < 4; i++) {
      ids.push(eager.register({ n: i }));
      __testHost.advance(600000);
    }
    // The same four registrations, replayed later under the same ids and original times.
    for (var j = 0; j < 4; j++) replayed.registerAs(ids[j], { n: j }, start + j * 600000);
    assert.equal(replayed.size, eager.size);
    for (var k = 0; k < 4; k++) assert.deepEqual(replayed.lookup(ids[k]), eager.lookup(ids[k]), 'id ' + k);
    assert.equal(replayed.lookup(ids[0]), undefined, 'evicted by capacity in both');
    // Idle time counts from the replayed time, not from the replay.
    var old = ns.createContextRegistry();
    old.registerAs('old', 'x', __testHost.now() - 1800001);
    assert.equal(old.lookup('old'), undefined);
    old.registerAs('edge', 'y', __testHost.now() - 1800000);
    assert.equal(old.lookup('edge'), 'y');
    assert.throws(function () { old.registerAs('', 'z', 0); }, /non-empty string/);
    assert.throws(function () { old.registerAs('id', 'z', NaN); }, /finite number/);
  });
})();
