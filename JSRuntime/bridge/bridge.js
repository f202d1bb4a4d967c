// bridge/bridge.js
// Contract: owns the bridge lifecycle (initialize, destroy, getState) and installs
// `globalThis.__bridge` from the parts (bridge-shared, -config, -resolution, -events, -delivery,
// -features; see bridge-shared.js): the adapter the Swift host calls. Every own key of `__bridge`
// is a function, and `__bridge` is exactly the object `__bridge` of JSRuntime/bridge-contract.json
// (each function's parameters and behaviour, by topic; JSRuntime/README.md shows them): the Node
// suite and the Swift contract tests fail when a function is missing, unlisted or has another
// arity. The async plumbing (`settle`, `settleReturning`) is core/settle.js's; the push-backs go
// through bridgeShared.callHost.
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
