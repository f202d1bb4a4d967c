// bridge/insights-queue.js
// Contract: `__optimization.createInsightsQueue(options)` → the Insights path.
// Options: getProfile() → the current profile object or undefined;
// maxEvents (most events in memory over buckets and held events, a positive number, floored;
// invalid ⇒ 1000). Without `outbox` it is a cap: beyond it the oldest held events go first, then
// the oldest bucket's oldest events that are not in flight (warn-logged); events in flight are
// never dropped. With `outbox` (a durable backlog) it is a WINDOW and nothing is dropped for room:
// an accepted event is stored first (`outbox.append(event, profile|undefined)` → its sequence; a
// throw fails the send and nothing is queued), kept in memory when the window has room and no
// older event waits on disk only, else left on disk only; as the window drains the next stored
// events are loaded in order (`outbox.load(afterSequence, limit)` → [{sequence, event, profile}],
// profile null for held events). `resume()` fills the window from the backlog (a restart).
// Events are kept per profile id (`profile.id`, which may be ""), each bucket remembering the
// last profile object seen for that id. An event sent while no profile exists is HELD (not
// dropped) and moves into the bucket of the first profile that exists at a later send, flush or
// `adoptHeld()`.
//
// Without `api` the queue only buffers. With delivery options:
//   api                 {sendBatches(batches) → Promise<outcome>} (bridge/insights-api.js)
//   isOnline()          default: always online
//   flushThreshold      queued (bucketed) events that trigger a flush, default 25
//   onQueueEvent(type, context)   "batchDropped" {status, reason, droppedCount, droppedEvents} and
//                       "deliveryDisabled" {status, reason, droppedCount}
//   flushPolicy, callbacks, random, host   for the flush runtime (core/queue-flush-policy.js); the
//                       periodic flush runs every policy.flushIntervalMs (default 30 000) on the
//                       host clock, and only while bucketed events are queued.
// Durable-outbox hooks (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md; optional, called synchronously):
//   outbox              {append(event, profile) → sequence, load(afterSequence, limit)} (above);
//                       a throwing load is logged and retried at the next drain.
//   onRemoved(events, reason)   events that left the queue for good: "delivered" (2xx),
//                       "dropped" (other 4xx), "disabled" (401/403/404: everything queued, held
//                       and on disk only), "capped" (the maxEvents cap, never with an outbox),
//                       "removed" (removeMessages). Exceptions logged. Purge and eraseProfile
//                       report nothing (their callers clear their outbox themselves).
// Behaviour with delivery:
//   send(event, profile?)   enqueue (never sent synchronously) into the bucket of `profile` when
//                       given (a process-wide queue of many visitors), else of getProfile(); arm the periodic timer; at ≥
//                       flushThreshold queued events start a non-forced flush. After delivery was
//                       disabled, events are discarded (debug-logged); without an outbox, each is
//                       also reported to onRemoved as "disabled" (its host stored it elsewhere).
//   flush({force?}) → Promise   gate shouldSkip({force, isOnline}); held events join the current
//                       profile's bucket; no batches ⇒ cancel the retry; else ONE POST with one
//                       {profile, events} per profile id (map insertion order). A flush while one
//                       is running returns the running one. Outcomes:
//         success        removes exactly the sent events (events queued meanwhile
//                        stay); handleSuccess.
//         retry          kept; handleFailure({queuedBatches, queuedEvents, minRetryDelayMs}).
//         drop (4xx)     the sent events are removed; batchDropped; warn-logged; handleSuccess.
//         disable (401/403/404)   everything queued is discarded, deliveryDisabled, error-logged;
//                        nothing more is sent by this queue.
//       Then the periodic timer is reconciled.
//   profileChanged()    adopts held events when a profile now exists and reconciles the timer.
//   purge()             discards every event, resets the flush runtime, stops the timer.
//   close()             stops the timer and retries for good (destroy, after the final flush).
//   eraseProfile(id) → removed count (every queued event of that profile id),
//   removeMessages(ids) → removed events (queued or held, by messageId; `ids` an array),
//   resume() → number   (with outbox) fills the window from the backlog and adopts held events.
//   cancelScheduledRetry(), isDisabled(), runtime, enqueue(event) (no outbox append),
//   adoptHeld() → moved count, size() → queued + held (in memory), heldCount(), drain() →
//   [{profile, events}] (held stay), peek(), backlogOnDisk().
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/insights-queue.js', {
    provides: ['createInsightsQueue'],
    uses: ['apiResponse', 'createBacklogWindow', 'createQueueFlushRuntime', 'host'],
  });

  var DEFAULT_MAX_EVENTS = 1000;
  var DEFAULT_FLUSH_THRESHOLD = 25;

  function normalizeMax(value) {
    return typeof value === 'number' && isFinite(value) && value >= 1 ? Math.floor(value) : DEFAULT_MAX_EVENTS;
  }

  function isProfile(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function idOf(profile) {
    return String(profile.id === undefined || profile.id === null ? '' : profile.id);
  }

  function createInsightsQueue(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var host = settings.host || ns.host;
    var getProfile = typeof settings.getProfile === 'function' ? settings.getProfile : function () { return undefined; };
    var maxEvents = normalizeMax(settings.maxEvents);
    var api = settings.api || null;
    var isOnline = typeof settings.isOnline === 'function' ? settings.isOnline : function () { return true; };
    var threshold = normalizeMax(settings.flushThreshold === undefined ? DEFAULT_FLUSH_THRESHOLD : settings.flushThreshold);
    var onQueueEvent = typeof settings.onQueueEvent === 'function' ? settings.onQueueEvent : function () {};
    var outbox = settings.outbox !== null && typeof settings.outbox === 'object' ? settings.outbox : null;
    var onRemoved = typeof settings.onRemoved === 'function' ? settings.onRemoved : null;

    var buckets = new Map(); // profile id → {profile, events}
    var held = [];
    var total = 0;
    var active = null;
    var generation = 0;
    var timer = null;
    var disabledReason = null;
    var closed = false;
    var inFlight = new Set(); // events of the request in flight: never dropped by the cap

    var runtime = ns.createQueueFlushRuntime({
      policy: settings.flushPolicy,
      host: host,
      callbacks: settings.callbacks,
      random: settings.random,
      name: 'Insights',
      onRetry: function () {
        return flush();
      },
    });

    function emit(type, context) {
      try {
        onQueueEvent(type, context);
      } catch (error) {
        host.log('warn', 'Insights queue event callback failed: ' + messageOf(error));
      }
    }

    function removed(gone, reason) {
      if (onRemoved === null || gone.length === 0) return;
      try {
        onRemoved(gone, reason);
      } catch (error) {
        host.log('warn', 'Insights queue onRemoved callback failed: ' + messageOf(error));
      }
    }

    function currentProfile() {
      var profile = getProfile();
      return isProfile(profile) ? profile : undefined;
    }

    function bucketFor(profile) {
      var id = idOf(profile);
      var bucket = buckets.get(id);
      if (bucket === undefined) {
        bucket = { profile: profile, events: [] };
        buckets.set(id, bucket);
      } else {
        bucket.profile = profile;
      }
      return bucket;
    }

    // → the dropped event: the oldest held one, else the oldest bucketed one not in flight
    // (undefined when every queued event is in flight).
    function dropOldest() {
      if (held.length > 0) {
        total--;
        return held.shift();
      }
      var dropped;
      var emptied;
      buckets.forEach(function (bucket, id) {
        if (dropped !== undefined) return;
        for (var i = 0; i < bucket.events.length; i++) {
          if (inFlight.has(bucket.events[i])) continue;
          dropped = bucket.events.splice(i, 1)[0];
          if (bucket.events.length === 0) emptied = id;
          return;
        }
      });
      if (dropped === undefined) return undefined;
      total--;
      if (emptied !== undefined) buckets.delete(emptied);
      return dropped;
    }

    function adoptHeld() {
      if (held.length === 0) return 0;
      var profile = currentProfile();
      if (profile === undefined) return 0;
      var bucket = bucketFor(profile);
      var moved = held.length;
      bucket.events.push.apply(bucket.events, held);
      held = [];
      return moved;
    }

    // → the profile whose bucket took the event (undefined: held).
    function enqueue(event, explicitProfile) {
      var dropped = [];
      while (total >= maxEvents) {
        var oldest = dropOldest();
        if (oldest === undefined) break; // everything queued is in flight
        dropped.push(oldest);
      }
      if (dropped.length > 0) {
        if (api !== null) {
          host.log('warn', 'Insights queue is full (' + maxEvents + ' events): dropped the ' + dropped.length + ' oldest event(s).');
        }
        removed(dropped, 'capped');
      }
      var profile = isProfile(explicitProfile) ? explicitProfile : currentProfile();
      if (profile === undefined) {
        held.push(event);
      } else {
        adoptHeld();
        bucketFor(profile).events.push(event);
      }
      total++;
      return profile;
    }

    // With an outbox: the window over the stored backlog (bridge/backlog-window.js).
    var backlog = outbox === null ? null : ns.createBacklogWindow({
      outbox: outbox,
      capacity: maxEvents,
      size: function () { return total; },
      take: function (event, profile) { enqueue(event, profile); },
      isClosed: function () { return closed; },
      name: 'Insights',
      host: host,
    });

    // Stores the event first (a throw fails the send: nothing is queued), then keeps it in the
    // window or on disk only.
    function accept(event, explicitProfile) {
      if (backlog === null) {
        enqueue(event, explicitProfile);
        return;
      }
      backlog.accept(event, isProfile(explicitProfile) ? explicitProfile : currentProfile());
    }

    // Loads stored events into the window while it has room and events wait on disk only.
    function refill() {
      return backlog === null ? 0 : backlog.refill();
    }

    function removeMessages(ids) {
      var wanted = new Set(Array.isArray(ids) ? ids : []);
      var gone = [];
      function keep(event) {
        var hit = event !== null && typeof event === 'object' && wanted.has(event.messageId);
        if (hit) gone.push(event);
        return !hit;
      }
      held = held.filter(keep);
      buckets.forEach(function (bucket, id) {
        bucket.events = bucket.events.filter(keep);
        if (bucket.events.length === 0) buckets.delete(id);
      });
      total -= gone.length;
      removed(gone, 'removed');
      refill();
      reconcileTimer();
      return gone;
    }

    function queuedCount() {
      return total - held.length;
    }

    function copyBuckets() {
      var result = [];
      buckets.forEach(function (bucket) {
        result.push({ profile: bucket.profile, events: bucket.events.slice() });
      });
      return result;
    }

    // ---- periodic flush ---------------------------------------------------------------------

    function stopTimer() {
      if (timer === null) return;
      host.clearTimeout(timer);
      timer = null;
    }

    function reconcileTimer() {
      if (api === null || closed || disabledReason !== null || queuedCount() === 0) {
        stopTimer();
        return;
      }
      if (timer === null) timer = host.setTimeout(onTimer, runtime.policy.flushIntervalMs);
    }

    function onTimer() {
      timer = null;
      flush().then(reconcileTimer);
      reconcileTimer();
    }

    // ---- delivery ---------------------------------------------------------------------------

    function send(event, explicitProfile) {
      if (api === null) {
        accept(event, explicitProfile);
        return;
      }
      if (disabledReason !== null) {
        host.log('debug', 'Insights delivery is disabled; an event was discarded.');
        // With an outbox the event was not stored yet; without one, a host that stored it
        // elsewhere (a shared outbox) learns it left this queue.
        if (backlog === null) removed([event], 'disabled');
        return;
      }
      accept(event, explicitProfile);
      reconcileTimer();
      if (!closed && queuedCount() >= threshold) flush();
    }

    function flush(flushOptions) {
      var force = flushOptions !== null && typeof flushOptions === 'object' && flushOptions.force === true;
      if (api === null) return Promise.resolve();
      if (active !== null) {
        // A forced flush is never skipped: it runs once the running one finished.
        return force ? active.then(function () { return flush(flushOptions); }) : active;
      }
      if (disabledReason !== null || (closed && !force)) return Promise.resolve();
      if (runtime.shouldSkip({ force: force, isOnline: isOnline() })) return Promise.resolve();
      adoptHeld();
      var batches = copyBuckets();
      if (batches.length === 0) {
        runtime.cancelScheduledRetry();
        reconcileTimer();
        return Promise.resolve();
      }
      var running = request(batches).then(undefined, function (error) {
        host.log('error', 'Insights queue flush failed unexpectedly: ' + messageOf(error));
      }).then(function () {
        active = null;
        reconcileTimer();
      });
      active = running;
      return running;
    }

    function request(batches) {
      var round = generation;
      inFlight = new Set(eventsOf(batches));
      runtime.markFlushStarted();
      return api.sendBatches(batches).then(undefined, function (error) {
        return ns.apiResponse.outcomeOfError('Insights', error);
      }).then(function (outcome) {
        runtime.markFlushFinished();
        inFlight = new Set();
        if (round !== generation) return;
        handle(batches, outcome);
      });
    }

    // Removes exactly the sent events (by identity) from their buckets.
    function removeSent(batches) {
      batches.forEach(function (batch) {
        var id = idOf(batch.profile);
        var bucket = buckets.get(id);
        if (bucket === undefined) return;
        var sent = new Set(batch.events);
        var before = bucket.events.length;
        bucket.events = bucket.events.filter(function (event) {
          return !sent.has(event);
        });
        total -= before - bucket.events.length;
        if (bucket.events.length === 0) buckets.delete(id);
      });
      refill();
    }

    function countEvents(batches) {
      return batches.reduce(function (sum, batch) {
        return sum + batch.events.length;
      }, 0);
    }

    function eventsOf(batches) {
      var all = [];
      batches.forEach(function (batch) {
        all.push.apply(all, batch.events);
      });
      return all;
    }

    function handle(batches, outcome) {
      if (outcome.ok) {
        removeSent(batches);
        if (onRemoved !== null) removed(eventsOf(batches), 'delivered');
        if (!closed) runtime.handleSuccess();
        return;
      }
      switch (outcome.kind) {
        case 'drop': {
          removeSent(batches);
          var count = countEvents(batches);
          var reason = outcome.reason + '; ' + count + ' event(s) in ' + batches.length + ' batch(es) were dropped (the API refuses them).';
          host.log('warn', reason);
          var dropped = eventsOf(batches);
          removed(dropped, 'dropped');
          emit('batchDropped', { status: outcome.status, reason: reason, droppedCount: count, droppedEvents: dropped });
          if (!closed) runtime.handleSuccess();
          return;
        }
        case 'disable': {
          disabledReason = 'Insights API delivery disabled: ' + outcome.reason +
            ' (check clientId, environment and the Insights base URL). No further Insights requests are made by this client instance.';
          var discarded = total;
          if (onRemoved !== null) removed(held.concat(eventsOf(copyBuckets())), 'disabled');
          buckets = new Map();
          held = [];
          total = 0;
          var stored = backlog === null ? [] : backlog.discardStored();
          removed(stored, 'disabled');
          discarded += stored.length;
          runtime.reset();
          stopTimer();
          host.log('error', disabledReason + ' ' + discarded + ' queued event(s) discarded.');
          emit('deliveryDisabled', { status: outcome.status, reason: disabledReason, droppedCount: discarded });
          return;
        }
        default:
          host.log('warn', outcome.reason + '; ' + queuedCount() + ' event(s) stay queued for retry.');
          if (!closed) {
            runtime.handleFailure({ queuedBatches: buckets.size, queuedEvents: queuedCount(), minRetryDelayMs: outcome.retryAfterMs });
          }
      }
    }

    function purge() {
      generation++;
      buckets = new Map();
      held = [];
      total = 0;
      // The host purges the outbox itself: nothing waits on disk any more.
      if (backlog !== null) backlog.purged();
      runtime.reset();
      stopTimer();
    }

    // Fills the window from the backlog (a restart), adopts held events, arms the timer.
    function resume() {
      if (backlog === null) return 0;
      var loaded = backlog.resume();
      adoptHeld();
      reconcileTimer();
      return loaded;
    }

    return {
      send: send,
      enqueue: enqueue,
      adoptHeld: adoptHeld,
      flush: flush,
      profileChanged: function () {
        adoptHeld();
        reconcileTimer();
      },
      purge: purge,
      removeMessages: removeMessages,
      close: function () {
        closed = true;
        runtime.reset();
        stopTimer();
      },
      cancelScheduledRetry: function () {
        runtime.cancelScheduledRetry();
      },
      isDisabled: function () {
        return disabledReason !== null;
      },
      size: function () {
        return total;
      },
      // Removes every queued event of profile `id` (erasure); returns how many.
      eraseProfile: function (id) {
        var bucket = buckets.get(String(id));
        if (bucket === undefined) return 0;
        buckets.delete(String(id));
        total -= bucket.events.length;
        refill();
        reconcileTimer();
        return bucket.events.length;
      },
      heldCount: function () {
        return held.length;
      },
      drain: function () {
        var result = copyBuckets();
        buckets = new Map();
        total = held.length;
        return result;
      },
      peek: copyBuckets,
      resume: resume,
      backlogOnDisk: function () {
        return backlog !== null && backlog.backlogOnDisk();
      },
      runtime: runtime,
      maxEvents: maxEvents,
    };
  }

  ns.createInsightsQueue = createInsightsQueue;
})();
