// core/state-interceptors.js
// Contract: the state interceptor hook (preview overrides use it: core/preview-overrides.js).
//
// State interceptors:
//   __optimization.stateInterceptors = {add(fn) → remove(), remove(fn), clear(), size(),
//       apply(data) → data}   one registry per JS runtime (one core instance at a time).
//   __optimization.applyInterceptors(data) → data   = stateInterceptors.apply(data).
//   __optimization.createStateInterceptorRegistry() → a separate registry (tests).
//   apply(data): `data` holds any of {profile, selectedOptimizations, changes} (the Experience
//   response's data renamed: experiences → selectedOptimizations). Each interceptor, in
//   registration order, receives a deep copy of the accumulated value and returns a possibly
//   sparse object: a key PRESENT in the return (even undefined) replaces the accumulated value,
//   an absent key keeps it; a non-object return is ignored, a throwing interceptor is logged and
//   skipped. Returns the accumulated object (only keys that were present somewhere).
//   THE DELIVERY CODE MUST CALL applyInterceptors(data) on every successful Experience response
//   BEFORE writing profile/selectedOptimizations/changes to the state (the caller of the event
//   method still receives the raw data). The override manager captures its baseline there.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/state-interceptors.js', {
    provides: ['applyInterceptors', 'createStateInterceptorRegistry', 'stateInterceptors'],
    uses: ['cloneJSON', 'host'],
  });
  var host = ns.host;
  var cloneJSON = ns.cloneJSON;

  var hasOwn = Object.prototype.hasOwnProperty;
  var DATA_KEYS = ['profile', 'selectedOptimizations', 'changes'];

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function createInterceptorRegistry() {
    var interceptors = [];

    function remove(fn) {
      var at = interceptors.indexOf(fn);
      if (at !== -1) interceptors.splice(at, 1);
    }

    function add(fn) {
      if (typeof fn !== 'function') throw new TypeError('A state interceptor must be a function.');
      interceptors.push(fn);
      return function () {
        remove(fn);
      };
    }

    function apply(data) {
      var accumulated = {};
      if (isRecord(data)) {
        DATA_KEYS.forEach(function (key) {
          if (hasOwn.call(data, key)) accumulated[key] = data[key];
        });
      }
      interceptors.slice().forEach(function (interceptor) {
        var result;
        try {
          result = interceptor(cloneJSON(accumulated));
        } catch (error) {
          host.log('error', 'A state interceptor threw: ' + messageOf(error));
          return;
        }
        if (!isRecord(result)) return;
        DATA_KEYS.forEach(function (key) {
          if (hasOwn.call(result, key)) accumulated[key] = result[key];
        });
      });
      return accumulated;
    }

    return {
      add: add,
      remove: remove,
      clear: function () {
        interceptors = [];
      },
      size: function () {
        return interceptors.length;
      },
      apply: apply,
    };
  }

  ns.createStateInterceptorRegistry = createInterceptorRegistry;
  ns.stateInterceptors = createInterceptorRegistry();
  ns.applyInterceptors = function (data) {
    return ns.stateInterceptors.apply(data);
  };
})();
