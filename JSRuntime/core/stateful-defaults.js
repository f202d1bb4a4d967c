// core/stateful-defaults.js
// Contract: `__optimization.resolveStatefulDefaults(configured, persisted)` — the start-up
// precedence between what the application configured and what a host persisted
// (configured values win; stored continuity only with persistence consent):
//   consent            = configured.consent ?? persisted.consent
//   persistenceConsent = configured.persistenceConsent ?? configured.consent ?? persisted.persistenceConsent
//                        (a persisted event consent alone never implies persistence consent)
//   profile, changes, selectedOptimizations = configured value ?? (persisted value only when the
//                        resolved persistenceConsent === true)
//   anonymousId        = configured.anonymousId ?? (persisted.anonymousId only when persistence
//                        consent === true)
// Both arguments are plain objects whose keys may be missing (undefined = not given).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/stateful-defaults.js', {
    provides: ['resolveStatefulDefaults'],
  });

  function given(value) {
    return value !== undefined && value !== null;
  }

  function pick(configured, persisted, canLoad) {
    if (given(configured)) return configured;
    return canLoad && given(persisted) ? persisted : undefined;
  }

  ns.resolveStatefulDefaults = function resolveStatefulDefaults(configured, persisted) {
    var c = configured || {};
    var p = persisted || {};
    var persistenceConsent = given(c.persistenceConsent) ? c.persistenceConsent
      : given(c.consent) ? c.consent : p.persistenceConsent;
    var canLoad = persistenceConsent === true;
    return {
      consent: given(c.consent) ? c.consent : p.consent,
      persistenceConsent: persistenceConsent,
      canLoadPersistedContinuity: canLoad,
      profile: pick(c.profile, p.profile, canLoad),
      changes: pick(c.changes, p.changes, canLoad),
      selectedOptimizations: pick(c.selectedOptimizations, p.selectedOptimizations, canLoad),
      anonymousId: pick(c.anonymousId, p.anonymousId, canLoad),
    };
  };
})();
