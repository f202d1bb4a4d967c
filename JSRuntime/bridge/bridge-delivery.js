// bridge/bridge-delivery.js
// Contract: `__optimization.bridgeDelivery` — the delivery of the stateful bridge (spec §6;
// DECISIONS 9–13; JSRuntime/README.md "Delivery"):
//   installDelivery(instance)   the Experience/Insights API clients and both queues, wired to the
//                               instance's state and to __nativeOnQueueEvent
//   reconnect(instance)         offline → online: cancel scheduled retries, force-flush Insights
//                               then Experience (spec §6.5)
//   closeDelivery(instance)     destroy(): forced best-effort flushes (not awaited), then no timers
//   flush(requestId) / flush(payload, requestId)   async; settles "null" once both flushed
//   queueSizes() → JSON {"experience": n, "insights": m}
// Durable outbox (docs/outbox.md), only when the host registered `__nativeOutboxAppend`:
//   every event a queue accepts → __nativeOutboxAppend(queue, messageId, profileId|null, consent,
//     acceptedAtMs, payloadJSON) before the accepting call returns (payload: the Experience event;
//     for Insights `{"profile": profile|null, "event": event}`, profile null while held);
//   events that left a queue for good → __nativeOutboxRemoved(queue, messageIdsJSON, reason);
//   restoreQueuedEvents(items) → number   items `[{queue: "experience", event} |
//     {queue: "insights", item: {profile, event}}]` in append order: queued again without gate,
//     builder or append, then flushed as usual (non-forced);
//   removeQueuedEvents(queue, messageIds, reason) → number   drops them from memory (an outbox
//     bound or time to live) and reports one offlineDrop {droppedCount, droppedEvents, reason}.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var callHost = shared.callHost;
  var isString = shared.isString;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;


  // Builds the API clients and both delivery queues of `target` (spec §6).
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
    var outbox = outboxHooks(target);
    target.experienceApi = ns.createExperienceApi({
      clientId: settings.clientId,
      environment: settings.environment,
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
      onAccepted: outbox && function (event) {
        outbox.append('experience', event, upsertProfileId(target), event);
      },
      onRemoved: outbox && function (events, reason) {
        outbox.removed('experience', events, reason);
      },
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
      onAccepted: outbox && function (event, profile) {
        var holder = profile === undefined ? null : profile;
        var profileId = holder !== null && isString(holder.id) && holder.id.length > 0 ? holder.id : undefined;
        outbox.append('insights', event, profileId, { profile: holder, event: event });
      },
      onRemoved: outbox && function (events, reason) {
        outbox.removed('insights', events, reason);
      },
    });
    // Spec §8.3: the anonymous id follows the profile while persistence consent is true and is
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

  // The outbox push-backs of `target`, or null when the host keeps no outbox.
  function outboxHooks(target) {
    if (typeof globalThis.__nativeOutboxAppend !== 'function') return null;
    return {
      append: function (queue, event, profileId, payload) {
        if (shared.current !== target || !guards.isRecord(event) || !isString(event.messageId)) return;
        var context = guards.isRecord(event.context) ? event.context : {};
        var consent = guards.isRecord(context.gdpr) && context.gdpr.isConsentGiven === true;
        callHost('__nativeOutboxAppend', [queue, event.messageId, isString(profileId) ? profileId : null, consent,
          host.now(), JSON.stringify(payload)]);
      },
      removed: function (queue, events, reason) {
        var ids = [];
        events.forEach(function (event) {
          if (guards.isRecord(event) && isString(event.messageId)) ids.push(event.messageId);
        });
        if (ids.length > 0) callHost('__nativeOutboxRemoved', [queue, JSON.stringify(ids), reason]);
      },
    };
  }

  // Re-queues events recovered from the outbox, in their order, then flushes (non-forced).
  function restoreQueuedEvents(items) {
    if (shared.current === null) throw new Error(NOT_INITIALIZED);
    if (!Array.isArray(items)) throw new TypeError('restoreQueuedEvents expects an array.');
    var target = shared.current;
    var restored = 0;
    items.forEach(function (item) {
      if (!guards.isRecord(item)) return;
      if (item.queue === 'experience' && guards.isRecord(item.event)) {
        target.experienceQueue.enqueue(item.event);
        restored++;
      } else if (item.queue === 'insights' && guards.isRecord(item.item) && guards.isRecord(item.item.event)) {
        target.insightsQueue.enqueue(item.item.event, guards.isRecord(item.item.profile) ? item.item.profile : undefined);
        restored++;
      }
    });
    target.insightsQueue.profileChanged();
    if (restored > 0) {
      target.insightsQueue.flush();
      target.experienceQueue.flush();
    }
    return restored;
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

  // Spec §8.3: (persistenceConsent === true ? anonymous id : none) ?? profile.id; "" ⇒ none.
  function upsertProfileId(target) {
    var snapshot = target.state.get();
    var anonymous = snapshot.persistenceConsent === true ? target.anonymousId : undefined;
    if (isString(anonymous) && anonymous.length > 0) return anonymous;
    var profile = snapshot.profile;
    return guards.isRecord(profile) && isString(profile.id) && profile.id.length > 0 ? profile.id : undefined;
  }

  // Spec §6.5: cancel both scheduled retries, then force-flush Insights, then Experience.
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
    restoreQueuedEvents: restoreQueuedEvents,
    removeQueuedEvents: removeQueuedEvents,
  };
})();
