// bridge/backlog-window.js
// Contract: `__optimization.createBacklogWindow(options)` → the in-memory window a delivery queue
// (bridge/experience-queue.js; the client's Insights events are the host's) holds over its durable
// backlog (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md). Options:
//   outbox      {append(event) → sequence, load(afterSequence, limit) → [{sequence, event}]}
//               (bridge/outbox-link.js `forQueue`)
//   capacity    most events in memory (the queue's maxEvents)
//   size()      events the queue holds in memory now
//   take(event)  puts one event into the queue's memory (no store, no gate)
//   isClosed()  a closed queue loads nothing
//   name, host  for log lines ("Experience" / "Insights")
// The window remembers the highest sequence ever taken into memory and whether stored events
// after it wait on disk only; while they do, new events wait behind them, so order holds.
//   accept(event) → true when the event is in memory now (the queue's own object),
//       false when it waits on disk. Stores it first: a throw from outbox.append propagates (the
//       send fails; nothing was taken).
//   refill() → number   takes stored events while there is room and events wait on disk.
//   discardStored() → events   every event waiting on disk only, loaded for acknowledgement
//       (delivery disabled); the window is then empty of stored events.
//   resume() → number   assumes events may wait on disk (a restart) and refills.
//   purged()            nothing waits on disk any more (the host purged its outbox).
//   backlogOnDisk() → bool
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/backlog-window.js', {
    provides: ['createBacklogWindow'],
    uses: ['host'],
  });

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function isRecord(value) {
    return value !== null && typeof value === 'object';
  }

  function createBacklogWindow(options) {
    var outbox = options.outbox;
    var capacity = options.capacity;
    var size = options.size;
    var take = options.take;
    var isClosed = options.isClosed;
    var host = options.host || ns.host;
    var name = options.name || 'Delivery';
    var residentThrough = 0;
    var spilled = true; // until a load finds the end of the backlog
    var accepting = null; // {sequence, event} while accept() loads from disk

    // → the loaded items (valid ones), advancing residentThrough; null when the load threw.
    function load(limit) {
      var items;
      try {
        items = outbox.load(residentThrough, limit);
      } catch (error) {
        host.log('warn', name + ' queue could not load stored events: ' + messageOf(error));
        return null;
      }
      if (!Array.isArray(items)) items = [];
      var valid = [];
      items.forEach(function (item) {
        if (!isRecord(item) || typeof item.sequence !== 'number') return;
        if (item.sequence > residentThrough) residentThrough = item.sequence;
        if (isRecord(item.event)) valid.push(item);
      });
      return { items: valid, complete: items.length < limit };
    }

    function refill() {
      var loaded = 0;
      while (spilled && !isClosed() && size() < capacity) {
        var room = capacity - size();
        var batch = load(room);
        if (batch === null) return loaded;
        batch.items.forEach(function (item) {
          // The event being accepted keeps its identity (its send may await its request).
          take(accepting !== null && accepting.sequence === item.sequence ? accepting.event : item.event);
          loaded++;
        });
        if (batch.complete) spilled = false;
      }
      return loaded;
    }

    function accept(event) {
      var sequence = outbox.append(event);
      if (typeof sequence === 'number' && sequence <= residentThrough) return false; // stored and taken before
      if (!spilled && size() < capacity) {
        take(event);
        if (typeof sequence === 'number') residentThrough = sequence;
        return true;
      }
      // Older events wait on disk: take in order while there is room (this one included).
      spilled = true;
      accepting = { sequence: sequence, event: event };
      var before = residentThrough;
      try {
        refill();
      } finally {
        accepting = null;
      }
      return typeof sequence === 'number' && sequence <= residentThrough && sequence > before;
    }

    function discardStored() {
      var gone = [];
      while (spilled) {
        var batch = load(capacity);
        if (batch === null || batch.items.length === 0) break;
        batch.items.forEach(function (item) { gone.push(item.event); });
      }
      spilled = false;
      return gone;
    }

    return {
      accept: accept,
      refill: refill,
      discardStored: discardStored,
      resume: function () {
        spilled = true;
        return refill();
      },
      purged: function () {
        spilled = false;
      },
      backlogOnDisk: function () {
        return spilled;
      },
    };
  }

  ns.createBacklogWindow = createBacklogWindow;
})();
