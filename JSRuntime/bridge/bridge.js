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
// Async plumbing: `__optimization.settle(requestId, promiseOrValue)` reports through
// `__nativeSettle(requestId, ok, json)` exactly once (see its comment).
// Consent and events (spec §4, §5, §8.2; DECISIONS 5–7), see "consent and events" below:
//   async (payload, requestId): identify, page, screen, trackCurrentScreen, track, trackView,
//                          trackClick — validated (spec §8.2 messages), settle with EmissionResult
//                          JSON {"accepted": bool, "data"?}; trackClick settles {"accepted": bool}
//                          too (not "null", so the host learns whether it was blocked).
//   sync: consent(input), hasConsent(method) (false before initialize), setOnline(bool) (also
//                          before initialize; going online cancels scheduled retries and
//                          force-flushes Insights, then Experience), queueSizes() → JSON
//                          {"experience": n, "insights": m} (debug/tests).
// Delivery (spec §6; DECISIONS 9–13): `api` and `queuePolicy` of the config configure the
//   Experience/Insights clients (core/experience-api.js, core/insights-api.js) and queues; async
//   flush(requestId) settles "null" after a non-forced Insights flush, then Experience flush.
//   destroy() fires forced best-effort flushes of both queues (not awaited). Queue events go to
//   __nativeOnQueueEvent({"type": offlineDrop|flushFailure|circuitOpen|flushRecovered|
//   batchDropped|deliveryDisabled, "queue": "experience"|"insights", "timestamp": host ms,
//   "context": {...}}).
//   push-backs: __nativeOnEventEmitted(json) per accepted event, __nativeOnEventBlocked(json) once
//                          per blocked call ({"reason":"consent","method","args":[payload]},
//                          trackCurrentScreen included: DECISIONS 6), __nativeOnQueueEvent(json)
//                          for offline drops, __nativeOnStateChange on every consent change.
// Flags, merge tags, preview overrides, locale, reset (spec §7, §8.2, §8.3; DECISIONS 6, 8, 17),
// see "flags, merge tags, preview overrides, locale and reset" below. All sync:
//   getFlag(name) → JSON ("null" before initialize / when absent), observeFlag(subId, name),
//   unobserveFlag(subId) (pushes __nativeOnFlagValueChanged(subId, json), first synchronously),
//   getMergeTagValue(entry, profile?) → string or null, getProfile() → JSON or null,
//   setLocale(locale) → normalised locale (throws on invalid; null before initialize), reset(),
//   overrideAudience(audId, qualified, expIds), overrideVariant(expId, i),
//   resetVariantOverride(expId), resetAudienceOverride(audId), resetAllOverrides(),
//   loadDefinitions(audiences, experiences) → JSON, getPreviewState() → JSON or "null",
//   setPreviewPanelOpen(bool); push-back __nativeOnOverridesChanged(previewStateJSON).
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
  // Prepared documents by the host's key (a small integer handle on the hot path), and the same
  // records by content key so a second handle on equal content adopts them without a transfer.
  var preparedEntries = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var preparedSelections = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var entriesByContent = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var selectionsByContent = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  // nt_experience entries seen through prepareEntry / resolveOptimizedEntry / loadDefinitions:
  // preview overrides derive the flags of overridden experiences from them (DECISIONS 17).
  var experienceDefinitions = ns.createExperienceDefinitions(DEFAULT_ENTRY_CACHE_SIZE);
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

  // `api`: {experienceBaseUrl?, insightsBaseUrl?: strings (falsy ⇒ default), enabledFeatures?:
  // string[], preflight?: boolean}.
  function readApi(value) {
    if (absent(value)) return {};
    if (!guards.isRecord(value)) throw configError('"api" must be an object when provided.');
    var owner = 'api.';
    return {
      experienceBaseUrl: optional(value, 'experienceBaseUrl', isString, 'a string', owner),
      insightsBaseUrl: optional(value, 'insightsBaseUrl', isString, 'a string', owner),
      enabledFeatures: optional(value, 'enabledFeatures', isStringArray, 'an array of strings', owner),
      preflight: optional(value, 'preflight', isBoolean, 'a boolean', owner),
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
      api: readApi(config.api),
      queuePolicy: optional(config, 'queuePolicy', guards.isRecord, 'an object'),
      defaults: readDefaults(config.defaults),
      // What the host persisted (same shape as defaults); resolved against `defaults` per
      // DECISIONS 15 by ns.resolveStatefulDefaults.
      persisted: readDefaults(config.persisted),
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
      closeDelivery(instance);
      instance.unsubscribe();
      teardownFeatures(instance);
      instance.contexts.clear();
      instance = null;
    }
    resetPreparedCaches(DEFAULT_ENTRY_CACHE_SIZE);
    host.setLogLevel(host.DEFAULT_LOG_LEVEL);
  }

  function initialize(config) {
    destroy();
    var settings = readConfig(config);
    var defaults = ns.resolveStatefulDefaults(settings.defaults, settings.persisted);
    host.setLogLevel(settings.logLevel);
    resetPreparedCaches(settings.entryCacheSize);
    var state = ns.createStateStore({
      profile: defaults.profile,
      selectedOptimizations: defaults.selectedOptimizations,
      changes: defaults.changes,
      consent: defaults.consent,
      persistenceConsent: defaults.persistenceConsent,
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
    installEvents(instance);
    installFeatures(instance);
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
    experienceDefinitions.recordDocument(baseline);
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

  function resetPreparedCaches(size) {
    preparedEntries = ns.createLruCache(size);
    preparedSelections = ns.createLruCache(size);
    entriesByContent = ns.createLruCache(size);
    selectionsByContent = ns.createLruCache(size);
    experienceDefinitions = ns.createExperienceDefinitions(size);
  }

  function assertKey(method, key) {
    if (typeof key !== 'string' && !(typeof key === 'number' && isFinite(key))) {
      throw new TypeError(method + ' key must be a string or a finite number.');
    }
  }

  // adoptEntry(key, contentKey) / adoptSelections(key, contentKey): when a document with this
  // content key was prepared before (under another key), make `key` refer to it and return true;
  // otherwise return false and the host calls prepare* with the JSON.
  function adoptEntry(key, contentKey) {
    assertKey('adoptEntry', key);
    var record = entriesByContent.get(contentKey);
    if (record === undefined) return false;
    preparedEntries.set(key, record);
    return true;
  }

  function adoptSelections(key, contentKey) {
    assertKey('adoptSelections', key);
    var selections = selectionsByContent.get(contentKey);
    if (selections === undefined) return false;
    preparedSelections.set(key, selections);
    return true;
  }

  // prepareEntry(key, document, entryId?, contentKey?)
  function prepareEntry(key, document, entryId, contentKey) {
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
    experienceDefinitions.recordDocument(document);
    // The record doubles as the resolver's options ({index}).
    var record = { baseline: baseline, index: index };
    preparedEntries.set(key, record);
    if (typeof contentKey === 'string') entriesByContent.set(contentKey, record);
  }

  // prepareSelections(key, selections, contentKey?)
  function prepareSelections(key, selections, contentKey) {
    assertKey('prepareSelections', key);
    if (selections !== null && !Array.isArray(selections)) {
      throw new TypeError('prepareSelections selections must be an array or null.');
    }
    preparedSelections.set(key, selections);
    if (typeof contentKey === 'string') selectionsByContent.set(contentKey, selections);
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

  // ---- consent and events -----------------------------------------------------------------------

  var NOT_INITIALIZED = 'SDK not initialized. Call initialize() first.';

  // Builds the consent controller, event builder, queues, emitter and de-dupe trackers of `target`
  // (a fresh instance) and wires them to the host push-backs.
  function installEvents(target) {
    var state = target.state;
    var settings = target.config;
    installDelivery(target);
    target.consent = ns.consent.createConsentController({
      state: state,
      onPurge: function () {
        target.experienceQueue.purge();
        target.insightsQueue.purge();
      },
    });
    target.builder = ns.createEventBuilder({
      channel: settings.channel,
      library: settings.library,
      getLocale: function () {
        return state.get().locale;
      },
      getConsent: function () {
        return state.get().consent;
      },
    });
    target.events = ns.createEventEmitter({
      consent: target.consent,
      builder: target.builder,
      contexts: target.contexts,
      experienceQueue: target.experienceQueue,
      insightsQueue: target.insightsQueue,
      onEmitted: publishEvent,
      onBlocked: function (blocked) {
        callHost('__nativeOnEventBlocked', [JSON.stringify(blocked)]);
      },
    });
    target.screenTracker = ns.createCurrentStateTracker();
    target.stickyKeys = ns.stickyViews.createStickyViewKeys();
  }

  // The stream object may carry an optimization context whose entries cannot be serialized (a
  // cyclic object graph): then the event is published without it.
  function publishEvent(event) {
    var text;
    try {
      text = JSON.stringify(event);
    } catch (error) {
      host.log('warn', 'An emitted event\'s optimization context cannot be serialized; publishing the event without it.');
      var plain = Object.assign({}, event);
      delete plain.optimization;
      text = JSON.stringify(plain);
    }
    callHost('__nativeOnEventEmitted', [text]);
  }

  var PAYLOAD_TYPES = {
    string: function (v) { return typeof v === 'string'; },
    number: function (v) { return typeof v === 'number'; },
    boolean: function (v) { return typeof v === 'boolean'; },
    object: function (v) { return guards.isRecord(v); },
  };

  function article(type) {
    return type === 'object' ? 'an ' : 'a ';
  }

  // rules: [[key, type, required]]; returns an Error with the spec §8.2 message, or null.
  function validatePayload(method, payload, rules) {
    if (!guards.isRecord(payload)) return new Error(method + ' payload must be an object.');
    for (var i = 0; i < rules.length; i++) {
      var key = rules[i][0];
      var type = rules[i][1];
      var value = payload[key];
      if (rules[i][2]) {
        if (!PAYLOAD_TYPES[type](value)) return new Error(method + ' payload must include ' + article(type) + type + ' "' + key + '".');
      } else if (value !== undefined && !PAYLOAD_TYPES[type](value)) {
        return new Error(method + ' payload "' + key + '" must be ' + article(type) + type + ' when provided.');
      }
    }
    return null;
  }

  // EmissionResult JSON: only `accepted` and (when present) `data`.
  function emission(result) {
    var out = { accepted: !!(result && result.accepted === true) };
    if (result && result.data !== undefined) out.data = result.data;
    return out;
  }

  function thenEmission(outcome, after) {
    if (outcome !== null && typeof outcome === 'object' && typeof outcome.then === 'function') {
      return outcome.then(function (value) {
        if (after) after(value);
        return emission(value);
      });
    }
    if (after) after(outcome);
    return emission(outcome);
  }

  // An async bridge method: (payload, requestId), settled exactly once through settle().
  function asyncMethod(method, rules, run) {
    return function (payload, requestId) {
      if (instance === null) {
        settle(requestId, new Error(NOT_INITIALIZED));
        return;
      }
      var invalid = validatePayload(method, payload, rules);
      if (invalid !== null) {
        settle(requestId, invalid);
        return;
      }
      var outcome;
      try {
        outcome = run(instance, payload);
      } catch (error) {
        outcome = error instanceof Error ? error : new Error(messageOf(error));
      }
      settle(requestId, outcome);
    };
  }

  var SCREEN_RULES = [['name', 'string', true], ['properties', 'object', false], ['routeKey', 'string', false]];

  function screenArgs(payload) {
    return { name: payload.name, properties: payload.properties !== undefined ? payload.properties : {} };
  }

  var identify = asyncMethod('identify', [['userId', 'string', true], ['traits', 'object', false]], function (target, payload) {
    return thenEmission(target.events.identify(payload));
  });

  var page = asyncMethod('page', [], function (target, payload) {
    return thenEmission(target.events.page(payload));
  });

  var screen = asyncMethod('screen', SCREEN_RULES, function (target, payload) {
    return thenEmission(target.events.screen(screenArgs(payload)));
  });

  // De-duplicated by routeKey ?? name (B10). The bridge gates and reports the block itself
  // (DECISIONS 6), so core.screen never reports the same call a second time.
  var trackCurrentScreen = asyncMethod('trackCurrentScreen', SCREEN_RULES, function (target, payload) {
    if (!target.consent.hasConsent('screen')) return emission(target.events.block('trackCurrentScreen', payload));
    var key = payload.routeKey !== undefined ? payload.routeKey : payload.name;
    return thenEmission(target.screenTracker.track(key, function () {
      return target.events.screen(screenArgs(payload));
    }));
  });

  // The builder defaults `properties` to {}; the payload goes to the core unchanged, so a blocked
  // call reports exactly what the host sent (C2).
  var track = asyncMethod('track', [['event', 'string', true], ['properties', 'object', false]], function (target, payload) {
    return thenEmission(target.events.track(payload));
  });

  var TRACK_VIEW_RULES = [
    ['componentId', 'string', true], ['viewId', 'string', true], ['variantIndex', 'number', true],
    ['viewDurationMs', 'number', true], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
    ['sticky', 'boolean', false], ['stickyTrackingKey', 'string', false],
  ];

  // Sticky de-dupe (spec §8.2): key = stickyTrackingKey ?? viewId; the view is sent sticky only
  // if payload.sticky === true and the key has not been accepted yet; the key is remembered once
  // a sticky view was accepted.
  var trackView = asyncMethod('trackView', TRACK_VIEW_RULES, function (target, payload) {
    var sticky = ns.stickyViews;
    var key = payload.stickyTrackingKey !== undefined ? payload.stickyTrackingKey : payload.viewId;
    var sendSticky = sticky.shouldSendStickyEntryView(payload.sticky, target.stickyKeys.has(key));
    var args = Object.assign({}, payload);
    delete args.stickyTrackingKey;
    if (sendSticky) args.sticky = true;
    else delete args.sticky;
    return thenEmission(target.events.trackView(args), function (result) {
      if (sticky.shouldRememberStickyEntryView(sendSticky, !!(result && result.accepted === true))) target.stickyKeys.remember(key);
    });
  });

  var trackClick = asyncMethod('trackClick', [
    ['componentId', 'string', true], ['variantIndex', 'number', true],
    ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
  ], function (target, payload) {
    return thenEmission(target.events.trackClick(payload));
  });

  function consent(input) {
    if (instance === null) return;
    instance.consent.set(input);
  }

  function hasConsent(method) {
    if (instance === null) return false;
    return instance.consent.hasConsent(method);
  }

  function setOnline(online) {
    if (typeof online !== 'boolean') throw new TypeError('setOnline expects a boolean.');
    if (instance === null) {
      carried.online = online;
      return;
    }
    var wasOnline = instance.state.get().online;
    instance.state.set({ online: online });
    if (online && !wasOnline) reconnect(instance);
  }

  // ---- delivery ---------------------------------------------------------------------------------

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
        if (instance !== target) return;
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
    if (instance === null) {
      settle(requestId, new Error(NOT_INITIALIZED));
      return;
    }
    var target = instance;
    settle(requestId, target.insightsQueue.flush().then(function () {
      return target.experienceQueue.flush();
    }).then(function () {
      return null;
    }));
  }

  function queueSizes() {
    if (instance === null) return JSON.stringify({ experience: 0, insights: 0 });
    return JSON.stringify({ experience: instance.experienceQueue.size(), insights: instance.insightsQueue.size() });
  }

  // ---- flags, merge tags, preview overrides, locale and reset -----------------------------------

  // Builds the flag tracker and the preview override manager of `target` (after installEvents).
  function installFeatures(target) {
    var state = target.state;
    target.flags = ns.createFlagTracker({ state: state, emitter: target.events });
    target.previewPanelOpen = false;
    target.previewDefinitions = null;
    target.overrides = ns.createPreviewOverrideManager({
      state: state,
      definitions: {
        get: function (id) {
          return experienceDefinitions.get(id);
        },
      },
      onChange: function () {
        pushOverrides(target);
      },
    });
    // After an intercepted Experience response, push the preview state once the response's
    // state change was applied (spec §8.1: after every API refresh).
    target.unsubscribeOverrides = state.subscribe(function () {
      if (target.overrides.takeRefresh()) pushOverrides(target);
    });
  }

  function teardownFeatures(target) {
    if (target.unsubscribeOverrides) target.unsubscribeOverrides();
    if (target.flags) target.flags.destroy();
    if (target.overrides) target.overrides.destroy();
  }

  function pushOverrides(target) {
    if (typeof globalThis.__nativeOnOverridesChanged !== 'function') return;
    callHost('__nativeOnOverridesChanged', [JSON.stringify(previewState(target))]);
  }

  function flagJSON(value) {
    return JSON.stringify(value === undefined ? null : value);
  }

  function getFlag(name) {
    if (typeof name !== 'string') throw new TypeError('getFlag name must be a string.');
    if (instance === null) return 'null';
    return flagJSON(instance.flags.getFlag(name));
  }

  // observeFlag(subId, name): replaces subscription `subId`; the current value is pushed to
  // __nativeOnFlagValueChanged(subId, json) before this returns, then every distinct value.
  // No-op before initialize.
  function observeFlag(subId, name) {
    if (typeof subId !== 'string') throw new TypeError('observeFlag subscription id must be a string.');
    if (typeof name !== 'string') throw new TypeError('observeFlag name must be a string.');
    if (instance === null) return;
    instance.flags.observe(subId, name, function (value) {
      callHost('__nativeOnFlagValueChanged', [subId, flagJSON(value)]);
    });
  }

  function unobserveFlag(subId) {
    if (instance === null) return;
    instance.flags.unobserve(subId);
  }

  // getMergeTagValue(entry, profile?): `profile` undefined ⇒ the current profile.
  function getMergeTagValue(entry, profile) {
    if (instance === null) return null;
    var value = ns.mergeTags.resolve(entry, profile === undefined ? instance.state.get().profile : profile);
    return value === undefined ? null : value;
  }

  function getProfile() {
    if (instance === null) return null;
    var profile = instance.state.get().profile;
    return profile === undefined ? null : JSON.stringify(profile);
  }

  // setLocale(locale) → the normalised locale (null before initialize). Invalid input throws the
  // spec §8.3 message and leaves the state unchanged. Events and Experience requests read the
  // state's locale when they are built/sent.
  function setLocale(value) {
    if (instance === null) return null;
    var normalized = locale.normalizeExplicitLocale(value);
    instance.state.set({ locale: normalized });
    return normalized;
  }

  // reset() (spec §6.5, native §4.5): clears the profile, changes, selections, contexts, preview
  // overrides (and their baseline), the anonymous id, the current-screen de-dupe, the accepted
  // sticky keys and the flag-view de-dupe; experienceRequestState back to idle. Consent, locale,
  // online, flag subscriptions and queued events are kept. One state push. No-op before
  // initialize.
  function reset() {
    if (instance === null) return;
    var target = instance;
    target.state.batch(function () {
      target.anonymousId = undefined;
      target.screenTracker.reset();
      target.stickyKeys.clear();
      target.contexts.clear();
      target.flags.reset();
      target.overrides.clear();
      target.state.set({
        profile: undefined,
        changes: undefined,
        selectedOptimizations: undefined,
        experienceRequestState: { status: 'idle' },
      });
    });
    pushOverrides(target);
  }

  function isStringList(value) {
    return Array.isArray(value) && value.every(isString);
  }

  // overrideAudience(audId, qualified, expIds): qualified true activates the audience (its
  // experiences → variant 1), false deactivates it (→ 0). No-op before initialize.
  function overrideAudience(audienceId, qualified, experienceIds) {
    if (!isString(audienceId)) throw new TypeError('overrideAudience audience id must be a string.');
    if (!isBoolean(qualified)) throw new TypeError('overrideAudience qualified must be a boolean.');
    var ids = absent(experienceIds) ? [] : experienceIds;
    if (!isStringList(ids)) throw new TypeError('overrideAudience experience ids must be an array of strings.');
    if (instance === null) return;
    if (qualified) instance.overrides.activateAudience(audienceId, ids);
    else instance.overrides.deactivateAudience(audienceId, ids);
  }

  function overrideVariant(experienceId, variantIndex) {
    if (!isString(experienceId)) throw new TypeError('overrideVariant experience id must be a string.');
    if (!Number.isInteger(variantIndex) || variantIndex < 0) {
      throw new TypeError('overrideVariant variant index must be a non-negative integer.');
    }
    if (instance === null) return;
    instance.overrides.setVariantOverride(experienceId, variantIndex);
  }

  function resetVariantOverride(experienceId) {
    if (instance === null) return;
    instance.overrides.resetOptimizationOverride(experienceId);
  }

  function resetAudienceOverride(audienceId) {
    if (instance === null) return;
    instance.overrides.resetAudienceOverride(audienceId);
  }

  function resetAllOverrides() {
    if (instance === null) return;
    instance.overrides.resetAll();
  }

  function setPreviewPanelOpen(open) {
    if (!isBoolean(open)) throw new TypeError('setPreviewPanelOpen expects a boolean.');
    if (instance === null) return;
    instance.previewPanelOpen = open;
  }

  function entriesOfType(collection, contentType) {
    return collection.items.filter(function (item) {
      return guards.isResolvedEntry(item) && item.sys.contentType.sys.id === contentType;
    });
  }

  // loadDefinitions(audiences, experiences): two CDA collections ({items, includes?}) of
  // nt_audience and nt_experience entries; builds the preview model's definitions and records
  // the experiences for flag derivation. → JSON {audienceCount, experienceCount} or {error}.
  function loadDefinitions(audienceCollection, experienceCollection) {
    var valid = function (value) {
      return guards.isRecord(value) && Array.isArray(value.items);
    };
    if (!valid(audienceCollection) || !valid(experienceCollection)) {
      return JSON.stringify({ error: 'loadDefinitions expects two collections with an "items" array.' });
    }
    if (instance === null) return JSON.stringify({ error: NOT_INITIALIZED });
    var names = new Map();
    [audienceCollection, experienceCollection].forEach(function (collection) {
      var document = { sys: { type: 'Array' }, items: collection.items, includes: collection.includes };
      entryIndex.buildEntryIndex(document).forEach(function (entry, id) {
        if (!names.has(id)) names.set(id, entry);
      });
    });
    var audiences = entriesOfType(audienceCollection, 'nt_audience');
    var experiences = entriesOfType(experienceCollection, 'nt_experience');
    experiences.forEach(function (entry) {
      experienceDefinitions.record(entry, names);
    });
    instance.previewDefinitions = { audiences: audiences, experiences: experiences, names: names };
    pushOverrides(instance);
    return JSON.stringify({ audienceCount: audiences.length, experienceCount: experiences.length });
  }

  function nameMap(entries, idOf) {
    var map = {};
    entries.forEach(function (entry) {
      var id = idOf(entry);
      map[id] = typeof entry.fields.nt_name === 'string' ? entry.fields.nt_name : id;
    });
    return map;
  }

  function previewState(target) {
    var snapshot = target.state.get();
    var out = bridgeState(snapshot);
    var overrides = target.overrides.snapshot();
    out.previewPanelOpen = target.previewPanelOpen;
    out.audienceOverrides = overrides.audienceOverrides;
    out.variantOverrides = overrides.variantOverrides;
    out.defaultAudienceQualifications = overrides.defaultAudienceQualifications;
    out.defaultVariantIndices = overrides.defaultVariantIndices;
    var definitions = target.previewDefinitions;
    if (definitions === null) {
      out.previewModel = null;
      out.audienceNameMap = {};
      out.experienceNameMap = {};
    } else {
      out.previewModel = ns.previewOverrides.buildPreviewModel(definitions.audiences, definitions.experiences,
        definitions.names, snapshot.selectedOptimizations, snapshot.profile, target.overrides);
      out.audienceNameMap = nameMap(definitions.audiences, function (entry) {
        return isString(entry.fields.nt_audience_id) ? entry.fields.nt_audience_id : entry.sys.id;
      });
      out.experienceNameMap = nameMap(definitions.experiences, ns.previewOverrides.experienceIdOf);
    }
    return out;
  }

  // getPreviewState() → JSON: BridgeState + previewPanelOpen, audienceOverrides,
  // variantOverrides, defaultAudienceQualifications, defaultVariantIndices, previewModel (null
  // until loadDefinitions), audienceNameMap, experienceNameMap. "null" before initialize.
  function getPreviewState() {
    if (instance === null) return 'null';
    return JSON.stringify(previewState(instance));
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
    adoptEntry: adoptEntry,
    adoptSelections: adoptSelections,
    resolvePrepared: resolvePrepared,
    identify: identify,
    page: page,
    screen: screen,
    trackCurrentScreen: trackCurrentScreen,
    track: track,
    trackView: trackView,
    trackClick: trackClick,
    consent: consent,
    hasConsent: hasConsent,
    setOnline: setOnline,
    flush: flush,
    queueSizes: queueSizes,
    getFlag: getFlag,
    observeFlag: observeFlag,
    unobserveFlag: unobserveFlag,
    getMergeTagValue: getMergeTagValue,
    getProfile: getProfile,
    setLocale: setLocale,
    reset: reset,
    overrideAudience: overrideAudience,
    overrideVariant: overrideVariant,
    resetVariantOverride: resetVariantOverride,
    resetAudienceOverride: resetAudienceOverride,
    resetAllOverrides: resetAllOverrides,
    setPreviewPanelOpen: setPreviewPanelOpen,
    loadDefinitions: loadDefinitions,
    getPreviewState: getPreviewState,
  };
})();
