// bridge/bridge-delivery.js
// Contract: `__optimization.bridgeDelivery` — the delivery of the stateful bridge
// (JSRuntime/README.md "Delivery"):
//   installDelivery(instance)   the Experience API client and queue, wired to the instance's
//                               state and to __nativeOnQueueEvent, and the Insights handoff
//                               (bridge/insights-handoff.js: the Swift host queues and sends
//                               Insights events)
//   reconnect(instance)         offline → online: cancel the scheduled retry, force-flush Experience
//                               (the host flushes its Insights queue itself)
//   closeDelivery(instance)     destroy(): a forced best-effort Experience flush (not awaited), then
//                               no timers
//   flush(requestId) / flush(payload, requestId)   async; settles "null" once the Experience queue
//                               flushed (the host flushes Insights first)
//   queueSizes() → JSON {"experience": n}
// Durable outbox (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md), only when the host registered the natives of
// bridge/outbox-link.js: the Experience queue stores every accepted event before the accepting
// call returns (a failed store fails the call), keeps a window of the stored backlog in memory
// (queuePolicy.offlineMaxEvents), and acknowledges what leaves it for good;
//   resumeBacklog() → number   fills the window from the stored backlog (after a restart) and
//     flushes as usual (non-forced); returns the number of events loaded;
//   removeQueuedEvents(queue, messageIds, reason) → number   drops Experience events from memory
//     (an outbox bound or time to live) and reports one offlineDrop {droppedCount, droppedEvents,
//     reason}; 0 for any other queue.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-delivery.js', {
    provides: ['bridgeDelivery'],
    uses: [
      'bridgeShared', 'createExperienceApi', 'createExperienceQueue', 'createInsightsHandoff',
      'experienceApi', 'guards', 'host', 'outboxLink', 'settle',
    ],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var callHost = shared.callHost;
  var isString = shared.isString;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;


  // Builds the Experience API client and queue and the Insights handoff of `target`.
  function installDelivery(target) {
    var state = target.state;
    var settings = target.config;
    var api = settings.api || {};
    var queuePolicy = settings.queuePolicy || {};
    var isOnline = function () {
      return state.get().online !== false;
    };
    function queueEvent(queue) {
      return function (type, context) {
        // A request still in flight after destroy() reports nothing.
        if (shared.current !== target) return;
        callHost('__nativeOnQueueEvent', [JSON.stringify({ type: type, queue: queue, timestamp: host.now(), context: context })]);
      };
    }
    function runtimeCallbacks(report) {
      return {
        onFlushFailure: function (context) { report('flushFailure', context); },
        onCircuitOpen: function (context) { report('circuitOpen', context); },
        onFlushRecovered: function (context) { report('flushRecovered', context); },
      };
    }
    var experienceEvent = queueEvent('experience');
    var link = ns.outboxLink;
    var durable = link.available();
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
    target.experienceQueue = ns.createExperienceQueue({
      maxEvents: queuePolicy.offlineMaxEvents,
      onDrop: function (context) {
        experienceEvent('offlineDrop', context);
      },
      api: target.experienceApi,
      isOnline: isOnline,
      getProfileId: function () {
        return upsertProfileId(target);
      },
      onResponse: function (data) {
        ns.experienceApi.applyOptimizationData(state, data);
      },
      setRequestState: function (requestState) {
        state.set({ experienceRequestState: requestState });
      },
      onQueueEvent: experienceEvent,
      flushPolicy: queuePolicy.flush,
      callbacks: runtimeCallbacks(experienceEvent),
      outbox: durable ? link.forQueue('experience', function () { return upsertProfileId(target); }) : null,
      onRemoved: durable ? link.removedHook('experience') : null,
    });
    target.insightsQueue = ns.createInsightsHandoff({
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

  // Fills the Experience window from the stored backlog (a restart).
  function resumeBacklog() {
    if (shared.current === null) throw new Error(NOT_INITIALIZED);
    return shared.current.experienceQueue.resume();
  }

  // Drops Experience events from memory that the outbox dropped (a bound or the time to live).
  function removeQueuedEvents(queue, messageIds, reason) {
    if (shared.current === null || queue !== 'experience') return 0;
    var target = shared.current;
    var ids = Array.isArray(messageIds) ? messageIds : [];
    var gone = target.experienceQueue.removeMessages(ids);
    if (ids.length > 0) {
      callHost('__nativeOnQueueEvent', [JSON.stringify({ type: 'offlineDrop', queue: queue, timestamp: host.now(),
        context: { droppedCount: ids.length, droppedEvents: gone, reason: isString(reason) ? reason : 'outbox' } })]);
    }
    return gone.length;
  }

  // The profile id sent: (persistenceConsent === true ? anonymous id : none) ?? profile.id; "" ⇒ none.
  function upsertProfileId(target) {
    var snapshot = target.state.get();
    var anonymous = snapshot.persistenceConsent === true ? target.anonymousId : undefined;
    if (isString(anonymous) && anonymous.length > 0) return anonymous;
    var profile = snapshot.profile;
    return guards.isRecord(profile) && isString(profile.id) && profile.id.length > 0 ? profile.id : undefined;
  }

  // Going online: cancel the scheduled retry, then force-flush Experience.
  function reconnect(target) {
    target.experienceQueue.cancelScheduledRetry();
    target.experienceQueue.flush({ force: true });
  }

  // destroy(): a forced best-effort Experience flush (not awaited), then no more timers or retries.
  function closeDelivery(target) {
    if (target.unsubscribeDelivery) target.unsubscribeDelivery();
    target.experienceQueue.flush({ force: true });
    target.experienceQueue.close();
  }

  // flush(requestId) (also flush(payload, requestId)): a non-forced Experience flush; settles
  // "null" once it finished.
  function flush(first, second) {
    var requestId = arguments.length >= 2 ? second : first;
    if (shared.current === null) {
      ns.settle(requestId, new Error(NOT_INITIALIZED));
      return;
    }
    ns.settle(requestId, shared.current.experienceQueue.flush().then(function () {
      return null;
    }));
  }

  function queueSizes() {
    if (shared.current === null) return JSON.stringify({ experience: 0 });
    return JSON.stringify({ experience: shared.current.experienceQueue.size() });
  }

  ns.bridgeDelivery = {
    installDelivery: installDelivery,
    reconnect: reconnect,
    closeDelivery: closeDelivery,
    flush: flush,
    queueSizes: queueSizes,
    resumeBacklog: resumeBacklog,
    removeQueuedEvents: removeQueuedEvents,
  };
})();
