// core/event-builder.js
// Contract: `__optimization.createEventBuilder(options)` → builders of the wire events
// (the payloads the Experience and Insights APIs receive). Options (all optional):
//   channel              string, default "server"
//   library              {name, version}, default {name: "optimization-js-core", version: "0.0.0"}
//   getLocale()          the SDK locale (undefined ⇒ "en-US")
//   getConsent()         the event consent; `context.gdpr.isConsentGiven = (consent === true)`,
//                        evaluated when the event is built
//   getPageProperties()  page-properties provider (the default page when absent or undefined)
//   getNow()             ms since the epoch for the events' timestamps (default host.now()): a
//                        host that passes the time with its call saves a clock crossing
//   app                  {name, version}, stamped as context.app when given
// Builders (each returns a NEW plain JSON object; input is never mutated; unknown input keys are
// dropped, so `optimizationContextId`, `sticky`, `stickyTrackingKey`, `profile` never reach a
// payload; a wrongly typed known key throws a TypeError naming it):
//   buildIdentify({userId, traits?})              type "identify", traits default {}, userId
//   buildPageView({name?, properties?, page?})    type "page"; properties = deep merge of the
//                                                 provider page (or the default page, title "")
//                                                 and the caller's properties; context.page =
//                                                 caller `page` ?? properties
//   buildScreenView({name, properties?, screen?}) type "screen"; properties = {name, ...caller};
//                                                 context.screen = caller `screen` ?? {name}; no
//                                                 context.page
//   buildTrack({event, properties?})              type "track", properties default {}
//   buildView({componentId, viewId, viewDurationMs, experienceId?, variantIndex?})
//                                                 type "component", componentType "Entry"
//   buildFlagView({componentId, experienceId?, variantIndex?, viewId?, viewDurationMs?})
//                                                 type "component", componentType "Variable"
//   buildClick({componentId, experienceId?, variantIndex?})   type "component_click", "Entry"
//   buildHover({componentId, hoverId, hoverDurationMs, experienceId?, variantIndex?})
//                                                 type "component_hover", "Entry"
//   buildNodeView / buildNodeClick / buildNodeHover({entityId, entityKind, entityKindId?,
//       optimizationId?, parentExperienceId?, variantId?, entryIds?, parameters?, variantIndex?,
//       + viewId, viewDurationMs (view) | hoverId, hoverDurationMs (hover)})
//                                                 types "exo_node_view" / "exo_node_click" /
//                                                 "exo_node_hover" (API v2): no componentId or
//                                                 componentType
// Universal input keys every builder accepts: app, campaign, locale, location, page, screen,
// userAgent. Universal output: channel; context {app?, campaign, gdpr, library, locale,
// location?, page (not on screen events), screen?, userAgent?}; messageId = host.randomUUID();
// originalTimestamp = sentAt = timestamp = new Date(host.now()).toISOString() (build time).
// context.campaign = caller `campaign` ?? UTM parameters of the page URL (utm_campaign→name,
// utm_source→source, utm_medium→medium, utm_term→term, utm_content→content; present but empty
// ⇒ ""); an empty or unparseable URL gives {}; the referrer is never read. For page events the
// URL is properties.url when it is a non-empty string, else context.page.url.
// Also published: `__optimization.eventBuilder.{campaignFromUrl, defaultPage}`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/event-builder.js', {
    provides: ['createEventBuilder', 'eventBuilder'],
    uses: ['host', 'polyfills.URL'],
  });
  var host = ns.host;

  var DEFAULT_LIBRARY = { name: 'optimization-js-core', version: '0.0.0' };
  var DEFAULT_LOCALE = 'en-US';
  var UTM_KEYS = [
    ['utm_campaign', 'name'],
    ['utm_source', 'source'],
    ['utm_medium', 'medium'],
    ['utm_term', 'term'],
    ['utm_content', 'content'],
  ];

  function defaultPage() {
    return { path: '', query: {}, referrer: '', search: '', title: '', url: '' };
  }

  function isPlainObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  // A copy with JSON's meaning (what JSON.parse(JSON.stringify(value)) gives), built directly
  // for plain JSON values: no text in between. A value JSON would transform (a toJSON method,
  // a non-finite number, a function or undefined inside, a non-plain object) takes the JSON
  // round trip itself, so the result is the same either way.
  function clone(value) {
    if (value === undefined) return undefined;
    var copy = copyPlain(value, 0);
    return copy !== NOT_PLAIN ? copy : JSON.parse(JSON.stringify(value));
  }

  var NOT_PLAIN = {};
  // Deeper than this, the JSON round trip decides (and reports a cycle as JSON does).
  var MAX_PLAIN_DEPTH = 64;

  function copyPlain(value, depth) {
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
    if (typeof value === 'number') return isFinite(value) ? value : NOT_PLAIN;
    if (typeof value !== 'object' || depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
    var copy, item, i;
    if (Array.isArray(value)) {
      copy = new Array(value.length);
      for (i = 0; i < value.length; i++) {
        item = copyPlain(value[i], depth + 1);
        if (item === NOT_PLAIN) return NOT_PLAIN;
        copy[i] = item;
      }
      return copy;
    }
    var prototype = Object.getPrototypeOf(value);
    if ((prototype !== Object.prototype && prototype !== null) || typeof value.toJSON === 'function') return NOT_PLAIN;
    copy = {};
    var keys = Object.keys(value);
    for (i = 0; i < keys.length; i++) {
      // An own "__proto__" key (JSON.parse makes one) would set the copy's prototype.
      if (keys[i] === '__proto__') return NOT_PLAIN;
      item = copyPlain(value[keys[i]], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[keys[i]] = item;
    }
    return copy;
  }

  // Deep merge of plain objects (arrays and scalars of `patch` replace); returns a new object.
  function deepMerge(base, patch) {
    var result = clone(base);
    Object.keys(patch).forEach(function (key) {
      var value = patch[key];
      if (value === undefined) return;
      if (isPlainObject(value) && isPlainObject(result[key])) result[key] = deepMerge(result[key], value);
      else result[key] = clone(value);
    });
    return result;
  }

  function campaignFromUrl(url) {
    // Without a `?` a URL has no query, so no UTM parameter: no parse.
    if (typeof url !== 'string' || url.indexOf('?') === -1) return {};
    var URLClass = globalThis.URL || (ns.polyfills && ns.polyfills.URL);
    var params;
    try {
      params = new URLClass(url).searchParams;
    } catch (error) {
      return {};
    }
    var campaign = {};
    UTM_KEYS.forEach(function (pair) {
      if (params.has(pair[0])) campaign[pair[1]] = params.get(pair[0]);
    });
    return campaign;
  }

  // ---- input checks -----------------------------------------------------------------------------

  var CHECKS = {
    string: function (v) { return typeof v === 'string'; },
    number: function (v) { return typeof v === 'number' && isFinite(v); },
    object: isPlainObject,
    strings: function (v) { return Array.isArray(v) && v.every(function (e) { return typeof e === 'string'; }); },
  };

  var TYPE_NAMES = { string: 'a string', number: 'a number', object: 'an object', strings: 'an array of strings' };

  function typeError(kind, key, type) {
    return new TypeError('Invalid ' + kind + ' event: "' + key + '" must be ' + TYPE_NAMES[type] + '.');
  }

  function required(kind, input, key, type) {
    if (!CHECKS[type](input[key])) throw typeError(kind, key, type);
    return input[key];
  }

  function optional(kind, input, key, type) {
    var value = input[key];
    if (value === undefined || value === null) return undefined;
    if (!CHECKS[type](value)) throw typeError(kind, key, type);
    return value;
  }

  function readInput(kind, input) {
    if (input === undefined || input === null) return {};
    if (!isPlainObject(input)) throw new TypeError('Invalid ' + kind + ' event: the input must be an object.');
    return input;
  }

  function createEventBuilder(options) {
    var settings = isPlainObject(options) ? options : {};
    var channel = typeof settings.channel === 'string' ? settings.channel : 'server';
    var library = isPlainObject(settings.library) ? { name: settings.library.name, version: settings.library.version } : clone(DEFAULT_LIBRARY);
    var app = isPlainObject(settings.app) ? clone(settings.app) : undefined;

    function sdkLocale() {
      var value = typeof settings.getLocale === 'function' ? settings.getLocale() : undefined;
      return typeof value === 'string' && value.length > 0 ? value : undefined;
    }

    function consentGiven() {
      return typeof settings.getConsent === 'function' && settings.getConsent() === true;
    }

    function providedPage() {
      var page = typeof settings.getPageProperties === 'function' ? settings.getPageProperties() : undefined;
      return isPlainObject(page) ? clone(page) : undefined;
    }

    // The universal part of every event. `page` is the resolved context page (undefined for
    // screen events); `campaignUrl` the URL UTM parameters are read from.
    function universal(kind, input, page, campaignUrl) {
      var campaign = optional(kind, input, 'campaign', 'object');
      var locale = optional(kind, input, 'locale', 'string');
      var location = optional(kind, input, 'location', 'object');
      var screen = optional(kind, input, 'screen', 'object');
      var userAgent = optional(kind, input, 'userAgent', 'string');
      var callerApp = optional(kind, input, 'app', 'object');
      var context = {};
      if (callerApp !== undefined || app !== undefined) context.app = clone(callerApp !== undefined ? callerApp : app);
      context.campaign = campaign !== undefined ? clone(campaign) : campaignFromUrl(campaignUrl);
      context.gdpr = { isConsentGiven: consentGiven() };
      context.library = { name: library.name, version: library.version };
      context.locale = locale !== undefined ? locale : sdkLocale() || DEFAULT_LOCALE;
      if (location !== undefined) context.location = clone(location);
      if (page !== undefined) context.page = page;
      if (screen !== undefined) context.screen = clone(screen);
      if (userAgent !== undefined) context.userAgent = userAgent;
      var time = new Date(typeof settings.getNow === 'function' ? settings.getNow() : host.now()).toISOString();
      return {
        channel: channel,
        context: context,
        messageId: host.randomUUID(),
        originalTimestamp: time,
        sentAt: time,
        timestamp: time,
      };
    }

    // context.page for non-page events: caller page ?? provider ?? default.
    function contextPage(kind, input) {
      var page = optional(kind, input, 'page', 'object');
      if (page !== undefined) return clone(page);
      return providedPage() || defaultPage();
    }

    function withUniversal(event, kind, input) {
      var page = contextPage(kind, input);
      return Object.assign(event, universal(kind, input, page, page.url));
    }

    function buildIdentify(rawInput) {
      var input = readInput('identify', rawInput);
      var userId = required('identify', input, 'userId', 'string');
      var traits = optional('identify', input, 'traits', 'object');
      var event = { type: 'identify', traits: traits !== undefined ? clone(traits) : {} };
      withUniversal(event, 'identify', input);
      event.userId = userId;
      return event;
    }

    function buildPageView(rawInput) {
      var input = readInput('page', rawInput);
      var name = optional('page', input, 'name', 'string');
      var callerProperties = optional('page', input, 'properties', 'object');
      var callerPage = optional('page', input, 'page', 'object');
      var base = providedPage() || defaultPage();
      if (base.title === undefined) base.title = '';
      var properties = deepMerge(base, callerProperties || {});
      var page = callerPage !== undefined ? clone(callerPage) : clone(properties);
      var campaignUrl = typeof properties.url === 'string' && properties.url.length > 0 ? properties.url : page.url;
      var event = { type: 'page' };
      if (name !== undefined) event.name = name;
      event.properties = properties;
      return Object.assign(event, universal('page', input, page, campaignUrl));
    }

    function buildScreenView(rawInput) {
      var input = readInput('screen', rawInput);
      var name = required('screen', input, 'name', 'string');
      var callerProperties = optional('screen', input, 'properties', 'object');
      var properties = Object.assign({ name: name }, clone(callerProperties || {}));
      var event = { type: 'screen', name: name, properties: properties };
      var screenInput = input.screen === undefined || input.screen === null
        ? Object.assign({}, input, { screen: { name: name } })
        : input;
      return Object.assign(event, universal('screen', screenInput, undefined, undefined));
    }

    function buildTrack(rawInput) {
      var input = readInput('track', rawInput);
      var name = required('track', input, 'event', 'string');
      var properties = optional('track', input, 'properties', 'object');
      var event = { type: 'track', event: name, properties: properties !== undefined ? clone(properties) : {} };
      return withUniversal(event, 'track', input);
    }

    function interaction(kind, type, componentType, input) {
      var event = {
        type: type,
        componentType: componentType,
        componentId: required(kind, input, 'componentId', 'string'),
      };
      var experienceId = optional(kind, input, 'experienceId', 'string');
      if (experienceId !== undefined) event.experienceId = experienceId;
      var variantIndex = optional(kind, input, 'variantIndex', 'number');
      event.variantIndex = variantIndex !== undefined ? variantIndex : 0;
      return event;
    }

    function buildView(rawInput) {
      var input = readInput('component', rawInput);
      var event = interaction('component', 'component', 'Entry', input);
      event.viewId = required('component', input, 'viewId', 'string');
      event.viewDurationMs = required('component', input, 'viewDurationMs', 'number');
      return withUniversal(event, 'component', input);
    }

    function buildFlagView(rawInput) {
      var input = readInput('component', rawInput);
      var event = interaction('component', 'component', 'Variable', input);
      var viewId = optional('component', input, 'viewId', 'string');
      var viewDurationMs = optional('component', input, 'viewDurationMs', 'number');
      if (viewId !== undefined) event.viewId = viewId;
      if (viewDurationMs !== undefined) event.viewDurationMs = viewDurationMs;
      return withUniversal(event, 'component', input);
    }

    function buildClick(rawInput) {
      var input = readInput('component_click', rawInput);
      return withUniversal(interaction('component_click', 'component_click', 'Entry', input), 'component_click', input);
    }

    function buildHover(rawInput) {
      var input = readInput('component_hover', rawInput);
      var event = interaction('component_hover', 'component_hover', 'Entry', input);
      event.hoverId = required('component_hover', input, 'hoverId', 'string');
      event.hoverDurationMs = required('component_hover', input, 'hoverDurationMs', 'number');
      return withUniversal(event, 'component_hover', input);
    }

    // The Experiences (ExO) node events of API v2: the entity named by its id and kind, and
    // optionally the optimization, variant and entries it rendered; no componentId/Type.
    var NODE_STRINGS = ['entityKindId', 'optimizationId', 'parentExperienceId', 'variantId'];

    function node(type, input) {
      var event = {
        type: type,
        entityId: required(type, input, 'entityId', 'string'),
        entityKind: required(type, input, 'entityKind', 'string'),
      };
      NODE_STRINGS.forEach(function (key) {
        var value = optional(type, input, key, 'string');
        if (value !== undefined) event[key] = value;
      });
      var entryIds = optional(type, input, 'entryIds', 'strings');
      if (entryIds !== undefined) event.entryIds = entryIds.slice();
      var parameters = optional(type, input, 'parameters', 'object');
      if (parameters !== undefined) event.parameters = clone(parameters);
      var variantIndex = optional(type, input, 'variantIndex', 'number');
      if (variantIndex !== undefined) event.variantIndex = variantIndex;
      return event;
    }

    function buildNodeView(rawInput) {
      var input = readInput('exo_node_view', rawInput);
      var event = node('exo_node_view', input);
      event.viewId = required('exo_node_view', input, 'viewId', 'string');
      event.viewDurationMs = required('exo_node_view', input, 'viewDurationMs', 'number');
      return withUniversal(event, 'exo_node_view', input);
    }

    function buildNodeClick(rawInput) {
      var input = readInput('exo_node_click', rawInput);
      return withUniversal(node('exo_node_click', input), 'exo_node_click', input);
    }

    function buildNodeHover(rawInput) {
      var input = readInput('exo_node_hover', rawInput);
      var event = node('exo_node_hover', input);
      event.hoverId = required('exo_node_hover', input, 'hoverId', 'string');
      event.hoverDurationMs = required('exo_node_hover', input, 'hoverDurationMs', 'number');
      return withUniversal(event, 'exo_node_hover', input);
    }

    return {
      buildNodeView: buildNodeView,
      buildNodeClick: buildNodeClick,
      buildNodeHover: buildNodeHover,
      buildIdentify: buildIdentify,
      buildPageView: buildPageView,
      buildScreenView: buildScreenView,
      buildTrack: buildTrack,
      buildView: buildView,
      buildFlagView: buildFlagView,
      buildClick: buildClick,
      buildHover: buildHover,
    };
  }

  ns.createEventBuilder = createEventBuilder;
  ns.eventBuilder = { campaignFromUrl: campaignFromUrl, defaultPage: defaultPage };
})();
