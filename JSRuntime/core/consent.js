// core/consent.js
// Contract: `__optimization.consent` — the consent model.
//   hasEventConsent(method, consent, allowedEventTypes) → boolean   the consent gate:
//       consent === true allows everything; otherwise the allow-list decides: trackView needs
//       "component", trackFlagView "flag" or "component", trackClick "component_click", trackHover
//       "component_hover", trackNodeView "exo_node_view" or "component", trackNodeClick
//       "exo_node_click" or "component_click", trackNodeHover "exo_node_hover" or
//       "component_hover", any other method its own name. `false` and `undefined` gate alike; a
//       missing (non-array) list allows nothing.
//   readConsentInput(input) → {consent?, persistenceConsent?}   a boolean sets both keys; an
//       object {events?, persistence?} sets only the keys it has (undefined/null count as
//       absent). Anything else (or a non-boolean value) throws a TypeError.
//   logBlocked(method, payload)   the log lines of a blocked call: data-free at "warn", the payload
//       only at "debug".
//   createConsentController({state, onPurge}) → {
//       set(input)       applies readConsentInput(input) to the state store in ONE batch (one
//                        state notification); when the event consent WRITTEN is false
//                        (`false` or `{events: false}`) calls onPurge() inside the same batch
//                        (before observers are notified); it must empty every event queue.
//                        Returns the new {consent, persistenceConsent}.
//       hasConsent(method) → boolean   hasEventConsent with the state's consent and allow-list.
//       current() → {consent, persistenceConsent} }
// The state store (core/state.js) keeps the values; initial values come from the bridge's
// `initialize` (`defaults.consent`, `defaults.persistenceConsent ?? defaults.consent`).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/consent.js', {
    provides: ['consent'],
    uses: ['host'],
  });

  // Methods whose allow-list entry is not their own name.
  var GATE_TYPES = {
    trackView: ['component'],
    trackFlagView: ['flag', 'component'],
    trackClick: ['component_click'],
    trackHover: ['component_hover'],
    // The ExO node events: their wire type, or the component selector of the same interaction.
    trackNodeView: ['exo_node_view', 'component'],
    trackNodeClick: ['exo_node_click', 'component_click'],
    trackNodeHover: ['exo_node_hover', 'component_hover'],
  };

  function hasEventConsent(method, consent, allowedEventTypes) {
    if (consent === true) return true;
    if (!Array.isArray(allowedEventTypes)) return false;
    var needed = Object.prototype.hasOwnProperty.call(GATE_TYPES, method) ? GATE_TYPES[method] : [method];
    for (var i = 0; i < needed.length; i++) {
      if (allowedEventTypes.indexOf(needed[i]) !== -1) return true;
    }
    return false;
  }

  var INPUT_ERROR = 'consent input must be a boolean or an object {events?: boolean, persistence?: boolean}.';

  function readFlag(input, key) {
    var value = input[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') throw new TypeError('consent "' + key + '" must be a boolean when provided.');
    return value;
  }

  function readConsentInput(input) {
    if (typeof input === 'boolean') return { consent: input, persistenceConsent: input };
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new TypeError(INPUT_ERROR);
    var patch = {};
    var events = readFlag(input, 'events');
    var persistence = readFlag(input, 'persistence');
    if (events !== undefined) patch.consent = events;
    if (persistence !== undefined) patch.persistenceConsent = persistence;
    return patch;
  }

  function createConsentController(options) {
    var state = options.state;
    var onPurge = typeof options.onPurge === 'function' ? options.onPurge : function () {};

    function current() {
      var snapshot = state.get();
      return { consent: snapshot.consent, persistenceConsent: snapshot.persistenceConsent };
    }

    function set(input) {
      var patch = readConsentInput(input);
      // Purge inside the batch, so observers of the state change already see empty queues.
      state.batch(function () {
        state.set(patch);
        if (patch.consent === false) onPurge();
      });
      return current();
    }

    function hasConsent(method) {
      var snapshot = state.get();
      return hasEventConsent(String(method), snapshot.consent, snapshot.allowedEventTypes);
    }

    return { set: set, hasConsent: hasConsent, current: current };
  }

  // Logs a blocked call: a data-free line at "warn", the payload only at "debug" (visitor data
  // never goes above debug).
  function logBlocked(method, payload) {
    var host = ns.host;
    host.log('warn', 'Event "' + method + '" was blocked due to lack of consent.');
    if (!host.isLogEnabled('debug')) return;
    var text;
    try {
      text = JSON.stringify([payload]);
    } catch (error) {
      text = '[unserializable]';
    }
    host.log('debug', 'Blocked event "' + method + '" payload: ' + text);
  }

  ns.consent = {
    hasEventConsent: hasEventConsent,
    logBlocked: logBlocked,
    readConsentInput: readConsentInput,
    createConsentController: createConsentController,
  };
})();
