// bridge/bridge-shared.js
// Contract: what every part of the stateful bridge shares. The bridge is split by concern, each
// file one job, loaded in this order: bridge-shared (this), bridge-config (the initialize
// config), bridge-resolution (prepared entries and selections, resolution), bridge-events
// (consent and event methods), bridge-delivery (Experience/Insights queues and flush),
// bridge-features (flags, merge tags, preview overrides, locale, reset) and bridge.js (lifecycle;
// installs `globalThis.__bridge`, whose contract is in its header and JSRuntime/README.md).
//   __optimization.bridgeShared = {
//     current            the running instance, null before initialize / after destroy
//     carried            {online, experienceRequestState}: what a new instance inherits
//     NOT_INITIALIZED    the message of async calls made before initialize
//     messageOf(error), callHost(name, args) (an optional host push-back; a missing one is
//     skipped, a throwing one logged), absent(value), isString(value), isBoolean(value),
//     orNull(value), bridgeState(snapshot) → BridgeState, pushState(snapshot) }
//   __optimization.settle(requestId, promiseOrValue): reports the outcome of an async bridge call
//     through `__nativeSettle(requestId, ok, json)` exactly once (see its comment).
//   __optimization.settleReturning(requestId, promiseOrValue, emitted) → string | undefined: the
//     same, except that an outcome known now is RETURNED as the text `[ok, value, emitted]` (the
//     async method returns it to the host: no second crossing) together with the events the call
//     emitted; a thenable settles later through `__nativeSettle` (see its comment).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-shared.js', {
    provides: ['bridgeShared', 'settle', 'settleReturning'],
    uses: ['host'],
  });
  var host = ns.host;

  var shared = {
    current: null,
    // `online` and `experienceRequestState` are not reset by a new instance.
    carried: { online: true, experienceRequestState: { status: 'idle' } },
    NOT_INITIALIZED: 'SDK not initialized. Call initialize() first.',
  };

  function messageOf(error) {
    if (error instanceof Error) return error.message;
    if (typeof error === 'string') return error;
    try {
      return JSON.stringify(error) || String(error);
    } catch (stringifyError) {
      return String(error);
    }
  }

  // Calls an optional host push-back callback; a missing one is skipped, a throwing one logged.
  function callHost(name, args) {
    var fn = globalThis[name];
    if (typeof fn !== 'function') return;
    try {
      fn.apply(undefined, args);
    } catch (error) {
      host.log('error', name + ' threw: ' + messageOf(error));
    }
  }

  function absent(value) {
    return value === undefined || value === null;
  }


  function isString(value) {
    return typeof value === 'string';
  }

  function isBoolean(value) {
    return typeof value === 'boolean';
  }


  function orNull(value) {
    return value === undefined ? null : value;
  }

  // BridgeState; `consent`/`persistenceConsent` are omitted while undefined.
  function bridgeState(snapshot) {
    return {
      profile: orNull(snapshot.profile),
      consent: snapshot.consent,
      persistenceConsent: snapshot.persistenceConsent,
      canOptimize: snapshot.canOptimize,
      optimizationPossible: snapshot.optimizationPossible,
      experienceRequestState: snapshot.experienceRequestState,
      changes: orNull(snapshot.changes),
      locale: orNull(snapshot.locale),
      selectedOptimizations: orNull(snapshot.selectedOptimizations),
    };
  }

  function pushState(snapshot) {
    callHost('__nativeOnStateChange', [JSON.stringify(bridgeState(snapshot))]);
  }

  // ---- async plumbing ---------------------------------------------------------------------------

  // settle(requestId, promiseOrValue): reports the outcome of an async bridge call through
  // `__nativeSettle(requestId, ok, json)` exactly once. A thenable settles when it does (fulfilled:
  // ok true with JSON of the value, undefined as "null"; rejected: ok false with the error
  // message). An Error instance settles synchronously with ok false (validation errors); any other
  // value settles synchronously with ok true. A value that cannot be serialized settles ok false.
  // A throwing `__nativeSettle` is logged, never retried.
  function settle(requestId, promiseOrValue) {
    var settled = false;
    function finish(ok, text) {
      if (settled) return;
      settled = true;
      var fn = globalThis.__nativeSettle;
      if (typeof fn !== 'function') {
        host.log('error', 'Cannot settle request ' + requestId + ': __nativeSettle is not installed.');
        return;
      }
      try {
        fn(requestId, ok, text);
      } catch (error) {
        host.log('error', '__nativeSettle threw: ' + messageOf(error));
      }
    }
    function fulfil(value) {
      var text;
      try {
        text = JSON.stringify(value === undefined ? null : value);
      } catch (error) {
        finish(false, messageOf(error));
        return;
      }
      finish(true, text === undefined ? 'null' : text);
    }
    function reject(error) {
      finish(false, messageOf(error));
    }
    if (promiseOrValue !== null && (typeof promiseOrValue === 'object' || typeof promiseOrValue === 'function') &&
      typeof promiseOrValue.then === 'function') {
      try {
        promiseOrValue.then(fulfil, reject);
      } catch (error) {
        reject(error);
      }
    } else if (promiseOrValue instanceof Error) {
      reject(promiseOrValue);
    } else {
      fulfil(promiseOrValue);
    }
  }

  // settleReturning(requestId, promiseOrValue, emitted): the outcome of an async call that is
  // known now (a plain value or an Error) comes back as the JSON text `[true, value, emitted]` or
  // `[false, message, emitted]`, which the async method returns to the host (one crossing, one
  // serialization for the outcome and the events it emitted); `emitted` is the array of events
  // the call published, or undefined. A thenable is handed to settle() and undefined is returned
  // (the caller publishes `emitted` itself). When the combined text cannot be serialized (an
  // emitted event carries a cyclic context) the events are left to the caller: the return value
  // is then `[ok, value]` and `onUnsent(emitted)` publishes them.
  function settleReturning(requestId, promiseOrValue, emitted, onUnsent) {
    if (promiseOrValue !== null && (typeof promiseOrValue === 'object' || typeof promiseOrValue === 'function') &&
      typeof promiseOrValue.then === 'function') {
      if (emitted !== undefined && emitted.length > 0 && onUnsent) onUnsent(emitted);
      settle(requestId, promiseOrValue);
      return undefined;
    }
    var ok = !(promiseOrValue instanceof Error);
    var value = ok ? (promiseOrValue === undefined ? null : promiseOrValue) : messageOf(promiseOrValue);
    var events = emitted !== undefined && emitted.length > 0 ? emitted : undefined;
    try {
      return JSON.stringify(events === undefined ? [ok, value] : [ok, value, events]);
    } catch (error) {
      if (events !== undefined && onUnsent) onUnsent(events);
    }
    try {
      return JSON.stringify([ok, value]);
    } catch (error) {
      return JSON.stringify([false, messageOf(error)]);
    }
  }

  ns.settle = settle;
  ns.settleReturning = settleReturning;

  shared.messageOf = messageOf;
  shared.callHost = callHost;
  shared.absent = absent;
  shared.isString = isString;
  shared.isBoolean = isBoolean;
  shared.orNull = orNull;
  shared.bridgeState = bridgeState;
  shared.pushState = pushState;
  ns.bridgeShared = shared;
})();
