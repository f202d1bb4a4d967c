// bridge/bridge.js
// Contract: owns the bridge lifecycle (initialize, destroy, getState) and installs
// `globalThis.__bridge` from the parts (bridge-shared, -config, -resolution, -events, -delivery,
// -features; see bridge-shared.js): the adapter the Swift host calls (JSRuntime/README.md
// "The __bridge contract"). Every own key of `__bridge` is a function. Sync methods:
//   initialize(config)     destroys a previous instance, validates `config` (throws an Error whose
//                          message names the key), sets the log threshold, sizes the prepared-entry
//                          and prepared-selection LRUs (`entryCacheSize`, default 1000), builds the
//                          state from `config.defaults` and pushes it to `__nativeOnStateChange`.
//   destroy()              idempotent; clears contexts and prepared caches, resets the log level.
//   getState()             JSON BridgeState, also before initialize.
//   resolveOptimizedEntry(baseline, selections?)   JSON {entry, selectedOptimization?,
//                          optimizationContextId?, isEmptyVariant?: true}; `selections` undefined ⇒
//                          current state selections, null/[] ⇒ none; before initialize {entry}.
//   prepareEntry(key, document, entryId?) / prepareSelections(key, selections)
//   resolvePrepared(entryKey, selectionsKey)        "<sel>|<exp>|<var>|<empty>|<contextId>", "?e",
//                          "?s"; selectionsKey null/undefined ⇒ nothing selected. Hot path: no JSON,
//                          no allocation beyond the result string and the context registration.
//   registerDeferred({pairs, records})   registers, in order and at their own times, the contexts
//                          of answers the host served from its cache under ids it drew; '' or
//                          "?e<pair>"/"?s<pair>" (prepare that pair's document, call again).
// Async plumbing: `__optimization.settle(requestId, promiseOrValue)` reports through
// `__nativeSettle(requestId, ok, json)` exactly once (see its comment).
// Consent and events, see "consent and events" below:
//   async (payload, requestId): identify, page, screen, trackCurrentScreen, track, trackView,
//                          trackClick — validated, settle with EmissionResult
//                          JSON {"accepted": bool, "data"?}; trackClick settles {"accepted": bool}
//                          too (not "null", so the host learns whether it was blocked).
//   sync: consent(input), hasConsent(method) (false before initialize), setOnline(bool) (also
//                          before initialize; records the network in the state: the host's
//                          queues follow the network themselves).
// Delivery (bridge/bridge-delivery.js): `api` of the config configures the Experience client
//   (core/experience-api.js). The host queues and sends both paths: Experience events through
//   __nativeExperienceAccept/Purge (bridge/experience-handoff.js), Insights events through
//   __nativeInsightsAccept/Profile/Purge (bridge/insights-handoff.js). For each Experience flight
//   the host calls experienceRequest(eventsJSON) → JSON {url, method, headers, body} and then
//   experienceAnswered(answerJSON); releaseExperienceWaiters(ticketsJSON) ends senders' waits.
//   push-backs: __nativeOnEventEmitted(json) per accepted event, __nativeOnEventBlocked(json) once
//                          per blocked call ({"reason":"consent","method","args":[payload]},
//                          trackCurrentScreen included), __nativeOnStateChange on every consent
//                          change.
// Flags, merge tags, preview overrides, locale, reset,
// see "flags, merge tags, preview overrides, locale and reset" below. All sync:
//   getFlag(name) → JSON ("null" before initialize / when absent), observeFlag(subId, name),
//   unobserveFlag(subId) (pushes __nativeOnFlagValueChanged(subId, json), first synchronously),
//   getMergeTagValue(entry, profile?) → string or null, getProfile() → JSON or null,
//   setLocale(locale) → normalised locale (throws on invalid; null before initialize), reset(),
//   overrideAudience(audId, qualified, expIds), overrideVariant(expId, i),
//   resetVariantOverride(expId), resetAudienceOverride(audId), resetAllOverrides(),
//   loadDefinitions(audiences, experiences) → JSON, getPreviewState() → JSON or "null",
//   setPreviewPanelOpen(bool); push-back __nativeOnOverridesChanged(previewStateJSON).
//   parseExperienceAnswer(text, apiVersion) → JSON {profile, selectedOptimizations, changes,
//                          ignoredChanges} (also before initialize; throws on an invalid answer).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge.js', {
    uses: [
      'bridgeConfig', 'bridgeDelivery', 'bridgeEvents', 'bridgeFeatures', 'bridgeResolution',
      'bridgeShared', 'createContextRegistry', 'createStateStore', 'guards', 'host',
      'resolveStatefulDefaults',
    ],
    globals: ['__bridge'],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var resolution = ns.bridgeResolution;
  var events = ns.bridgeEvents;
  var features = ns.bridgeFeatures;
  var delivery = ns.bridgeDelivery;

  // ---- lifecycle --------------------------------------------------------------------------------

  function destroy() {
    if (shared.current !== null) {
      var snapshot = shared.current.state.get();
      shared.carried = { online: snapshot.online, experienceRequestState: snapshot.experienceRequestState };
      delivery.closeDelivery(shared.current);
      shared.current.unsubscribe();
      features.teardownFeatures(shared.current);
      shared.current.contexts.clear();
      shared.current = null;
    }
    resolution.resetPreparedCaches(ns.bridgeConfig.DEFAULT_ENTRY_CACHE_SIZE);
    host.setLogLevel(host.DEFAULT_LOG_LEVEL);
  }

  function initialize(config) {
    destroy();
    var settings = ns.bridgeConfig.read(config);
    var defaults = ns.resolveStatefulDefaults(settings.defaults, settings.persisted);
    host.setLogLevel(settings.logLevel);
    resolution.resetPreparedCaches(settings.entryCacheSize);
    var state = ns.createStateStore({
      profile: defaults.profile,
      selectedOptimizations: defaults.selectedOptimizations,
      changes: defaults.changes,
      consent: defaults.consent,
      persistenceConsent: defaults.persistenceConsent,
      locale: settings.locale,
      allowedEventTypes: settings.allowedEventTypes,
      online: shared.carried.online,
      experienceRequestState: shared.carried.experienceRequestState,
    });
    shared.current = {
      config: settings,
      state: state,
      contexts: ns.createContextRegistry(),
      anonymousId: defaults.anonymousId,
      unsubscribe: state.subscribe(shared.pushState),
    };
    events.installEvents(shared.current);
    features.installFeatures(shared.current);
    shared.pushState(state.get());
  }

  function getState() {
    var snapshot = shared.current !== null
      ? shared.current.state.get()
      : ns.createStateStore({ online: shared.carried.online, experienceRequestState: shared.carried.experienceRequestState }).get();
    return JSON.stringify(shared.bridgeState(snapshot));
  }

  globalThis.__bridge = {
    initialize: initialize,
    destroy: destroy,
    getState: getState,
    resolveOptimizedEntry: resolution.resolveOptimizedEntry,
    prepareEntry: resolution.prepareEntry,
    prepareSelections: resolution.prepareSelections,
    adoptEntry: resolution.adoptEntry,
    adoptSelections: resolution.adoptSelections,
    resolvePrepared: resolution.resolvePrepared,
    registerDeferred: resolution.registerDeferred,
    trackCurrentScreen: events.trackCurrentScreen,
    consent: events.consent,
    hasConsent: events.hasConsent,
    setOnline: events.setOnline,
    experienceRequest: delivery.experienceRequest,
    experienceAnswered: delivery.experienceAnswered,
    releaseExperienceWaiters: delivery.releaseExperienceWaiters,
    getFlag: features.getFlag,
    observeFlag: features.observeFlag,
    unobserveFlag: features.unobserveFlag,
    getMergeTagValue: features.getMergeTagValue,
    getProfile: features.getProfile,
    setLocale: features.setLocale,
    reset: features.reset,
    overrideAudience: features.overrideAudience,
    overrideVariant: features.overrideVariant,
    resetVariantOverride: features.resetVariantOverride,
    resetAudienceOverride: features.resetAudienceOverride,
    resetAllOverrides: features.resetAllOverrides,
    setPreviewPanelOpen: features.setPreviewPanelOpen,
    loadDefinitions: features.loadDefinitions,
    getPreviewState: features.getPreviewState,
    parseExperienceAnswer: features.parseExperienceAnswer,
  };
  // The event calls of the catalog (core/payload-rules.js EVENT_METHODS).
  Object.keys(events.methods).forEach(function (method) {
    globalThis.__bridge[method] = events.methods[method];
  });
})();
