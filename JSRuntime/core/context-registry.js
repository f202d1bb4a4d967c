// core/context-registry.js
// Contract: `__optimization.createContextRegistry({capacity?, idleTtlMs?})` → the stateful
// optimization-context registry. `register(context)` stores the context under a fresh
// `host.randomUUID()` (every call a new id) and returns the id; `lookup(id)` returns the context or
// undefined and counts as an access; `clear()`; `size` (getter). Defaults: capacity 1000 (when
// full, the least recently accessed context is evicted to make room) and idle TTL 1 800 000 ms
// (on every register/lookup, contexts last accessed MORE than the TTL ago by `host.now()` are
// pruned: 30:00.000 after the last access a context is still there, at 30:00.001 it is gone).
// `registerAs(id, context, at)` stores a context under an id the host drew itself, as if
// `register` had run at time `at` (the host defers registrations of answers it cached; it replays
// them in order, before any other call, so the registry ends up exactly as eager registration
// would have left it).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/context-registry.js', {
    provides: ['createContextRegistry'],
    uses: ['createLruCache', 'host'],
  });
  var host = ns.host;

  var DEFAULT_CAPACITY = 1000;
  var DEFAULT_IDLE_TTL_MS = 1800000;

  function createContextRegistry(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var capacity = settings.capacity === undefined ? DEFAULT_CAPACITY : settings.capacity;
    var idleTtlMs = settings.idleTtlMs === undefined ? DEFAULT_IDLE_TTL_MS : settings.idleTtlMs;
    if (typeof idleTtlMs !== 'number' || !(idleTtlMs >= 0)) throw new RangeError('idleTtlMs must be a non-negative number.');
    // id → {context, lastAccess}; LRU order = access order, so pruning stops at the first
    // (oldest) record that is still fresh.
    var records = ns.createLruCache(capacity);

    function prune(now) {
      for (var id = records.oldestKey(); id !== undefined; id = records.oldestKey()) {
        if (now - records.peek(id).lastAccess <= idleTtlMs) return;
        records.delete(id);
      }
    }

    function register(context) {
      var now = host.now();
      prune(now);
      var id = host.randomUUID();
      store(id, context, now);
      return id;
    }

    function registerAs(id, context, at) {
      if (typeof id !== 'string' || id.length === 0) throw new TypeError('registerAs id must be a non-empty string.');
      if (typeof at !== 'number' || !isFinite(at)) throw new TypeError('registerAs time must be a finite number.');
      prune(at);
      store(id, context, at);
    }

    function store(id, context, now) {
      records.delete(id);
      records.set(id, { context: context, lastAccess: now });
    }

    function lookup(id) {
      var now = host.now();
      prune(now);
      var record = records.get(id);
      if (record === undefined) return undefined;
      record.lastAccess = now;
      return record.context;
    }

    return {
      register: register,
      registerAs: registerAs,
      lookup: lookup,
      clear: function () {
        records.clear();
      },
      get size() {
        return records.size;
      },
    };
  }

  ns.createContextRegistry = createContextRegistry;
})();
