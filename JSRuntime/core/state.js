// core/state.js
// Contract: `__optimization.createStateStore(initial?)` → the stateful core's state.
// Cells: profile, selectedOptimizations, changes, consent, persistenceConsent, locale (all
// undefined by default), experienceRequestState ({status: "idle"}), online (true) and
// allowedEventTypes (["identify", "screen"]). Other keys may be added freely.
// Derived (read-only): canOptimize = selectedOptimizations !== undefined; optimizationPossible =
// consent === true OR allowedEventTypes contains identify/page/screen/track/group/alias/component.
//   get()            the current snapshot: a frozen object, replaced (never mutated) on change, so
//                    it is cheap to read and safe to keep.
//   set(patch)       applies the keys of `patch` (compared with Object.is); if anything changed,
//                    subscribers are notified once. Setting a derived key throws a TypeError.
//   batch(fn)        runs fn; all sets inside it notify once, after the outermost batch.
//   subscribe(fn)    fn(snapshot) after every notifying change (not immediately); returns an
//                    unsubscribe function. A throwing subscriber is logged at "error" and does not
//                    stop the others.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/state.js', {
    provides: ['DEFAULT_ALLOWED_EVENT_TYPES', 'createStateStore'],
    uses: ['host'],
  });
  var host = ns.host;

  var DEFAULT_ALLOWED_EVENT_TYPES = ['identify', 'screen'];
  var OPTIMIZATION_EVENT_TYPES = ['identify', 'page', 'screen', 'track', 'group', 'alias', 'component'];
  var DERIVED_KEYS = { canOptimize: true, optimizationPossible: true };

  function isOptimizationPossible(consent, allowedEventTypes) {
    if (consent === true) return true;
    if (!Array.isArray(allowedEventTypes)) return false;
    for (var i = 0; i < OPTIMIZATION_EVENT_TYPES.length; i++) {
      if (allowedEventTypes.indexOf(OPTIMIZATION_EVENT_TYPES[i]) !== -1) return true;
    }
    return false;
  }

  function derive(cells) {
    cells.canOptimize = cells.selectedOptimizations !== undefined;
    cells.optimizationPossible = isOptimizationPossible(cells.consent, cells.allowedEventTypes);
    return Object.freeze(cells);
  }

  function assertSettable(key) {
    if (DERIVED_KEYS[key] === true) throw new TypeError(key + ' is derived and cannot be set.');
  }

  function createStateStore(initial) {
    var cells = {
      profile: undefined,
      selectedOptimizations: undefined,
      changes: undefined,
      consent: undefined,
      persistenceConsent: undefined,
      locale: undefined,
      experienceRequestState: { status: 'idle' },
      online: true,
      allowedEventTypes: DEFAULT_ALLOWED_EVENT_TYPES.slice(),
    };
    if (initial !== undefined && initial !== null) {
      Object.keys(initial).forEach(function (key) {
        assertSettable(key);
        cells[key] = initial[key];
      });
    }
    var snapshot = derive(cells);
    var listeners = [];
    var batchDepth = 0;
    var pendingNotify = false;

    function notify() {
      var current = snapshot;
      listeners.slice().forEach(function (listener) {
        try {
          listener(current);
        } catch (error) {
          host.log('error', 'State subscriber threw: ' + (error instanceof Error ? error.message : String(error)));
        }
      });
    }

    function set(patch) {
      if (typeof patch !== 'object' || patch === null) throw new TypeError('State patch must be an object.');
      var next = null;
      Object.keys(patch).forEach(function (key) {
        assertSettable(key);
        if (Object.is(snapshot[key], patch[key])) return;
        if (next === null) next = Object.assign({}, snapshot);
        next[key] = patch[key];
      });
      if (next === null) return;
      snapshot = derive(next);
      if (batchDepth > 0) pendingNotify = true;
      else notify();
    }

    function batch(fn) {
      batchDepth++;
      try {
        return fn();
      } finally {
        batchDepth--;
        if (batchDepth === 0 && pendingNotify) {
          pendingNotify = false;
          notify();
        }
      }
    }

    function subscribe(listener) {
      if (typeof listener !== 'function') throw new TypeError('State subscriber must be a function.');
      listeners.push(listener);
      return function unsubscribe() {
        var at = listeners.indexOf(listener);
        if (at !== -1) listeners.splice(at, 1);
      };
    }

    return {
      get: function () {
        return snapshot;
      },
      set: set,
      batch: batch,
      subscribe: subscribe,
    };
  }

  ns.createStateStore = createStateStore;
  ns.DEFAULT_ALLOWED_EVENT_TYPES = Object.freeze(DEFAULT_ALLOWED_EVENT_TYPES.slice());
})();
