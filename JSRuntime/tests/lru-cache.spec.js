// tests/lru-cache.spec.js — the bounded LRU used for prepared entries and selections.
(function () {
  'use strict';
  var createLruCache = globalThis.__optimization.createLruCache;

  jsTest('LRU cache evicts the least recently used key beyond capacity', function () {
    var cache = createLruCache(2);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.has('b'), false);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
    assert.equal(cache.size, 2);
  });

  jsTest('LRU cache: replacing refreshes, peek does not, undefined deletes, null is a value', function () {
    var cache = createLruCache(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 10);
    cache.set('c', 3);
    assert.equal(cache.has('b'), false);
    assert.equal(cache.peek('a'), 10);
    cache.set('d', 4);
    assert.equal(cache.has('a'), false, 'peek did not refresh a');
    cache.set('n', null);
    assert.equal(cache.get('n'), null);
    cache.set('n', undefined);
    assert.equal(cache.has('n'), false);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  jsTest('LRU cache capacity must be a positive integer', function () {
    assert.throws(function () { createLruCache(0); }, /positive integer/);
    assert.throws(function () { createLruCache(1.5); }, /positive integer/);
    assert.throws(function () { createLruCache('3'); }, /positive integer/);
    assert.equal(createLruCache(1000).capacity, 1000);
  });
})();
