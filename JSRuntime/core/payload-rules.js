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

  ns.payloadRules = Object.freeze({
    validate: validate,
    IDENTIFY: [['userId', 'string', true], ['traits', 'object', false]],
    PAGE: [],
    SCREEN: [['name', 'string', true], ['properties', 'object', false], ['routeKey', 'string', false]],
    TRACK: [['event', 'string', true], ['properties', 'object', false]],
    TRACK_VIEW: [
      ['componentId', 'string', true], ['viewId', 'string', true], ['variantIndex', 'number', true],
      ['viewDurationMs', 'number', true], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
      ['sticky', 'boolean', false], ['stickyTrackingKey', 'string', false],
    ],
    TRACK_CLICK: [
      ['componentId', 'string', true], ['variantIndex', 'number', true],
      ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
    ],
    TRACK_HOVER: [
      ['componentId', 'string', true], ['hoverId', 'string', true], ['hoverDurationMs', 'number', true],
      ['variantIndex', 'number', false], ['experienceId', 'string', false], ['optimizationContextId', 'string', false],
    ],
    TRACK_FLAG_VIEW: [
      ['componentId', 'string', true], ['experienceId', 'string', false], ['variantIndex', 'number', false],
      ['viewId', 'string', false], ['viewDurationMs', 'number', false],
    ],
  });
})();
