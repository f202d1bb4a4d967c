// service/service-bridge.js
// Contract: installs `globalThis.__service`, the adapter the Swift `OptimizationService` calls on
// each engine of its pool (request calls). It holds service configuration, never visitor state,
// and sends nothing: the Swift host delivers the service's Insights events (its process-wide
// queue, batching, flushing, backoff, durable outbox) and a request's Experience call (HTTP,
// budget, 429 ERR_PROFILE_OVERLOAD retries, circuit); this engine gates, builds and validates
// the events, builds the Experience request and interprets its answer. An Experience call
// enters it twice: the call, then interpretExperience. Every own key is a function.
// JSRuntime/README.md "The __service contract" documents it for hosts.
//   configure(config)            validates and stores the service settings (throws an Error naming
//                                the key): {clientId, environment: strings; allowedEventTypes?:
//                                string[] (default ["identify", "page"], [] = strict opt-in);
//                                channel? (default "server"); library?: {name, version};
//                                api?: {experienceBaseUrl?, insightsBaseUrl? (checked only:
//                                this engine sends no Insights request), enabledFeatures?};
//                                requestTimeoutMs?: positive integer (default 1500), the budget
//                                a timeout outcome names when a request carries none;
//                                logLevel?: fatal|error|warn|info|
//                                debug|log (default "error"); entryCacheSize?: positive integer
//                                (default 1000), the prepared documents each cache holds; locale?:
//                                the service's default locale, checked only (requests carry theirs;
//                                an invalid one throws core/locale.js's error)}.
//                                Replaces an earlier configuration (empties the prepared documents
//                                and their contexts). Returns the JSON text
//                                {experienceMethods: [...], statusKinds: {fallback, statuses}}:
//                                the call methods that send their event to the Experience API (a
//                                trackView with sticky: true does too), and the delivery outcome
//                                (core/api-response.js classifyStatus) of each HTTP status
//                                100–599 that is not `fallback`'s, for the host's traces.
//   call(method, payload, request, requestId)   async in form, always known at once: returns
//                                `[ok, outcome]` JSON text; the outcome is service/request-events.js's
//                                (validation errors and "requires a request-bound profile id" settle
//                                ok=false). An Experience call's outcome carries `experienceRequest`
//                                ({url, method, headers, body}) and `context` instead of
//                                `experience`: the host sends the request and passes the answer
//                                with `context` to interpretExperience. An outcome's `insights`
//                                items are for the host's Insights queue; `failFast` in `request` is
//                                how the host's open Experience circuit skips the request (the
//                                outcome is then final, with a circuitOpen `experience`).
//   prepareHandoff(input, request, requestId)   like call: the request handoff with replay of
//                                service/request-handoff.js ({handoff, experience?, blocked}, or
//                                {handoff, blocked, experienceRequest, context} for its preview).
//   commitReplay(replay, request, requestId)   like call: commits a handoff's replay as a browser
//                                would (service/request-handoff.js commitRequestReplay).
//   interpretExperience(context, status, headers, bodyText, failure) → JSON text of the call's
//                                final outcome (as call/prepareHandoff/commitReplay answered it
//                                before Experience requests were the host's: {accepted, events,
//                                experience, insights?} | {handoff, experience, blocked} |
//                                {accepted, experience, blocked}). `context` as the call returned
//                                it; `status` and `headers` (an object) of the HTTP answer and its
//                                body text; or status 0 with `failure` "timeout" (the request's
//                                budget ran out) or "transport" (no answer; `bodyText` is the
//                                error message). Any engine of the pool may interpret it. Throws
//                                for a context that names no step.
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
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/service-bridge.js', {
    uses: [
      'apiResponse', 'createRequestEvents', 'experienceRequestMethods', 'flags', 'guards', 'host',
      'commitRequestReplay', 'createContextRegistry', 'createPreparedDocuments', 'locale', 'mergeTags', 'prepareRequestHandoff',
      'requestHandoffFinishers', 'settleReturning',
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
  // The finishers of every step an Experience answer can finish (interpretExperience).
  var finishers = null;
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
      logLevel: optional(config, 'logLevel', function (v) {
        return isString(v) && Object.prototype.hasOwnProperty.call(host.LOG_LEVELS, v);
      }, 'one of ' + Object.keys(host.LOG_LEVELS).join(', ')) || host.DEFAULT_LOG_LEVEL,
      entryCacheSize: optional(config, 'entryCacheSize', function (v) {
        return Number.isInteger(v) && v > 0;
      }, 'a positive integer') || DEFAULT_ENTRY_CACHE_SIZE,
    };
  }

  function configure(config) {
    settings = readConfig(config);
    host.setLogLevel(settings.logLevel);
    documents = ns.createPreparedDocuments({ capacity: settings.entryCacheSize });
    contexts = ns.createContextRegistry();
    requestEvents = ns.createRequestEvents(settings);
    finishers = Object.assign({}, requestEvents.finishers, ns.requestHandoffFinishers);
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

  function interpretExperience(context, status, headers, bodyText, failure) {
    if (settings === null) throw new Error('interpretExperience: the service is not configured.');
    var outcome = requestEvents.interpret(context, status, headers, bodyText, failure, finishers);
    if (outcome instanceof Error) throw outcome;
    return JSON.stringify(outcome);
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

  globalThis.__service = {
    configure: configure,
    call: call,
    prepareHandoff: prepareHandoff,
    commitReplay: commitReplay,
    interpretExperience: interpretExperience,
    prepareEntry: prepareEntry,
    prepareSelections: prepareSelections,
    adoptEntry: adoptEntry,
    adoptSelections: adoptSelections,
    resolvePrepared: resolvePrepared,
    registerDeferred: registerDeferred,
    getFlag: getFlag,
    getMergeTagValue: getMergeTagValue,
  };
})();
