// bridge/bridge-shared.js
// Contract: what every part of the stateful bridge shares. The bridge is split by concern, each
// file one job: bridge-shared (this), bridge-config (the initialize
// config), bridge-resolution (prepared entries and selections, resolution), bridge-events
// (consent and event methods), bridge-delivery (the Experience queue, the Insights link and flush),
// bridge-features (flags, merge tags, preview overrides, locale, reset) and bridge.js (lifecycle;
// installs `globalThis.__bridge`, whose contract is JSRuntime/bridge-contract.json).
//   __optimization.bridgeShared = {
//     current            the running instance, null before initialize / after destroy
//     carried            {online, experienceRequestState}: what a new instance inherits
//     NOT_INITIALIZED    the message of async calls made before initialize
//     messageOf(error), callHost(name, args) (an optional host push-back; a missing one is
//     skipped, a throwing one logged), absent(value), isString(value), isBoolean(value),
//     orNull(value), bridgeState(snapshot) → BridgeState, pushState(snapshot) }
// The async plumbing (settle, settleReturning, messageOf) is core/settle.js, shared with the
// service face.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-shared.js', {
    provides: ['bridgeShared'],
    uses: ['host', 'messageOf'],
  });
  var host = ns.host;
  var messageOf = ns.messageOf;

  var shared = {
    current: null,
    // `online` and `experienceRequestState` are not reset by a new instance.
    carried: { online: true, experienceRequestState: { status: 'idle' } },
    NOT_INITIALIZED: 'SDK not initialized. Call initialize() first.',
  };

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
