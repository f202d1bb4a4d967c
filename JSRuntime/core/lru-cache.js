// core/lru-cache.js
// Contract: `__optimization.createLruCache(capacity)` → a bounded least-recently-used map, used
// for the bridge's prepared entries/selections and by the context registry.
// `capacity` must be a positive integer (else a RangeError). `get(key)` returns the value (or
// undefined) and makes the key the most recent; `peek(key)` reads without refreshing;
// `set(key, value)` inserts or replaces (making it most recent), then evicts the least recent keys
// beyond capacity; `undefined` values are not stored (set(key, undefined) deletes the key).
// `oldestKey()` is the least recently used key (undefined when empty). `has`, `delete`, `clear`,
// `size` (getter), `capacity`. get/peek/has allocate nothing; set allocates one node for a new key.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/lru-cache.js', { provides: ['createLruCache'] });

  function createLruCache(capacity) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError('LRU cache capacity must be a positive integer, received ' + String(capacity) + '.');
    }
    // key → node of a doubly linked list in recency order (head = least recent). Refreshing moves
    // pointers only, so the Map is never rewritten on a read.
    var nodes = new Map();
    var head = null;
    var tail = null;

    function unlink(node) {
      if (node.prev !== null) node.prev.next = node.next;
      else head = node.next;
      if (node.next !== null) node.next.prev = node.prev;
      else tail = node.prev;
      node.prev = null;
      node.next = null;
    }

    function append(node) {
      node.prev = tail;
      if (tail !== null) tail.next = node;
      else head = node;
      tail = node;
    }

    function touch(node) {
      if (node === tail) return;
      unlink(node);
      append(node);
    }

    function remove(key) {
      var node = nodes.get(key);
      if (node === undefined) return false;
      unlink(node);
      nodes.delete(key);
      return true;
    }

    return {
      capacity: capacity,
      get: function (key) {
        var node = nodes.get(key);
        if (node === undefined) return undefined;
        touch(node);
        return node.value;
      },
      peek: function (key) {
        var node = nodes.get(key);
        return node === undefined ? undefined : node.value;
      },
      set: function (key, value) {
        if (value === undefined) {
          remove(key);
          return;
        }
        var node = nodes.get(key);
        if (node !== undefined) {
          node.value = value;
          touch(node);
          return;
        }
        node = { key: key, value: value, prev: null, next: null };
        nodes.set(key, node);
        append(node);
        while (nodes.size > capacity) remove(head.key);
      },
      has: function (key) {
        return nodes.has(key);
      },
      delete: remove,
      oldestKey: function () {
        return head === null ? undefined : head.key;
      },
      clear: function () {
        nodes.clear();
        head = null;
        tail = null;
      },
      get size() {
        return nodes.size;
      },
    };
  }

  ns.createLruCache = createLruCache;
})();
