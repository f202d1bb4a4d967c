// bridge/bridge-delivery.js
// Contract: `__optimization.bridgeDelivery` — the delivery of the stateful bridge
// (JSRuntime/README.md "Delivery"):
//   installDelivery(instance)   the Experience/Insights API clients and both queues, wired to the
//                               instance's state and to __nativeOnQueueEvent
//   reconnect(instance)         offline → online: cancel scheduled retries, force-flush Insights
//                               then Experience
//   closeDelivery(instance)     destroy(): forced best-effort flushes (not awaited), then no timers
//   flush(requestId) / flush(payload, requestId)   async; settles "null" once both flushed
//   queueSizes() → JSON {"experience": n, "insights": m}
// Durable outbox (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md), only when the host registered the natives of
// bridge/outbox-link.js: both queues store every accepted event before the accepting call returns
// (a failed store fails the call), keep a window of the stored backlog in memory (the queue
// sizes of queuePolicy), and acknowledge what leaves them for good;
//   resumeBacklog() → number   fills both windows from the stored backlog (after a restart) and
//     flushes as usual (non-forced); returns the number of events loaded;
//   removeQueuedEvents(queue, messageIds, reason) → number   drops them from memory (an outbox
//     bound or time to live) and reports one offlineDrop {droppedCount, droppedEvents, reason}.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-delivery.js', {
    provides: ['bridgeDelivery'],
    uses: [
      'bridgeShared', 'createExperienceApi', 'createExperienceQueue', 'createInsightsApi',
      'createInsightsQueue', 'experienceApi', 'guards', 'host', 'outboxLink', 'settle',
    ],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var callHost = shared.callHost;
  var isString = shared.isString;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;


  // Builds the API clients and both delivery queues of `target`.
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
    var insightsEvent = queueEvent('insights');
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
    target.insightsApi = ns.createInsightsApi({
      clientId: settings.clientId,
      environment: settings.environment,
      apiVersion: settings.apiVersion,
      baseUrl: api.insightsBaseUrl,
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
    target.insightsQueue = ns.createInsightsQueue({
      getProfile: function () {
        return state.get().profile;
      },
      api: target.insightsApi,
      isOnline: isOnline,
      onQueueEvent: insightsEvent,
      flushPolicy: queuePolicy.flush,
      callbacks: runtimeCallbacks(insightsEvent),
      outbox: durable ? link.forQueue('insights') : null,
      onRemoved: durable ? link.removedHook('insights') : null,
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

  // Fills both windows from the stored backlog (a restart), then flushes (non-forced).
  function resumeBacklog() {
    if (shared.current === null) throw new Error(NOT_INITIALIZED);
    var target = shared.current;
    var loaded = target.insightsQueue.resume() + target.experienceQueue.resume();
    target.insightsQueue.profileChanged();
    if (target.insightsQueue.size() > 0) target.insightsQueue.flush();
    return loaded;
  }

  // Drops events from memory that the outbox dropped (a bound or the time to live).
  function removeQueuedEvents(queue, messageIds, reason) {
    if (shared.current === null) return 0;
    var target = shared.current;
    var ids = Array.isArray(messageIds) ? messageIds : [];
    var gone = (queue === 'experience' ? target.experienceQueue : target.insightsQueue).removeMessages(ids);
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

  // Going online: cancel both scheduled retries, then force-flush Insights, then Experience.
  function reconnect(target) {
    target.insightsQueue.cancelScheduledRetry();
    target.experienceQueue.cancelScheduledRetry();
    target.insightsQueue.flush({ force: true });
    target.experienceQueue.flush({ force: true });
  }

  // destroy(): forced best-effort flushes (not awaited), then no more timers or retries.
  function closeDelivery(target) {
    if (target.unsubscribeDelivery) target.unsubscribeDelivery();
    target.insightsQueue.flush({ force: true });
    target.experienceQueue.flush({ force: true });
    target.insightsQueue.close();
    target.experienceQueue.close();
  }

  // flush(requestId) (also flush(payload, requestId)): a non-forced Insights flush, then a
  // non-forced Experience flush; settles "null" once both finished.
  function flush(first, second) {
    var requestId = arguments.length >= 2 ? second : first;
    if (shared.current === null) {
      ns.settle(requestId, new Error(NOT_INITIALIZED));
      return;
    }
    var target = shared.current;
    ns.settle(requestId, target.insightsQueue.flush().then(function () {
      return target.experienceQueue.flush();
    }).then(function () {
      return null;
    }));
  }

  function queueSizes() {
    if (shared.current === null) return JSON.stringify({ experience: 0, insights: 0 });
    return JSON.stringify({ experience: shared.current.experienceQueue.size(), insights: shared.current.insightsQueue.size() });
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
