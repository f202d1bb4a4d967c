// core/screen-tracker.js
// Contract: `__optimization.createCurrentStateTracker()` → the de-duplication behind the
// bridge's `trackCurrentScreen`: a state (the current screen, keyed by
// `routeKey ?? name`) is emitted only when it differs from the last ACCEPTED one.
//   track(key, emit, isAllowed?) → result | Promise<result>
//       Skips with {accepted: false, attempted: false} — without calling emit — when
//       isAllowed() returns false, when `key` equals the last accepted key, or while an emission
//       for the same key is in flight. Otherwise calls emit(); its result (a value or a promise
//       of {accepted, …}) is returned as is. The key is remembered only when the result has
//       accepted === true; a rejected or not-accepted emission is retried on the next call.
//       Any value, `undefined` included, is a valid key (compared with Object.is).
//   reset()      forgets the accepted key and in-flight keys.
//   hasAccepted(key) → boolean
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/screen-tracker.js', {
    provides: ['createCurrentStateTracker'],
  });

  function isThenable(value) {
    return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
  }

  function createCurrentStateTracker() {
    var hasKey = false;
    var acceptedKey;
    var inFlight = [];
    var generation = 0;

    function hasAccepted(key) {
      return hasKey && Object.is(acceptedKey, key);
    }

    function isInFlight(key) {
      for (var i = 0; i < inFlight.length; i++) if (Object.is(inFlight[i], key)) return true;
      return false;
    }

    function remember(key, result) {
      if (result !== null && typeof result === 'object' && result.accepted === true) {
        hasKey = true;
        acceptedKey = key;
      }
    }

    function track(key, emit, isAllowed) {
      if (typeof isAllowed === 'function' && !isAllowed()) return { accepted: false, attempted: false };
      if (hasAccepted(key) || isInFlight(key)) return { accepted: false, attempted: false };
      var result = emit();
      if (!isThenable(result)) {
        remember(key, result);
        return result;
      }
      var started = generation;
      inFlight.push(key);
      function finish() {
        if (started !== generation) return;
        for (var i = 0; i < inFlight.length; i++) {
          if (Object.is(inFlight[i], key)) {
            inFlight.splice(i, 1);
            break;
          }
        }
      }
      return result.then(function (value) {
        finish();
        if (started === generation) remember(key, value);
        return value;
      }, function (error) {
        finish();
        throw error;
      });
    }

    function reset() {
      hasKey = false;
      acceptedKey = undefined;
      inFlight = [];
      generation++;
    }

    return { track: track, reset: reset, hasAccepted: hasAccepted };
  }

  ns.createCurrentStateTracker = createCurrentStateTracker;
})();
