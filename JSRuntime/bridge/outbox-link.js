// bridge/outbox-link.js
// Contract: `__optimization.outboxLink` — the engine's side of the host's durable outbox
// (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md), for the client bridge's Experience queue
// (the client's Insights events are stored by the host behind __nativeInsightsAccept, and the
// service's Insights events by the Swift host, not by an engine).
// It is active only when the host registered the native functions:
//   __nativeOutboxAppend(queue, messageId, profileId|null, consent, acceptedAtMs, payloadJSON)
//       → the stored event's sequence (a number); throws when the event could not be stored.
//   __nativeOutboxLoad(queue, afterSequence, limit) → JSON text
//       `[{"sequence": n, "payload": <payload>}, …]`: the queue's stored events after
//       `afterSequence`, oldest first, at most `limit`.
//   __nativeOutboxRemoved(queue, messageIdsJSON, reason)   events that left a queue for good.
//   __nativeOutboxPurge()   every stored event removed (consent withdrawn).
// A payload is the Experience event itself.
//   available() → bool   the host stores events (__nativeOutboxAppend is registered).
//   forQueue(queue, profileIdOf?) → the `outbox` option of a delivery queue (bridge/experience-queue.js):
//       {append(event) → sequence, load(afterSequence, limit) → [{sequence, event}]}.
//       `profileIdOf(event)` gives the profile id stored beside an event (default: none).
//   removedHook(queue) → function (events, reason)   the queue's onRemoved (acknowledgement).
//   purge()   calls __nativeOutboxPurge when present (a throw is logged).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/outbox-link.js', {
    provides: ['outboxLink'],
    uses: ['host'],
  });
  var host = ns.host;

  function isRecord(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  function isString(value) {
    return typeof value === 'string';
  }

  function available() {
    return typeof globalThis.__nativeOutboxAppend === 'function';
  }

  function forQueue(queue, profileIdOf) {
    return {
      append: function (event) {
        if (!isRecord(event) || !isString(event.messageId)) throw new TypeError('An event without a messageId cannot be stored.');
        var context = isRecord(event.context) ? event.context : {};
        var consent = isRecord(context.gdpr) && context.gdpr.isConsentGiven === true;
        var profileId = typeof profileIdOf === 'function' ? profileIdOf(event) : null;
        return globalThis.__nativeOutboxAppend(queue, event.messageId, isString(profileId) ? profileId : null, consent,
          host.now(), JSON.stringify(event));
      },
      load: function (afterSequence, limit) {
        var text = globalThis.__nativeOutboxLoad(queue, afterSequence, limit);
        var stored = isString(text) ? JSON.parse(text) : [];
        if (!Array.isArray(stored)) return [];
        return stored.map(function (item) {
          var payload = isRecord(item) ? item.payload : undefined;
          return { sequence: isRecord(item) ? item.sequence : undefined, event: isRecord(payload) ? payload : undefined };
        });
      },
    };
  }

  function removedHook(queue) {
    return function (events, reason) {
      var ids = [];
      events.forEach(function (event) {
        if (isRecord(event) && isString(event.messageId)) ids.push(event.messageId);
      });
      if (ids.length === 0 || typeof globalThis.__nativeOutboxRemoved !== 'function') return;
      globalThis.__nativeOutboxRemoved(queue, JSON.stringify(ids), reason);
    };
  }

  function purge() {
    if (typeof globalThis.__nativeOutboxPurge !== 'function') return;
    try {
      globalThis.__nativeOutboxPurge();
    } catch (error) {
      host.log('error', '__nativeOutboxPurge threw: ' + (error instanceof Error ? error.message : String(error)));
    }
  }

  ns.outboxLink = { available: available, forQueue: forQueue, removedHook: removedHook, purge: purge };
})();
