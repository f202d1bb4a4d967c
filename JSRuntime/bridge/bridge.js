// bridge/bridge.js
// Contract: installs `globalThis.__bridge`, the adapter the Swift host calls (JSRuntime/README.md
// "The __bridge contract"). Every own key of `__bridge` is a function (spec B9). Sync methods:
//   initialize(config)     destroys a previous instance, validates `config` (throws an Error whose
//                          message names the key), sets the log threshold, sizes the prepared-entry
//                          and prepared-selection LRUs (`entryCacheSize`, default 1000), builds the
//                          state from `config.defaults` and pushes it to `__nativeOnStateChange`.
//   destroy()              idempotent; clears contexts and prepared caches, resets the log level.
//   getState()             JSON BridgeState (spec §8.1), also before initialize.
//   resolveOptimizedEntry(baseline, selections?)   JSON {entry, selectedOptimization?,
//                          optimizationContextId?, isEmptyVariant?: true}; `selections` undefined ⇒
//                          current state selections, null/[] ⇒ none; before initialize {entry}.
//   prepareEntry(key, document, entryId?) / prepareSelections(key, selections)
//   resolvePrepared(entryKey, selectionsKey)        "<sel>|<exp>|<var>|<empty>|<contextId>", "?e",
//                          "?s"; selectionsKey null/undefined ⇒ nothing selected. Hot path: no JSON,
//                          no allocation beyond the result string and the context registration.
// Async plumbing for later methods: `__optimization.settle(requestId, promiseOrValue)` reports
// through `__nativeSettle(requestId, ok, json)` exactly once (see its comment).
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var host = ns.host;
  var guards = ns.guards;
  var resolver = ns.resolver;
  var entryIndex = ns.entryIndex;
  var locale = ns.locale;

  var DEFAULT_ENTRY_CACHE_SIZE = 1000;
  var NOTHING_SELECTED = '-1|-1|-1|0|';
  var LOG_LEVEL_NAMES = Object.keys(host.LOG_LEVELS);

  var instance = null;
  var preparedEntries = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var preparedSelections = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  // Spec §3.6: `online` and `experienceRequestState` are not reset by a new instance.
  var carried = { online: true, experienceRequestState: { status: 'idle' } };
  // Reused by resolvePrepared so the hot path allocates no result object.
  var scratch = resolver.createResult();

  function messageOf(error) {
    if (error instanceof Error) return error.message;
    if (typeof error === 'string') return error;
    try {
      return JSON.stringify(error) || String(error);
    } catch (stringifyError) {
      return String(error);
    }
  }

  // Calls an optional host push-back callback; a missing one is skipped, a throwing one logged.
  function callHost(name, args) {
    var fn = globalThis[name];
    if (typeof fn !== 'function') return;
    try {
      fn.apply(undefined, args);
    } catch (error) {
      host.log('error', name + ' threw: ' + messageOf(error));
    }
  }

  // ---- config -----------------------------------------------------------------------------------

  function absent(value) {
    return value === undefined || value === null;
  }

  function configError(text) {
    return new Error('initialize config ' + text);
  }

  // `prefix` names the enclosing key ("defaults.") in the message.
  function optional(object, key, check, typeName, prefix) {
    var value = object[key];
    if (absent(value)) return undefined;
    if (!check(value)) throw configError('"' + (prefix || '') + key + '" must be ' + typeName + ' when provided.');
    return value;
  }

  function isString(value) {
    return typeof value === 'string';
  }

  function isBoolean(value) {
    return typeof value === 'boolean';
  }

  function isStringArray(value) {
    return Array.isArray(value) && value.every(isString);
  }

  function isPositiveInteger(value) {
    return Number.isInteger(value) && value > 0;
  }

  function isLibrary(value) {
    return guards.isRecord(value) && isString(value.name) && isString(value.version);
  }

  function isLogLevel(value) {
    return LOG_LEVEL_NAMES.indexOf(value) !== -1;
  }

  function readDefaults(value) {
    if (absent(value)) return {};
    if (!guards.isRecord(value)) throw configError('"defaults" must be an object when provided.');
    var owner = 'defaults.';
    return {
      consent: optional(value, 'consent', isBoolean, 'a boolean', owner),
      persistenceConsent: optional(value, 'persistenceConsent', isBoolean, 'a boolean', owner),
      profile: optional(value, 'profile', guards.isRecord, 'an object', owner),
      changes: optional(value, 'changes', Array.isArray, 'an array', owner),
      selectedOptimizations: optional(value, 'selectedOptimizations', Array.isArray, 'an array', owner),
      anonymousId: optional(value, 'anonymousId', isString, 'a string', owner),
    };
  }

  function readConfig(config) {
    if (!guards.isRecord(config)) throw configError('must be an object.');
    if (!isString(config.clientId)) throw configError('must include a string "clientId".');
    if (!isString(config.environment)) throw configError('must include a string "environment".');
    var allowed = optional(config, 'allowedEventTypes', isStringArray, 'an array of strings');
    return {
      clientId: config.clientId,
      environment: config.environment,
      locale: absent(config.locale) ? undefined : locale.normalizeExplicitLocale(config.locale),
      logLevel: optional(config, 'logLevel', isLogLevel, 'one of ' + LOG_LEVEL_NAMES.join(', ')) || host.DEFAULT_LOG_LEVEL,
      allowedEventTypes: allowed === undefined ? ns.DEFAULT_ALLOWED_EVENT_TYPES.slice() : allowed.slice(),
      channel: optional(config, 'channel', isString, 'a string') || 'server',
      library: optional(config, 'library', isLibrary, 'an object with string "name" and "version"'),
      entryCacheSize: optional(config, 'entryCacheSize', isPositiveInteger, 'a positive integer') || DEFAULT_ENTRY_CACHE_SIZE,
      api: optional(config, 'api', guards.isRecord, 'an object'),
      queuePolicy: optional(config, 'queuePolicy', guards.isRecord, 'an object'),
      defaults: readDefaults(config.defaults),
    };
  }

  // ---- state ------------------------------------------------------------------------------------

  function orNull(value) {
    return value === undefined ? null : value;
  }

  // BridgeState (spec §8.1); `consent`/`persistenceConsent` are omitted while undefined.
  function bridgeState(snapshot) {
    return {
      profile: orNull(snapshot.profile),
      consent: snapshot.consent,
      persistenceConsent: snapshot.persistenceConsent,
      canOptimize: snapshot.canOptimize,
      optimizationPossible: snapshot.optimizationPossible,
      experienceRequestState: snapshot.experienceRequestState,
      changes: orNull(snapshot.changes),
      locale: orNull(snapshot.locale),
      selectedOptimizations: orNull(snapshot.selectedOptimizations),
    };
  }

  function pushState(snapshot) {
    callHost('__nativeOnStateChange', [JSON.stringify(bridgeState(snapshot))]);
  }

  // ---- lifecycle --------------------------------------------------------------------------------

  function destroy() {
    if (instance !== null) {
      var snapshot = instance.state.get();
      carried = { online: snapshot.online, experienceRequestState: snapshot.experienceRequestState };
      instance.unsubscribe();
      instance.contexts.clear();
      instance = null;
    }
    preparedEntries = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
    preparedSelections = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
    host.setLogLevel(host.DEFAULT_LOG_LEVEL);
  }

  function initialize(config) {
    destroy();
    var settings = readConfig(config);
    var defaults = settings.defaults;
    host.setLogLevel(settings.logLevel);
    preparedEntries = ns.createLruCache(settings.entryCacheSize);
    preparedSelections = ns.createLruCache(settings.entryCacheSize);
    var state = ns.createStateStore({
      profile: defaults.profile,
      selectedOptimizations: defaults.selectedOptimizations,
      changes: defaults.changes,
      consent: defaults.consent,
      persistenceConsent: defaults.persistenceConsent !== undefined ? defaults.persistenceConsent : defaults.consent,
      locale: settings.locale,
      allowedEventTypes: settings.allowedEventTypes,
      online: carried.online,
      experienceRequestState: carried.experienceRequestState,
    });
    instance = {
      config: settings,
      state: state,
      contexts: ns.createContextRegistry(),
      anonymousId: defaults.anonymousId,
      unsubscribe: state.subscribe(pushState),
    };
    pushState(state.get());
  }

  function getState() {
    var snapshot = instance !== null
      ? instance.state.get()
      : ns.createStateStore({ online: carried.online, experienceRequestState: carried.experienceRequestState }).get();
    return JSON.stringify(bridgeState(snapshot));
  }

  // ---- resolution -------------------------------------------------------------------------------

  function toJSON(method, value) {
    try {
      return JSON.stringify(value);
    } catch (error) {
      throw new Error(method + ': the result cannot be serialized to JSON (' + messageOf(error) + ').');
    }
  }

  function resolveOptimizedEntry(baseline, selections) {
    if (instance === null) {
      return toJSON('resolveOptimizedEntry', { entry: resolver.resolveOptimizedEntry(baseline, null).entry });
    }
    var chosen = selections === undefined ? instance.state.get().selectedOptimizations : selections;
    var result = resolver.resolveOptimizedEntry(baseline, chosen);
    var output = { entry: result.entry };
    if (result.selectedOptimization !== undefined) output.selectedOptimization = result.selectedOptimization;
    if (result.context !== undefined) output.optimizationContextId = instance.contexts.register(result.context);
    if (result.isEmptyVariant) output.isEmptyVariant = true;
    return toJSON('resolveOptimizedEntry', output);
  }

  function assertKey(method, key) {
    if (typeof key !== 'string') throw new TypeError(method + ' key must be a string.');
  }

  function prepareEntry(key, document, entryId) {
    assertKey('prepareEntry', key);
    var baseline = document;
    var index = null;
    if (entryIndex.isCollection(document)) {
      var wanted = typeof entryId === 'string' ? entryId : undefined;
      baseline = entryIndex.findBaseline(document, wanted);
      if (baseline === undefined) {
        throw new Error(wanted === undefined
          ? 'prepareEntry: the collection has no items.'
          : 'prepareEntry: entry "' + wanted + '" is not among the collection items.');
      }
      index = entryIndex.buildEntryIndex(document);
    }
    // The record doubles as the resolver's options ({index}).
    preparedEntries.set(key, { baseline: baseline, index: index });
  }

  function prepareSelections(key, selections) {
    assertKey('prepareSelections', key);
    if (selections !== null && !Array.isArray(selections)) {
      throw new TypeError('prepareSelections selections must be an array or null.');
    }
    preparedSelections.set(key, selections);
  }

  function resolvePrepared(entryKey, selectionsKey) {
    var prepared = preparedEntries.get(entryKey);
    if (prepared === undefined) return '?e';
    var selections = null;
    if (selectionsKey !== null && selectionsKey !== undefined) {
      selections = preparedSelections.get(selectionsKey);
      if (selections === undefined) return '?s';
    }
    if (instance === null) return NOTHING_SELECTED;
    resolver.resolveInto(scratch, prepared.baseline, selections, prepared);
    var contextId = scratch.context === undefined ? '' : instance.contexts.register(scratch.context);
    var text = scratch.selectionIndex + '|' + scratch.experienceIndex + '|' + scratch.variantIndexInList +
      '|' + (scratch.isEmptyVariant ? '1|' : '0|') + contextId;
    // Drop references so the scratch result does not keep entries alive.
    scratch.entry = undefined;
    scratch.selectedOptimization = undefined;
    scratch.context = undefined;
    return text;
  }

  // ---- async plumbing ---------------------------------------------------------------------------

  // settle(requestId, promiseOrValue): reports the outcome of an async bridge call through
  // `__nativeSettle(requestId, ok, json)` exactly once. A thenable settles when it does (fulfilled:
  // ok true with JSON of the value, undefined as "null"; rejected: ok false with the error
  // message). An Error instance settles synchronously with ok false (validation errors); any other
  // value settles synchronously with ok true. A value that cannot be serialized settles ok false.
  // A throwing `__nativeSettle` is logged, never retried.
  function settle(requestId, promiseOrValue) {
    var settled = false;
    function finish(ok, text) {
      if (settled) return;
      settled = true;
      var fn = globalThis.__nativeSettle;
      if (typeof fn !== 'function') {
        host.log('error', 'Cannot settle request ' + requestId + ': __nativeSettle is not installed.');
        return;
      }
      try {
        fn(requestId, ok, text);
      } catch (error) {
        host.log('error', '__nativeSettle threw: ' + messageOf(error));
      }
    }
    function fulfil(value) {
      var text;
      try {
        text = JSON.stringify(value === undefined ? null : value);
      } catch (error) {
        finish(false, messageOf(error));
        return;
      }
      finish(true, text === undefined ? 'null' : text);
    }
    function reject(error) {
      finish(false, messageOf(error));
    }
    if (promiseOrValue !== null && (typeof promiseOrValue === 'object' || typeof promiseOrValue === 'function') &&
      typeof promiseOrValue.then === 'function') {
      try {
        promiseOrValue.then(fulfil, reject);
      } catch (error) {
        reject(error);
      }
    } else if (promiseOrValue instanceof Error) {
      reject(promiseOrValue);
    } else {
      fulfil(promiseOrValue);
    }
  }

  ns.settle = settle;

  globalThis.__bridge = {
    initialize: initialize,
    destroy: destroy,
    getState: getState,
    resolveOptimizedEntry: resolveOptimizedEntry,
    prepareEntry: prepareEntry,
    prepareSelections: prepareSelections,
    resolvePrepared: resolvePrepared,
  };
})();
