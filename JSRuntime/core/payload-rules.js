// core/payload-rules.js
// Contract: `__optimization.payloadRules` — validation of event-method payloads with their error
// messages, shared by the stateful bridge (bridge/bridge-events.js) and the request-scoped service
// (service/request-events.js).
//   validate(method, payload, rules) → Error | null   `rules` is a list of [key, type, required]
//       with type "string" | "number" | "boolean" | "object". Messages:
//       `<method> payload must be an object.`, `<method> payload must include a|an <type> "<key>".`,
//       `<method> payload "<key>" must be a|an <type> when provided.`
//   IDENTIFY, PAGE, SCREEN, TRACK, TRACK_VIEW, TRACK_CLICK, TRACK_HOVER, TRACK_FLAG_VIEW   the
//       rules of each method.
//   EVENT_METHODS   THE list of event calls, which the emitter (core/event-emitter.js), the
//       bridge (bridge/bridge-events.js, bridge.js) and the service (service/request-events.js)
//       build their methods from: {<method>: {rules, build, path}} where `build` names the
//       event builder's function (core/event-builder.js) and `path` is "experience" or
//       "insights" (trackView: a sticky view goes to the Experience API first); `enrich`: the
//       published event carries the optimization context of `optimizationContextId`;
//       `apiVersion`: the only API version that takes the event (the ExO node events
//       trackNodeView/Click/Hover need "v2"). Adding an event type = its rules and entry here
//       plus its builder.
//   checkApiVersion(method, apiVersion) → Error | null
//   Types of a rule: "string", "number", "boolean", "object", "stringArray", "count" (an integer
//       ≥ 0), "whole" (an integer ≥ 0 named "a number" when missing or not a number), "entityKind"
//       (Experience, Fragment, InlineFragment or InlineComponent). Every duration and index an
//       event carries is a count or whole: a number that is negative, fractional or not finite
//       fails with `<method> payload "<key>" must be an integer ≥ 0.` before anything is built.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/payload-rules.js', { provides: ['payloadRules'] });

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isCount(v) {
    return typeof v === 'number' && Math.floor(v) === v && v >= 0 && isFinite(v);
  }

  var TYPES = {
    string: function (v) { return typeof v === 'string'; },
    number: function (v) { return typeof v === 'number'; },
    boolean: function (v) { return typeof v === 'boolean'; },
    object: isRecord,
    stringArray: function (v) { return Array.isArray(v) && v.every(function (e) { return typeof e === 'string'; }); },
    count: isCount,
    whole: isCount,
    entityKind: function (v) { return ENTITY_KINDS.indexOf(v) !== -1; },
  };

  // The Experiences entities an exo_node event can name.
  var ENTITY_KINDS = ['Experience', 'Fragment', 'InlineFragment', 'InlineComponent'];

  // How a message names each type.
  var TYPE_NAMES = {
    string: 'a string', number: 'a number', boolean: 'a boolean', object: 'an object', stringArray: 'an array of strings',
    count: 'an integer ≥ 0', whole: 'a number', entityKind: 'one of ' + ENTITY_KINDS.join(', '),
  };

  function validate(method, payload, rules) {
    if (!isRecord(payload)) return new Error(method + ' payload must be an object.');
    for (var i = 0; i < rules.length; i++) {
      var key = rules[i][0];
      var type = rules[i][1];
      var value = payload[key];
      if (value !== undefined && typeof value === 'number' && (type === 'count' || type === 'whole') && !isCount(value)) {
        return new Error(method + ' payload "' + key + '" must be an integer ≥ 0.');
      }
      if (rules[i][2]) {
        if (!TYPES[type](value)) return new Error(method + ' payload must include ' + TYPE_NAMES[type] + ' "' + key + '".');
      } else if (value !== undefined && !TYPES[type](value)) {
        return new Error(method + ' payload "' + key + '" must be ' + TYPE_NAMES[type] + ' when provided.');
      }
    }
    return null;
  }

  var IDENTIFY = [['userId', 'string', true], ['traits', 'object', false]];
  var PAGE = [];
  var SCREEN = [['name', 'string', true], ['properties', 'object', false], ['routeKey', 'string', false]];
  var TRACK = [['event', 'string', true], ['properties', 'object', false]];
  var TRACK_VIEW = [
      ['componentId', 'string', true], ['viewId', 'string', true], ['variantIndex', 'whole', true],
      ['viewDurationMs', 'whole', true], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
      ['sticky', 'boolean', false], ['stickyTrackingKey', 'string', false],
  ];
  var TRACK_CLICK = [
      ['componentId', 'string', true], ['variantIndex', 'whole', true],
      ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
  ];
  var TRACK_HOVER = [
      ['componentId', 'string', true], ['hoverId', 'string', true], ['hoverDurationMs', 'whole', true],
      ['variantIndex', 'whole', false], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
  ];
  var TRACK_FLAG_VIEW = [
      ['componentId', 'string', true], ['experienceId', 'string', false], ['variantIndex', 'whole', false],
      ['viewId', 'string', false], ['viewDurationMs', 'whole', false],
  ];

  // The Experiences (ExO) node events of API v2: the entity, then what the event adds.
  var NODE = [
    ['entityId', 'string', true], ['entityKind', 'entityKind', true], ['entityKindId', 'string', false],
    ['optimizationId', 'string', false], ['parentExperienceId', 'string', false], ['variantId', 'string', false],
    ['entryIds', 'stringArray', false], ['parameters', 'object', false], ['variantIndex', 'whole', false],
  ];
  var TRACK_NODE_VIEW = NODE.concat([['viewId', 'string', true], ['viewDurationMs', 'count', true]]);
  var TRACK_NODE_CLICK = NODE;
  var TRACK_NODE_HOVER = NODE.concat([['hoverId', 'string', true], ['hoverDurationMs', 'count', true]]);

  var EVENT_METHODS = Object.freeze({
    identify: Object.freeze({ rules: IDENTIFY, build: 'buildIdentify', path: 'experience' }),
    page: Object.freeze({ rules: PAGE, build: 'buildPageView', path: 'experience' }),
    screen: Object.freeze({ rules: SCREEN, build: 'buildScreenView', path: 'experience' }),
    track: Object.freeze({ rules: TRACK, build: 'buildTrack', path: 'experience' }),
    trackView: Object.freeze({ rules: TRACK_VIEW, build: 'buildView', path: 'insights', enrich: true }),
    trackClick: Object.freeze({ rules: TRACK_CLICK, build: 'buildClick', path: 'insights', enrich: true }),
    trackHover: Object.freeze({ rules: TRACK_HOVER, build: 'buildHover', path: 'insights', enrich: true }),
    trackFlagView: Object.freeze({ rules: TRACK_FLAG_VIEW, build: 'buildFlagView', path: 'insights' }),
    trackNodeView: Object.freeze({ rules: TRACK_NODE_VIEW, build: 'buildNodeView', path: 'insights', apiVersion: 'v2' }),
    trackNodeClick: Object.freeze({ rules: TRACK_NODE_CLICK, build: 'buildNodeClick', path: 'insights', apiVersion: 'v2' }),
    trackNodeHover: Object.freeze({ rules: TRACK_NODE_HOVER, build: 'buildNodeHover', path: 'insights', apiVersion: 'v2' }),
  });

  // An Error when `method` cannot be sent in `apiVersion` (the node events need API v2), else null.
  function checkApiVersion(method, apiVersion) {
    var entry = EVENT_METHODS[method];
    if (entry === undefined || entry.apiVersion === undefined || entry.apiVersion === apiVersion) return null;
    return new Error(method + ' needs API ' + entry.apiVersion + ' (configure a space id).');
  }

  ns.payloadRules = Object.freeze({
    validate: validate,
    IDENTIFY: IDENTIFY,
    PAGE: PAGE,
    SCREEN: SCREEN,
    TRACK: TRACK,
    TRACK_VIEW: TRACK_VIEW,
    TRACK_CLICK: TRACK_CLICK,
    TRACK_HOVER: TRACK_HOVER,
    TRACK_FLAG_VIEW: TRACK_FLAG_VIEW,
    TRACK_NODE_VIEW: TRACK_NODE_VIEW,
    TRACK_NODE_CLICK: TRACK_NODE_CLICK,
    TRACK_NODE_HOVER: TRACK_NODE_HOVER,
    ENTITY_KINDS: ENTITY_KINDS,
    EVENT_METHODS: EVENT_METHODS,
    checkApiVersion: checkApiVersion,
  });
})();
