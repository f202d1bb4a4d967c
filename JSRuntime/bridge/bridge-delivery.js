// bridge/bridge-delivery.js
// Contract: `__optimization.bridgeDelivery` — the delivery side of the stateful bridge
// (JSRuntime/README.md "Delivery"). The Swift host queues and sends both paths; this file wires
// the visitor's state to them:
//   installDelivery(instance)   the Experience API client, the Experience link
//                               (bridge/experience-link.js) and the Insights link
//                               (bridge/insights-link.js) of a new instance
//   closeDelivery(instance)     destroy(): stops following the state
//   and the functions of the topic "Delivery" of `__bridge` in JSRuntime/bridge-contract.json
//   (the host's Experience flights), which bridge.js puts on `__bridge`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-delivery.js', {
    provides: ['bridgeDelivery'],
    uses: ['bridgeShared', 'createExperienceApi', 'createExperienceLink', 'createInsightsLink', 'experienceApi', 'guards'],
  });
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var isString = shared.isString;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;

  // Builds the Experience API client and the two links of `target`.
  function installDelivery(target) {
    var state = target.state;
    var settings = target.config;
    var api = settings.api || {};
    target.experienceApi = ns.createExperienceApi({
      clientId: settings.clientId,
      environment: settings.environment,
      apiVersion: settings.apiVersion,
      baseUrl: api.experienceBaseUrl,
      enabledFeatures: api.enabledFeatures,
      preflight: api.preflight,
      getLocale: function () {
        return state.get().locale;
      },
    });
    target.experienceQueue = ns.createExperienceLink({
      api: target.experienceApi,
      getProfileId: function () {
        return upsertProfileId(target);
      },
      applyData: function (data) {
        ns.experienceApi.applyOptimizationData(state, data);
      },
      setRequestState: function (requestState) {
        state.set({ experienceRequestState: requestState });
      },
    });
    target.insightsQueue = ns.createInsightsLink({
      getProfile: function () {
        return state.get().profile;
      },
    });
    // The anonymous id follows the profile while persistence consent is true and is
    // forgotten when it becomes false; held Insights events join the first profile.
    var sync = function (snapshot) {
      if (snapshot.persistenceConsent === false) target.anonymousId = undefined;
      else if (snapshot.persistenceConsent === true && guards.isRecord(snapshot.profile) &&
        isString(snapshot.profile.id) && snapshot.profile.id.length > 0) target.anonymousId = snapshot.profile.id;
      target.insightsQueue.profileChanged();
    };
    target.unsubscribeDelivery = state.subscribe(sync);
    sync(state.get());
  }

  // The profile id sent: (persistenceConsent === true ? anonymous id : none) ?? profile.id; "" ⇒ none.
  function upsertProfileId(target) {
    var snapshot = target.state.get();
    var anonymous = snapshot.persistenceConsent === true ? target.anonymousId : undefined;
    if (isString(anonymous) && anonymous.length > 0) return anonymous;
    var profile = snapshot.profile;
    return guards.isRecord(profile) && isString(profile.id) && profile.id.length > 0 ? profile.id : undefined;
  }

  function closeDelivery(target) {
    if (target.unsubscribeDelivery) target.unsubscribeDelivery();
  }

  function experienceRequest(eventsJSON) {
    if (shared.current === null) throw new Error(NOT_INITIALIZED);
    return shared.current.experienceQueue.request(eventsJSON);
  }

  function experienceAnswered(answerJSON) {
    if (shared.current === null) return;
    shared.current.experienceQueue.answered(JSON.parse(answerJSON));
  }

  function releaseExperienceWaiters(ticketsJSON) {
    if (shared.current === null) return;
    shared.current.experienceQueue.release(JSON.parse(ticketsJSON));
  }

  ns.bridgeDelivery = {
    installDelivery: installDelivery,
    closeDelivery: closeDelivery,
    experienceRequest: experienceRequest,
    experienceAnswered: experienceAnswered,
    releaseExperienceWaiters: releaseExperienceWaiters,
  };
})();
