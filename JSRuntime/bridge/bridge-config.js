// bridge/bridge-config.js
// Contract: `__optimization.bridgeConfig.read(config)` validates the `initialize` config
// (JSRuntime/README.md "initialize config") and returns the normalised settings
// ({clientId, environment, locale, logLevel, allowedEventTypes, channel, library, entryCacheSize,
// api, defaults, persisted}); it throws an Error whose message names the key
// (`initialize config "<key>" must be <type> when provided.`), also for a key it does not know
// (`initialize config "<key>" is not a known key.`): a host sending a setting this core no longer
// reads (such as `queuePolicy`) learns it at once instead of running without it.
// `__optimization.bridgeConfig.DEFAULT_ENTRY_CACHE_SIZE` is 1000.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-config.js', {
    provides: ['bridgeConfig'],
    uses: ['DEFAULT_ALLOWED_EVENT_TYPES', 'apiResponse', 'bridgeShared', 'guards', 'host', 'locale'],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var absent = shared.absent;
  var isString = shared.isString;
  var isBoolean = shared.isBoolean;
  var locale = ns.locale;

  var DEFAULT_ENTRY_CACHE_SIZE = 1000;
  var LOG_LEVEL_NAMES = Object.keys(host.LOG_LEVELS);
  function configError(text) {
    return new Error('initialize config ' + text);
  }

  var CONFIG_KEYS = ['spaceId', 'clientId', 'apiVersion', 'environment', 'locale', 'logLevel', 'allowedEventTypes', 'channel',
    'library', 'entryCacheSize', 'api', 'defaults', 'persisted'];
  var DEFAULTS_KEYS = ['consent', 'persistenceConsent', 'profile', 'changes', 'selectedOptimizations', 'anonymousId'];
  var API_KEYS = ['experienceBaseUrl', 'insightsBaseUrl', 'enabledFeatures', 'preflight'];

  // Throws for the first key of `object` not in `known`; `prefix` names the enclosing key.
  function refuseUnknownKeys(object, known, prefix) {
    var keys = Object.keys(object);
    for (var index = 0; index < keys.length; index++) {
      if (known.indexOf(keys[index]) === -1) throw configError('"' + (prefix || '') + keys[index] + '" is not a known key.');
    }
  }

  // `prefix` names the enclosing key ("defaults.") in the message.
  function optional(object, key, check, typeName, prefix) {
    var value = object[key];
    if (absent(value)) return undefined;
    if (!check(value)) throw configError('"' + (prefix || '') + key + '" must be ' + typeName + ' when provided.');
    return value;
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

  function readDefaults(value, name) {
    if (absent(value)) return {};
    if (!guards.isRecord(value)) throw configError('"' + name + '" must be an object when provided.');
    var owner = name + '.';
    refuseUnknownKeys(value, DEFAULTS_KEYS, owner);
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
  // string[], preflight?: boolean}. `insightsBaseUrl` is only checked: the host sends Insights.
  function readApi(value) {
    if (absent(value)) return {};
    if (!guards.isRecord(value)) throw configError('"api" must be an object when provided.');
    var owner = 'api.';
    refuseUnknownKeys(value, API_KEYS, owner);
    return {
      experienceBaseUrl: optional(value, 'experienceBaseUrl', isString, 'a string', owner),
      insightsBaseUrl: optional(value, 'insightsBaseUrl', isString, 'a string', owner),
      enabledFeatures: optional(value, 'enabledFeatures', isStringArray, 'an array of strings', owner),
      preflight: optional(value, 'preflight', isBoolean, 'a boolean', owner),
    };
  }

  function readConfig(config) {
    if (!guards.isRecord(config)) throw configError('must be an object.');
    refuseUnknownKeys(config, CONFIG_KEYS);
    var tenant = ns.apiResponse.readTenant(config, configError, false);
    var allowed = optional(config, 'allowedEventTypes', isStringArray, 'an array of strings');
    return {
      clientId: tenant.clientId,
      apiVersion: tenant.apiVersion,
      environment: tenant.environment,
      locale: absent(config.locale) ? undefined : locale.normalizeExplicitLocale(config.locale),
      logLevel: optional(config, 'logLevel', isLogLevel, 'one of ' + LOG_LEVEL_NAMES.join(', ')) || host.DEFAULT_LOG_LEVEL,
      allowedEventTypes: allowed === undefined ? ns.DEFAULT_ALLOWED_EVENT_TYPES.slice() : allowed.slice(),
      channel: optional(config, 'channel', isString, 'a string') || 'server',
      library: optional(config, 'library', isLibrary, 'an object with string "name" and "version"'),
      entryCacheSize: optional(config, 'entryCacheSize', isPositiveInteger, 'a positive integer') || DEFAULT_ENTRY_CACHE_SIZE,
      api: readApi(config.api),
      defaults: readDefaults(config.defaults, 'defaults'),
      // What the host persisted (same shape as defaults); resolved against `defaults`
      // by ns.resolveStatefulDefaults (configured values win).
      persisted: readDefaults(config.persisted, 'persisted'),
    };
  }

  ns.bridgeConfig = { read: readConfig, DEFAULT_ENTRY_CACHE_SIZE: DEFAULT_ENTRY_CACHE_SIZE };
})();
