// service/service-bridge.js
// Contract: installs `globalThis.__service`, the adapter the Swift `OptimizationService` calls on
// each engine of its pool (request calls) and on its one delivery engine (the process-wide
// Insights queue). It holds service configuration, never visitor state. Every own key is a
// function. JSRuntime/README.md "The __service contract" documents it for hosts.
//   configure(config)            validates and stores the service settings (throws an Error naming
//                                the key): {clientId, environment: strings; allowedEventTypes?:
//                                string[] (default ["identify", "page"], [] = strict opt-in);
//                                channel? (default "server"); library?: {name, version};
//                                api?: {experienceBaseUrl?, insightsBaseUrl?, enabledFeatures?};
//                                requestTimeoutMs?: positive integer (default 1500);
//                                queuePolicy?: as the bridge's; logLevel?: fatal|error|warn|info|
//                                debug|log (default "error"); entryCacheSize?: positive integer
//                                (default 1000), the prepared documents each cache holds; locale?:
//                                the service's default locale, checked only (requests carry theirs;
//                                an invalid one throws core/locale.js's error)}.
//                                Replaces an earlier configuration (closes its delivery queue,
//                                empties the prepared documents and their contexts). Returns the JSON text
//                                {experienceMethods: [...], statusKinds: {fallback, statuses}}:
//                                the call methods that send their event to the Experience API (a
//                                trackView with sticky: true does too), and the delivery outcome
//                                (core/api-response.js classifyStatus) of each HTTP status
//                                100–599 that is not `fallback`'s, for the host's traces.
//   admitExperienceCall() → bool  asks the service's Experience circuit (a createCircuitBreaker
//                                with the configured queuePolicy.flush) whether a call may send
//                                its request; false: it passes failFast. Used on the delivery
//                                engine only, so one circuit serves every engine of the pool.
//   recordExperienceOutcome(kind, code) → bool   reports an admitted call: "ok" closes the
//                                circuit, "retry"/"timeout" count as failures (not with code
//                                ERR_PROFILE_OVERLOAD), anything else frees the probe; returns
//                                whether the circuit is open now.
//   isExperienceCircuitOpen() → bool
//   call(method, payload, request, requestId)   async: returns `[ok, outcome]` JSON text when the
//                                outcome is known at once (blocked, Insights, errors), else settles
//                                later through __nativeSettle (an Experience call); the outcome is
//                                service/request-events.js's (validation errors and "requires a
//                                request-bound profile id" settle ok=false).
//   prepareHandoff(input, request, requestId)   async like call: the request handoff with replay
//                                of service/request-handoff.js ({handoff, experience?, blocked}).
//   commitReplay(replay, request, requestId)   async like call: commits a handoff's replay as a
//                                browser would (service/request-handoff.js commitRequestReplay).
//   prepareEntry(key, document, entryId?, contentKey?), prepareSelections(key, selections,
//   contentKey?), adoptEntry(key, contentKey), adoptSelections(key, contentKey),
//   resolvePrepared(entryKey, selectionsKey), registerDeferred({pairs, records})
//                                resolution over the engine's prepared documents
//                                (core/prepared-documents.js), as the bridge's but without a
//                                visitor: a matched selection's context is registered in this
//                                engine's context registry, also before configure.
//   getFlag(name, changes) → JSON of the flag over `changes` ("null" when absent). Reading a flag
//                                emits nothing (stateless model).
//   getMergeTagValue(entry, profile) → string | null (core/merge-tags.js).
//   startDelivery()              creates the process-wide Insights queue (core/insights-queue.js:
//                                batches per profile, threshold 25, interval, backoff, circuit,
//                                Retry-After, 401/403/404 disable); reports to __nativeOnQueueEvent.
//                                When the host registered the outbox natives (core/outbox-link.js)
//                                the queue stores every event before taking it, holds a window of
//                                the stored backlog (queuePolicy.insightsMaxEvents) and
//                                acknowledges what leaves it for good. With __nativeOutboxRemoved
//                                alone (a shared outbox: the host stored the events before
//                                enqueueInsights) the queue keeps events in memory and reports
//                                every event that leaves it for good there.
//   enqueueInsights(items) → number   items: [{profile, event}]; each event is stored (with an
//                                outbox) and joins its profile's batch; returns the queue size
//                                after. Throws before startDelivery, and when an event could not
//                                be stored (the events before it in `items` stay accepted).
//   enqueueInsightsEach(items, count) → number | {size, refused, error} | null   like
//                                enqueueInsights without an outbox, item by item: an item that is
//                                not a {profile, event} object or that the queue refuses is skipped
//                                (its index in `refused`, the first message in `error`) and the
//                                ones after it are still queued. Returns the queue size when every
//                                item was queued, null before startDelivery; throws (queuing
//                                nothing) when `items` is not an array of `count` items.
//   resumeInsightsBacklog() → number   fills the window from the stored backlog (a restart).
//   flushInsights(force, requestId)   async; flushes until the queue is empty or a round makes no
//                                progress (a failed request), then settles "null". A flush already
//                                in flight is awaited first, then what was queued meanwhile follows.
//   insightsSize() → number      queued events.
//   eraseInsightsProfile(id) → number   removes that profile's queued events (erasure).
//   removeInsightsMessages(ids, reason) → number   removes the queued events whose messageId is in
//                                `ids` (the durable outbox dropped them: a bound or the time to
//                                live) and reports one offlineDrop {droppedCount, droppedEvents, reason}.
//   closeDelivery()              stops the queue's timers and retries for good.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/service-bridge.js', {
    uses: [
      'apiResponse', 'createInsightsApi', 'createInsightsQueue', 'createRequestEvents', 'experienceRequestMethods', 'flags', 'guards', 'host',
      'commitRequestReplay', 'createContextRegistry', 'createPreparedDocuments', 'locale', 'mergeTags', 'outboxLink', 'prepareRequestHandoff',
      'queueFlushPolicy', 'settle', 'settleReturning',
    ],
    globals: ['__service'],
  });
  var host = ns.host;
  var guards = ns.guards;

  var DEFAULT_ALLOWED = ['identify', 'page'];
  var DEFAULT_TIMEOUT_MS = 1500;
  var DEFAULT_ENTRY_CACHE_SIZE = 1000;

  var settings = null;
  var requestEvents = null;
  var experienceCircuit = null;
  var insightsQueue = null;
  // Resolution: the prepared documents and the contexts of the resolves that matched.
  var documents = ns.createPreparedDocuments({ capacity: DEFAULT_ENTRY_CACHE_SIZE });
  var contexts = ns.createContextRegistry();

  function configError(text) {
    return new Error('service config ' + text);
  }

  function optional(object, key, check, typeName, prefix) {
    var value = object[key];
    if (value === undefined || value === null) return undefined;
    if (!check(value)) throw configError('"' + (prefix || '') + key + '" must be ' + typeName + ' when provided.');
    return value;
  }

  function isString(value) {
    return typeof value === 'string';
  }

  function isStringArray(value) {
    return Array.isArray(value) && value.every(isString);
  }

  function readConfig(config) {
    if (!guards.isRecord(config)) throw configError('must be an object.');
    var tenant = ns.apiResponse.readTenant(config, configError, true);
    var api = optional(config, 'api', guards.isRecord, 'an object') || {};
    var allowed = optional(config, 'allowedEventTypes', isStringArray, 'an array of strings');
    if (config.locale !== undefined && config.locale !== null) ns.locale.normalizeExplicitLocale(config.locale);
    return {
      clientId: tenant.clientId,
      apiVersion: tenant.apiVersion,
      environment: tenant.environment,
      allowedEventTypes: allowed === undefined ? DEFAULT_ALLOWED.slice() : allowed.slice(),
      channel: optional(config, 'channel', isString, 'a string') || 'server',
      library: optional(config, 'library', function (v) {
        return guards.isRecord(v) && isString(v.name) && isString(v.version);
      }, 'an object with string "name" and "version"'),
      api: {
        experienceBaseUrl: optional(api, 'experienceBaseUrl', isString, 'a string', 'api.'),
        insightsBaseUrl: optional(api, 'insightsBaseUrl', isString, 'a string', 'api.'),
        enabledFeatures: optional(api, 'enabledFeatures', isStringArray, 'an array of strings', 'api.'),
      },
      requestTimeoutMs: optional(config, 'requestTimeoutMs', function (v) {
        return Number.isInteger(v) && v > 0;
      }, 'a positive integer') || DEFAULT_TIMEOUT_MS,
      queuePolicy: optional(config, 'queuePolicy', guards.isRecord, 'an object') || {},
      logLevel: optional(config, 'logLevel', function (v) {
        return isString(v) && Object.prototype.hasOwnProperty.call(host.LOG_LEVELS, v);
      }, 'one of ' + Object.keys(host.LOG_LEVELS).join(', ')) || host.DEFAULT_LOG_LEVEL,
      entryCacheSize: optional(config, 'entryCacheSize', function (v) {
        return Number.isInteger(v) && v > 0;
      }, 'a positive integer') || DEFAULT_ENTRY_CACHE_SIZE,
    };
  }

  function requireConfigured(method) {
    if (settings === null) throw new Error(method + ': the service is not configured.');
  }

  function configure(config) {
    var next = readConfig(config);
    closeDelivery();
    settings = next;
    host.setLogLevel(settings.logLevel);
    documents = ns.createPreparedDocuments({ capacity: settings.entryCacheSize });
    contexts = ns.createContextRegistry();
    requestEvents = ns.createRequestEvents(settings);
    experienceCircuit = ns.queueFlushPolicy.createCircuitBreaker({ policy: settings.queuePolicy.flush });
    return JSON.stringify({ experienceMethods: ns.experienceRequestMethods, statusKinds: statusKinds() });
  }

  // The delivery outcome of every HTTP status 100–599 (core/api-response.js classifyStatus), for
  // the host's traces and metrics: {fallback, statuses: {"<status>": kind}} lists the statuses
  // whose kind is not the fallback's.
  function statusKinds() {
    var classify = ns.apiResponse.classifyStatus;
    var fallback = classify(0);
    var statuses = {};
    for (var status = 100; status <= 599; status++) {
      var kind = classify(status);
      if (kind !== fallback) statuses[String(status)] = kind;
    }
    return { fallback: fallback, statuses: statuses };
  }

  // The circuit of the service's Experience calls, shared by every engine of its pool: the host
  // asks the delivery engine before each call and reports how it went.
  function admitExperienceCall() {
    requireConfigured('admitExperienceCall');
    return experienceCircuit.admit();
  }

  // kind: "ok" (answered), "retry" or "timeout" (a transient failure: counts towards opening the
  // circuit), anything else (refused, invalid, no request made) frees the probe only, as does a
  // profile overload (code ERR_PROFILE_OVERLOAD: one visitor's calls, not the API's health).
  function recordExperienceOutcome(kind, code) {
    requireConfigured('recordExperienceOutcome');
    if (kind === 'ok') experienceCircuit.recordSuccess();
    else if ((kind === 'retry' || kind === 'timeout') && code !== 'ERR_PROFILE_OVERLOAD') experienceCircuit.recordFailure();
    else experienceCircuit.release();
    return experienceCircuit.isOpen();
  }

  function isExperienceCircuitOpen() {
    return experienceCircuit !== null && experienceCircuit.isOpen();
  }

  // An async request function: runs `work()` (an outcome, a promise of one, or an Error) and
  // settles it: returned as `[ok, value]` when known at once, else through __nativeSettle.
  function settleRequest(name, requestId, work) {
    if (settings === null) return ns.settleReturning(requestId, new Error(name + ': the service is not configured.'));
    var outcome;
    try {
      outcome = work();
    } catch (error) {
      outcome = error instanceof Error ? error : new Error(String(error));
    }
    return ns.settleReturning(requestId, outcome);
  }

  function call(method, payload, request, requestId) {
    return settleRequest('call', requestId, function () {
      return requestEvents.run(method, payload, request);
    });
  }

  function prepareHandoff(input, request, requestId) {
    return settleRequest('prepareHandoff', requestId, function () {
      return ns.prepareRequestHandoff(requestEvents, input, request);
    });
  }

  function commitReplay(replay, request, requestId) {
    return settleRequest('commitReplay', requestId, function () {
      return ns.commitRequestReplay(requestEvents, replay, request);
    });
  }

  function prepareEntry(key, document, entryId, contentKey) {
    documents.prepareEntry(key, document, entryId, contentKey);
  }

  function prepareSelections(key, selections, contentKey) {
    documents.prepareSelections(key, selections, contentKey);
  }

  function adoptEntry(key, contentKey) {
    return documents.adoptEntry(key, contentKey);
  }

  function adoptSelections(key, contentKey) {
    return documents.adoptSelections(key, contentKey);
  }

  function resolvePrepared(entryKey, selectionsKey) {
    return documents.resolvePrepared(entryKey, selectionsKey, contexts);
  }

  function registerDeferred(batch) {
    return documents.registerDeferred(batch, contexts);
  }

  function getFlag(name, changes) {
    if (!isString(name)) throw new TypeError('getFlag name must be a string.');
    var value = ns.flags.getFlag(name, changes);
    return JSON.stringify(value === undefined ? null : value);
  }

  function getMergeTagValue(entry, profile) {
    var value = ns.mergeTags.resolve(entry, profile === null ? undefined : profile);
    return value === undefined ? null : value;
  }

  function reportQueueEvent(type, context) {
    var fn = globalThis.__nativeOnQueueEvent;
    if (typeof fn !== 'function') return;
    try {
      fn(JSON.stringify({ type: type, queue: 'insights', timestamp: host.now(), context: context }));
    } catch (error) {
      host.log('error', '__nativeOnQueueEvent threw: ' + (error instanceof Error ? error.message : String(error)));
    }
  }

  function startDelivery() {
    requireConfigured('startDelivery');
    closeDelivery();
    var policy = settings.queuePolicy;
    var link = ns.outboxLink;
    var durable = link.available();
    insightsQueue = ns.createInsightsQueue({
      maxEvents: policy.insightsMaxEvents,
      outbox: durable ? link.forQueue('insights') : null,
      onRemoved: durable || link.acknowledgesRemovals() ? link.removedHook('insights') : null,
      api: ns.createInsightsApi({
        clientId: settings.clientId, environment: settings.environment, apiVersion: settings.apiVersion,
        baseUrl: settings.api.insightsBaseUrl,
      }),
      onQueueEvent: reportQueueEvent,
      flushPolicy: policy.flush,
      callbacks: {
        onFlushFailure: function (context) { reportQueueEvent('flushFailure', context); },
        onCircuitOpen: function (context) { reportQueueEvent('circuitOpen', context); },
        onFlushRecovered: function (context) { reportQueueEvent('flushRecovered', context); },
      },
    });
  }

  function enqueueInsights(items) {
    if (insightsQueue === null) throw new Error('enqueueInsights: delivery is not started.');
    if (!Array.isArray(items)) throw new TypeError('enqueueInsights expects an array.');
    items.forEach(function (item) {
      if (!guards.isRecord(item) || !guards.isRecord(item.profile) || !guards.isRecord(item.event)) {
        throw new TypeError('enqueueInsights items must be {profile, event} objects.');
      }
      insightsQueue.send(item.event, item.profile);
    });
    return insightsQueue.size();
  }

  function enqueueInsightsEach(items, count) {
    if (insightsQueue === null) return null;
    if (!Array.isArray(items) || items.length !== count) {
      throw new TypeError('enqueueInsightsEach expects an array of ' + count + ' items.');
    }
    var refused = [];
    var error = null;
    for (var index = 0; index < items.length; index += 1) {
      var item = items[index];
      try {
        if (!guards.isRecord(item) || !guards.isRecord(item.profile) || !guards.isRecord(item.event)) {
          throw new TypeError('enqueueInsights items must be {profile, event} objects.');
        }
        insightsQueue.send(item.event, item.profile);
      } catch (failure) {
        refused.push(index);
        if (error === null) error = failure instanceof Error ? failure.message : String(failure);
      }
    }
    var size = insightsQueue.size();
    return refused.length === 0 ? size : { size: size, refused: refused, error: error };
  }

  function resumeInsightsBacklog() {
    if (insightsQueue === null) throw new Error('resumeInsightsBacklog: delivery is not started.');
    return insightsQueue.resume();
  }

  function flushInsights(force, requestId) {
    if (insightsQueue === null) {
      ns.settle(requestId, null);
      return;
    }
    var queue = insightsQueue;
    // A flush already in flight only carries what was queued when it started: keep flushing
    // while rounds make progress, so everything queued before this call goes out.
    function round(before) {
      return queue.flush({ force: force === true }).then(function () {
        var size = queue.size();
        return size > 0 && size < before ? round(size) : null;
      });
    }
    ns.settle(requestId, round(queue.size()));
  }

  // eraseInsightsProfile(id) → number of queued events of that profile removed.
  function eraseInsightsProfile(profileId) {
    if (!isString(profileId)) throw new TypeError('eraseInsightsProfile expects a profile id string.');
    return insightsQueue === null ? 0 : insightsQueue.eraseProfile(profileId);
  }

  function removeInsightsMessages(messageIds, reason) {
    var ids = Array.isArray(messageIds) ? messageIds : [];
    if (insightsQueue === null || ids.length === 0) return 0;
    var gone = insightsQueue.removeMessages(ids);
    reportQueueEvent('offlineDrop', { droppedCount: ids.length, droppedEvents: gone, reason: isString(reason) ? reason : 'outbox' });
    return gone.length;
  }

  function insightsSize() {
    return insightsQueue === null ? 0 : insightsQueue.size();
  }

  function closeDelivery() {
    if (insightsQueue === null) return;
    insightsQueue.close();
    insightsQueue = null;
  }

  globalThis.__service = {
    configure: configure,
    call: call,
    prepareHandoff: prepareHandoff,
    commitReplay: commitReplay,
    prepareEntry: prepareEntry,
    prepareSelections: prepareSelections,
    adoptEntry: adoptEntry,
    adoptSelections: adoptSelections,
    resolvePrepared: resolvePrepared,
    registerDeferred: registerDeferred,
    getFlag: getFlag,
    getMergeTagValue: getMergeTagValue,
    startDelivery: startDelivery,
    enqueueInsights: enqueueInsights,
    enqueueInsightsEach: enqueueInsightsEach,
    resumeInsightsBacklog: resumeInsightsBacklog,
    flushInsights: flushInsights,
    insightsSize: insightsSize,
    eraseInsightsProfile: eraseInsightsProfile,
    removeInsightsMessages: removeInsightsMessages,
    closeDelivery: closeDelivery,
    admitExperienceCall: admitExperienceCall,
    recordExperienceOutcome: recordExperienceOutcome,
    isExperienceCircuitOpen: isExperienceCircuitOpen,
  };
})();
