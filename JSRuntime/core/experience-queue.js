// core/experience-queue.js
// Contract: `__optimization.createExperienceQueue(options)` → the Experience path (spec §6.2).
// Options: maxEvents (offline capacity, a positive number, floored; invalid ⇒ 100),
// onDrop(context) (called after the oldest events were dropped to make room, with
// {droppedCount, droppedEvents (oldest first), maxEvents, queuedEvents}; exceptions are logged).
// Interface (the emitter uses only `send`; the delivery layer replaces the body of `send` with
// "online ⇒ upsert now, else enqueue" and adds flushing, without changing this interface):
//   send(event) → result | Promise<result>   hands a built, already-published event to the path.
//                                           Today: enqueue and return {accepted: true}
//                                           synchronously (no network yet).
//   enqueue(event)        appends to the offline buffer (dropping the oldest beyond maxEvents).
//   purge()               discards every queued event (consent withdrawn).
//   size() → number       queued events.
//   drain() → event[]     removes and returns every queued event in insertion order (tests and
//                         the future flush).
//   peek() → event[]      a copy of the queue, oldest first.
(function () {
  'use strict';
  var ns = globalThis.__optimization || (globalThis.__optimization = {});
  var host = ns.host;

  var DEFAULT_MAX_EVENTS = 100;

  function normalizeMax(value) {
    return typeof value === 'number' && isFinite(value) && value >= 1 ? Math.floor(value) : DEFAULT_MAX_EVENTS;
  }

  function createExperienceQueue(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var maxEvents = normalizeMax(settings.maxEvents);
    var onDrop = typeof settings.onDrop === 'function' ? settings.onDrop : null;
    var events = [];

    function enqueue(event) {
      var dropped = [];
      if (events.length >= maxEvents) dropped = events.splice(0, events.length - maxEvents + 1);
      events.push(event);
      if (dropped.length > 0 && onDrop !== null) {
        try {
          onDrop({ droppedCount: dropped.length, droppedEvents: dropped, maxEvents: maxEvents, queuedEvents: events.length });
        } catch (error) {
          host.log('warn', 'Experience queue onDrop callback failed: ' + (error instanceof Error ? error.message : String(error)));
        }
      }
    }

    function send(event) {
      enqueue(event);
      return { accepted: true };
    }

    return {
      send: send,
      enqueue: enqueue,
      purge: function () {
        events = [];
      },
      size: function () {
        return events.length;
      },
      drain: function () {
        var all = events;
        events = [];
        return all;
      },
      peek: function () {
        return events.slice();
      },
      maxEvents: maxEvents,
    };
  }

  ns.createExperienceQueue = createExperienceQueue;
})();
