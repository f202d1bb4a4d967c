// service/service-bridge.js
// Contract: installs `globalThis.__service`, the adapter the Swift `OptimizationService` calls on
// each engine of its pool (request calls). It holds service configuration, never visitor state,
// and sends nothing: the Swift host delivers the service's Insights events (its process-wide
// queue, batching, flushing, backoff, durable outbox) and a request's Experience call (HTTP,
// budget, 429 ERR_PROFILE_OVERLOAD retries, circuit); this engine gates, builds and validates
// the events, builds the Experience request and interprets its answer. An Experience call
// enters it twice: the call, then interpretExperience. Every own key is a function, and
// `__service` is exactly the object `__service` of JSRuntime/bridge-contract.json (each
// function's parameters and behaviour; JSRuntime/README.md "The __service contract" shows them):
// the Node suite and the Swift contract tests fail when a function is missing, unlisted or has
// another arity. The outcomes are service/request-events.js's and service/request-handoff.js's;
// resolution is core/prepared-documents.js's, over this engine's own documents and context
// registry.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/service-bridge.js', {
    uses: [
      'apiResponse', 'createRequestEvents', 'experiencePayloadRoutes', 'experienceRequestMethods', 'flags', 'guards', 'host',
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
      // The host's delivery outcome of each HTTP status (the kind of an Experience answer).
      statusKinds: ns.apiResponse.readStatusKinds(config.statusKinds, configError),
    };
  }

  function configure(config) {
    settings = readConfig(config);
    host.setLogLevel(settings.logLevel);
    documents = ns.createPreparedDocuments({ capacity: settings.entryCacheSize });
    contexts = ns.createContextRegistry();
    requestEvents = ns.createRequestEvents(settings);
    finishers = Object.assign({}, requestEvents.finishers, ns.requestHandoffFinishers);
    return JSON.stringify({ experienceMethods: ns.experienceRequestMethods, experiencePayloadRoutes: ns.experiencePayloadRoutes });
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

  function callEach(method, payloads, request, requestId) {
    return settleRequest('callEach', requestId, function () {
      return requestEvents.runEach(method, payloads, request);
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
    callEach: callEach,
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
