// core/experiences-handoff.js
// Contract: `__optimization.experiencesHandoff.parse(value)` → the envelope, or throws a TypeError
// naming the problem: the handoff of Contentful Experiences (API v2), which carries a first
// request's events to the browser by transport:
//   {version: 1, spaceId: string, environmentId: string, initialProfileId?: string,
//    events: [{transport: "personalization" | "analytics", event: object with a string type}],
//    initialPageRouteKey?: string}
// Checked in this order: serialized as UTF-8 JSON it is at most MAX_BYTES (65 536) bytes (a
// value that cannot be serialized is refused too); the shape above (version exactly 1);
// `initialPageRouteKey` needs a personalization `page` event; every analytics event needs
// `initialProfileId` or an earlier personalization event (the profile it belongs to).
// `__optimization.experiencesHandoff.MAX_BYTES`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/experiences-handoff.js', { provides: ['experiencesHandoff'] });

  var MAX_BYTES = 65536;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isString(value) {
    return typeof value === 'string';
  }

  function utf8Length(text) {
    var bytes = 0;
    for (var i = 0; i < text.length; i++) {
      var code = text.charCodeAt(i);
      if (code < 0x80) bytes += 1;
      else if (code < 0x800) bytes += 2;
      else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        bytes += 4;
        i++;
      } else bytes += 3;
    }
    return bytes;
  }

  function refuse(text) {
    return new TypeError('Experiences handoff ' + text + '.');
  }

  function parse(value) {
    var text;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw refuse('cannot be serialized');
    }
    if (typeof text !== 'string') throw refuse('cannot be serialized');
    if (utf8Length(text) > MAX_BYTES) throw refuse('exceeds ' + MAX_BYTES + ' serialized bytes');
    if (!isRecord(value) || value.version !== 1) throw refuse('needs "version": 1');
    if (!isString(value.spaceId) || !isString(value.environmentId)) throw refuse('needs string "spaceId" and "environmentId"');
    if (value.initialProfileId !== undefined && !isString(value.initialProfileId)) throw refuse('"initialProfileId" must be a string');
    if (value.initialPageRouteKey !== undefined && !isString(value.initialPageRouteKey)) throw refuse('"initialPageRouteKey" must be a string');
    if (!Array.isArray(value.events)) throw refuse('needs an "events" array');
    var personalized = false;
    var personalizedPage = false;
    value.events.forEach(function (item, index) {
      var valid = isRecord(item) && (item.transport === 'personalization' || item.transport === 'analytics') &&
        isRecord(item.event) && isString(item.event.type);
      if (!valid) throw refuse('events[' + index + '] is not {transport: "personalization" | "analytics", event}');
      if (item.transport === 'personalization') {
        personalized = true;
        if (item.event.type === 'page') personalizedPage = true;
      } else if (value.initialProfileId === undefined && !personalized) {
        throw refuse('events[' + index + '] is an analytics event without a profile (no initialProfileId and no earlier personalization event)');
      }
    });
    if (value.initialPageRouteKey !== undefined && !personalizedPage) throw refuse('"initialPageRouteKey" needs a personalization page event');
    return value;
  }

  ns.experiencesHandoff = Object.freeze({ parse: parse, MAX_BYTES: MAX_BYTES });
})();
