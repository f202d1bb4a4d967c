// core/payload-rules.js
// Contract: `__optimization.payloadRules` — validation of event-method payloads with their error
// messages, shared by the stateful bridge (bridge/events.js) and the request-scoped service
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
//       published event carries the optimization context of `optimizationContextId`. Adding an
//       event type = its rules and entry here plus its builder.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/payload-rules.js', { provides: ['payloadRules'] });

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  var TYPES = {
    string: function (v) { return typeof v === 'string'; },
    number: function (v) { return typeof v === 'number'; },
    boolean: function (v) { return typeof v === 'boolean'; },
    object: isRecord,
  };

  function article(type) {
    return type === 'object' ? 'an ' : 'a ';
  }

  function validate(method, payload, rules) {
    if (!isRecord(payload)) return new Error(method + ' payload must be an object.');
    for (var i = 0; i < rules.length; i++) {
      var key = rules[i][0];
      var type = rules[i][1];
      var value = payload[key];
      if (rules[i][2]) {
        if (!TYPES[type](value)) return new Error(method + ' payload must include ' + article(type) + type + ' "' + key + '".');
      } else if (value !== undefined && !TYPES[type](value)) {
        return new Error(method + ' payload "' + key + '" must be ' + article(type) + type + ' when provided.');
      }
    }
    return null;
  }

  var IDENTIFY = [['userId', 'string', true], ['traits', 'object', false]];
  var PAGE = [];
  var SCREEN = [['name', 'string', true], ['properties', 'object', false], ['routeKey', 'string', false]];
  var TRACK = [['event', 'string', true], ['properties', 'object', false]];
  var TRACK_VIEW = [
      ['componentId', 'string', true], ['viewId', 'string', true], ['variantIndex', 'number', true],
      ['viewDurationMs', 'number', true], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
      ['sticky', 'boolean', false], ['stickyTrackingKey', 'string', false],
  ];
  var TRACK_CLICK = [
      ['componentId', 'string', true], ['variantIndex', 'number', true],
      ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
  ];
  var TRACK_HOVER = [
      ['componentId', 'string', true], ['hoverId', 'string', true], ['hoverDurationMs', 'number', true],
      ['variantIndex', 'number', false], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
  ];
  var TRACK_FLAG_VIEW = [
      ['componentId', 'string', true], ['experienceId', 'string', false], ['variantIndex', 'number', false],
      ['viewId', 'string', false], ['viewDurationMs', 'number', false],
  ];

  var EVENT_METHODS = Object.freeze({
    identify: Object.freeze({ rules: IDENTIFY, build: 'buildIdentify', path: 'experience' }),
    page: Object.freeze({ rules: PAGE, build: 'buildPageView', path: 'experience' }),
    screen: Object.freeze({ rules: SCREEN, build: 'buildScreenView', path: 'experience' }),
    track: Object.freeze({ rules: TRACK, build: 'buildTrack', path: 'experience' }),
    trackView: Object.freeze({ rules: TRACK_VIEW, build: 'buildView', path: 'insights', enrich: true }),
    trackClick: Object.freeze({ rules: TRACK_CLICK, build: 'buildClick', path: 'insights', enrich: true }),
    trackHover: Object.freeze({ rules: TRACK_HOVER, build: 'buildHover', path: 'insights', enrich: true }),
    trackFlagView: Object.freeze({ rules: TRACK_FLAG_VIEW, build: 'buildFlagView', path: 'insights' }),
  });

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
    EVENT_METHODS: EVENT_METHODS,
  });
})();
