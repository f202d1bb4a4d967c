// bridge/experience-queue.js
// Contract: `__optimization.createExperienceQueue(options)` → the Experience path.
// One ordered buffer of built, already-published events holding at most
// `maxEvents` (a positive number, floored; invalid ⇒ 100):
//   - without `outbox`, a cap: when full, the OLDEST events that are not in flight are dropped so
//     the new one fits and onDrop({droppedCount, droppedEvents (oldest first), maxEvents,
//     queuedEvents}) is called (exceptions logged). Events in flight are never dropped: while
//     every queued event is in flight the buffer may exceed the cap by the new events.
//   - with `outbox` (a durable backlog), a WINDOW over it: nothing is ever dropped for room. An
//     accepted event is first stored (`outbox.append(event)` → its sequence; a throw fails the
//     send and nothing is queued), then kept in memory when the window has room and no older
//     event waits on disk only, else left on disk only. As the window drains, the next stored
//     events are loaded in order (`outbox.load(afterSequence, limit)` → [{sequence, event}],
//     oldest first). `resume()` fills the window from the backlog (a restart).
//
// Without `api` the queue only buffers (send ⇒ enqueue, {accepted: true} synchronously). With
// delivery options:
//   api                 {upsertProfile({profileId, events}) → Promise<outcome>} (core/experience-api.js)
//   isOnline()          default: always online
//   getProfileId()      the upsert id (the bridge: persistence-consented anonymous id ?? profile.id)
//   onResponse(data)    applies a successful response (through the state interceptors; sets experienceRequestState success)
//   setRequestState(s)  experienceRequestState: {status: "pending"} when a request starts,
//                       {status: "failed", reason: "timeout"|"api-error"} when it fails
//   onQueueEvent(type, context)   "batchDropped" {status, reason, droppedCount, droppedEvents} and
//                       "deliveryDisabled" {status, reason, droppedCount}
//   flushPolicy, callbacks, random, host   for the flush runtime (bridge/queue-flush-policy.js;
//                       callbacks get onFlushFailure/onCircuitOpen/onFlushRecovered)
// Durable-outbox hooks (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md; optional, called synchronously):
//   outbox              {append(event) → sequence, load(afterSequence, limit) → [{sequence, event}]}
//                       (see above); a throwing load is logged and retried at the next drain.
//   onRemoved(events, reason)   events that left the queue for good: "delivered" (2xx, also with
//                       an unusable body), "dropped" (other 4xx), "disabled" (401/403/404: every
//                       queued event, those on disk only included), "capped" (the maxEvents cap,
//                       never with an outbox), "removed" (removeMessages). Exceptions logged. A
//                       purge reports nothing (the host purges its outbox itself).
// Behaviour with delivery:
//   send(event) → result | Promise<result>   offline ⇒ enqueue, {accepted: true}. Online ⇒ enqueue
//       and flush; the promise resolves {accepted: true, data} when the request carrying the event
//       succeeded (data = the raw, un-intercepted response data), or {accepted: true} as soon as
//       the event stays queued (failed and queued for retry, waiting for backoff or
//       an open circuit, dropped by the cap, purged), and {accepted: true, refused: {status,
//       reason, code?}} when its batch was refused (other 4xx: dropped, never sent again) or
//       delivery is disabled (401/403/404). Events are sent strictly in order, one
//       request at a time, so an event never overtakes one queued before it.
//   flush({force?}) → Promise   gate shouldSkip({force, isOnline}); empty ⇒ cancel the scheduled
//       retry; else ONE upsert with every queued event in insertion order; while events remain
//       (arrived during the request) and the gate allows, the next request follows. A non-forced
//       flush while one is running returns the running one; a forced one runs once the running
//       one finished (it is never skipped). An event counts as sent only when the API answered:
//       handing a request to the transport removes nothing. Outcome handling:
//         success        remove exactly the sent events; onResponse(data); handleSuccess.
//         invalid (2xx with an unusable body)   delivered: removed; failed/api-error; logged.
//         retry (408/429/5xx/transport)   kept; failed (reason timeout for a timed-out request);
//                        handleFailure({queuedBatches: 1, queuedEvents, minRetryDelayMs: Retry-After}).
//         drop (other 4xx)   removed; batchDropped; warn-logged; handleSuccess (the API answered).
//         disable (401/403/404)   delivery stops for good (until a new queue): every queued event
//                        is discarded, deliveryDisabled, error-logged; later sends reject with
//                        the same message without any request.
//   purge()             discards every queued event and resets the flush runtime (consent
//                       withdrawn); a request in flight finishes without bookkeeping.
//   close()             no retries, timers or follow-up requests any more (destroy; call after
//                       the final forced flush was started).
//   removeMessages(ids) → removed events   removes the queued events whose messageId is in `ids`
//                       (an array), e.g. an outbox bound or time to live dropped them.
//   resume() → number   (with outbox) fills the window from the backlog, then flushes (non-forced).
//   cancelScheduledRetry(), isDisabled(), runtime (the flush runtime), enqueue(event) (queues an
//   already-built event: no gate, no outbox append), size() (in memory), drain() → events
//   (removes all), peek() → copy, maxEvents, backlogOnDisk() → whether events wait on disk only.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/experience-queue.js', {
    provides: ['createExperienceQueue'],
    uses: ['apiResponse', 'createBacklogWindow', 'createQueueFlushRuntime', 'host'],
  });

  var DEFAULT_MAX_EVENTS = 100;

  function normalizeMax(value) {
    return typeof value === 'number' && isFinite(value) && value >= 1 ? Math.floor(value) : DEFAULT_MAX_EVENTS;
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function createExperienceQueue(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var host = settings.host || ns.host;
    var maxEvents = normalizeMax(settings.maxEvents);
    var onDrop = typeof settings.onDrop === 'function' ? settings.onDrop : null;
    var api = settings.api || null;
    var isOnline = typeof settings.isOnline === 'function' ? settings.isOnline : function () { return true; };
    var getProfileId = typeof settings.getProfileId === 'function' ? settings.getProfileId : function () { return undefined; };
    var onResponse = typeof settings.onResponse === 'function' ? settings.onResponse : function () {};
    var setRequestState = typeof settings.setRequestState === 'function' ? settings.setRequestState : function () {};
    var onQueueEvent = typeof settings.onQueueEvent === 'function' ? settings.onQueueEvent : function () {};
    var outbox = settings.outbox !== null && typeof settings.outbox === 'object' ? settings.outbox : null;
    var onRemoved = typeof settings.onRemoved === 'function' ? settings.onRemoved : null;

    var events = [];
    var inFlight = new Set(); // the events of the request in flight: never dropped by the cap
    var waiters = new Map(); // event → {resolve, reject}: online sends awaiting their request
    var active = null; // the running flush (a promise)
    var generation = 0; // bumped by purge(): a request in flight then finishes without bookkeeping
    var disabledReason = null;
    var disabledStatus = 0;
    var disabledCode;
    var closed = false;

    var runtime = ns.createQueueFlushRuntime({
      policy: settings.flushPolicy,
      host: host,
      callbacks: settings.callbacks,
      random: settings.random,
      name: 'Experience',
      onRetry: function () {
        return flush();
      },
    });

    function callSafely(name, fn, argument) {
      try {
        fn(argument);
      } catch (error) {
        host.log('warn', 'Experience queue ' + name + ' callback failed: ' + messageOf(error));
      }
    }

    function emit(type, context) {
      try {
        onQueueEvent(type, context);
      } catch (error) {
        host.log('warn', 'Experience queue event callback failed: ' + messageOf(error));
      }
    }

    function removed(gone, reason) {
      if (onRemoved === null || gone.length === 0) return;
      try {
        onRemoved(gone, reason);
      } catch (error) {
        host.log('warn', 'Experience queue onRemoved callback failed: ' + messageOf(error));
      }
    }

    function settleWaiter(event, outcome, error) {
      var waiter = waiters.get(event);
      if (waiter === undefined) return;
      waiters.delete(event);
      if (error !== undefined) waiter.reject(error);
      else waiter.resolve(outcome);
    }

    function releaseWaiters() {
      var pending = Array.from(waiters.values());
      waiters.clear();
      pending.forEach(function (waiter) {
        waiter.resolve({ accepted: true });
      });
    }

    function enqueue(event) {
      var dropped = [];
      if (events.length >= maxEvents) {
        var excess = events.length - maxEvents + 1;
        events = events.filter(function (old) {
          if (excess === 0 || inFlight.has(old)) return true;
          dropped.push(old);
          excess--;
          return false;
        });
      }
      events.push(event);
      if (dropped.length > 0) {
        removed(dropped, 'capped');
        dropped.forEach(function (old) {
          settleWaiter(old, { accepted: true });
        });
        if (onDrop !== null) {
          callSafely('onDrop', onDrop, { droppedCount: dropped.length, droppedEvents: dropped, maxEvents: maxEvents, queuedEvents: events.length });
        }
      }
    }

    function removeSent(batch) {
      var sent = new Set(batch);
      events = events.filter(function (event) {
        return !sent.has(event);
      });
      refill();
    }

    // With an outbox: the window over the stored backlog (bridge/backlog-window.js).
    var backlog = outbox === null ? null : ns.createBacklogWindow({
      outbox: outbox,
      capacity: maxEvents,
      size: function () { return events.length; },
      take: function (event) { events.push(event); },
      isClosed: function () { return closed; },
      name: 'Experience',
      host: host,
    });

    // Loads stored events into the window while it has room and events wait on disk only.
    function refill() {
      return backlog === null ? 0 : backlog.refill();
    }

    // What a caller learns about an event the API refused: {status, reason, code?}.
    function refusal(status, reason, code) {
      var refused = { status: status, reason: reason };
      if (typeof code === 'string') refused.code = code;
      return refused;
    }

    function disabledRefusal() {
      return refusal(disabledStatus, disabledReason, disabledCode);
    }

    // Stores the event first (a throw fails the send: nothing is queued), then keeps it in the
    // window or on disk only. → true when the event is in memory.
    function accept(event) {
      if (backlog === null) {
        enqueue(event);
        return true;
      }
      return backlog.accept(event);
    }

    function send(event) {
      if (api === null) {
        accept(event);
        return { accepted: true };
      }
      if (disabledReason !== null) return Promise.resolve({ accepted: true, refused: disabledRefusal() });
      var inMemory = accept(event);
      if (closed || !isOnline() || !inMemory) {
        if (!closed && isOnline()) flush();
        return { accepted: true };
      }
      return new Promise(function (resolve, reject) {
        waiters.set(event, { resolve: resolve, reject: reject });
        flush();
      });
    }

    function gateAllows(force) {
      return !runtime.shouldSkip({ force: force, isOnline: isOnline() });
    }

    function flush(flushOptions) {
      var force = flushOptions !== null && typeof flushOptions === 'object' && flushOptions.force === true;
      if (api === null) return Promise.resolve();
      if (active !== null) {
        // A forced flush is never skipped: it runs once the running one finished.
        return force ? active.then(function () { return flush(flushOptions); }) : active;
      }
      if (disabledReason !== null || (closed && !force)) {
        releaseWaiters();
        return Promise.resolve();
      }
      if (events.length === 0) {
        runtime.cancelScheduledRetry();
        return Promise.resolve();
      }
      if (!gateAllows(force)) {
        releaseWaiters();
        return Promise.resolve();
      }
      var running = request(force).then(undefined, function (error) {
        host.log('error', 'Experience queue flush failed unexpectedly: ' + messageOf(error));
      }).then(function () {
        active = null;
        releaseWaiters();
      });
      // request() started synchronously; `active` is set before any of its reactions run.
      active = running;
      return running;
    }

    // One request with every queued event, then (while allowed) the next one.
    function request(force) {
      var batch = events.slice();
      var round = generation;
      inFlight = new Set(batch);
      runtime.markFlushStarted();
      setRequestState({ status: 'pending' });
      return api.upsertProfile({ profileId: getProfileId(), events: batch }).then(undefined, function (error) {
        return ns.apiResponse.outcomeOfError('Experience', error);
      }).then(function (outcome) {
        runtime.markFlushFinished();
        inFlight = new Set();
        if (round !== generation) {
          // Purged while in flight: the events are gone; nothing to count or retry.
          batch.forEach(function (event) {
            settleWaiter(event, { accepted: true });
          });
          if (outcome.ok) return onResponse(outcome.data);
          return undefined;
        }
        return handle(batch, outcome);
      }).then(function (next) {
        if (next === true && !closed && disabledReason === null && events.length > 0 && gateAllows(false)) return request(false);
        return undefined;
      });
    }

    // → true when the next request may follow at once.
    function handle(batch, outcome) {
      if (outcome.ok) {
        removeSent(batch);
        removed(batch, 'delivered');
        if (outcome.ignoredChanges > 0) {
          host.log('warn', 'Experience API response: ignored ' + outcome.ignoredChanges + ' change(s) of an unknown type.');
        }
        if (!closed) runtime.handleSuccess();
        return Promise.resolve(onResponse(outcome.data)).then(function () {
          batch.forEach(function (event) {
            settleWaiter(event, { accepted: true, data: outcome.data });
          });
          return true;
        });
      }
      switch (outcome.kind) {
        case 'invalid':
          removeSent(batch);
          removed(batch, 'delivered');
          setRequestState({ status: 'failed', reason: 'api-error' });
          host.log('error', outcome.reason + ' The ' + batch.length + ' event(s) reached the API and are not sent again.');
          if (!closed) runtime.handleSuccess();
          batch.forEach(function (event) {
            settleWaiter(event, { accepted: true });
          });
          return true;
        case 'drop': {
          removeSent(batch);
          removed(batch, 'dropped');
          setRequestState({ status: 'failed', reason: 'api-error' });
          var dropReason = outcome.reason + '; the batch of ' + batch.length + ' event(s) was dropped (the API refuses it).';
          host.log('warn', dropReason);
          emit('batchDropped', { status: outcome.status, reason: dropReason, droppedCount: batch.length, droppedEvents: batch });
          if (!closed) runtime.handleSuccess();
          batch.forEach(function (event) {
            settleWaiter(event, { accepted: true, refused: refusal(outcome.status, dropReason, outcome.code) });
          });
          return true;
        }
        case 'disable':
          disable(outcome);
          return false;
        default:
          setRequestState({ status: 'failed', reason: outcome.timeout === true ? 'timeout' : 'api-error' });
          host.log('warn', outcome.reason + '; ' + events.length + ' event(s) stay queued for retry.');
          if (!closed) {
            runtime.handleFailure({ queuedBatches: events.length > 0 ? 1 : 0, queuedEvents: events.length, minRetryDelayMs: outcome.retryAfterMs });
          }
          releaseWaiters();
          return false;
      }
    }

    function disable(outcome) {
      disabledReason = 'Experience API delivery disabled: ' + outcome.reason +
        ' (check clientId, environment and the Experience base URL). No further Experience requests are made by this client instance.';
      var discardedEvents = events;
      events = [];
      removed(discardedEvents, 'disabled');
      var stored = backlog === null ? [] : backlog.discardStored();
      removed(stored, 'disabled');
      var discarded = discardedEvents.length + stored.length;
      runtime.reset();
      setRequestState({ status: 'failed', reason: 'api-error' });
      host.log('error', disabledReason + ' ' + discarded + ' queued event(s) discarded.');
      emit('deliveryDisabled', { status: outcome.status, reason: disabledReason, droppedCount: discarded });
      disabledStatus = outcome.status;
      disabledCode = outcome.code;
      var pending = Array.from(waiters.values());
      waiters.clear();
      pending.forEach(function (waiter) {
        waiter.resolve({ accepted: true, refused: disabledRefusal() });
      });
    }

    function purge() {
      generation++;
      events = [];
      // The host purges the outbox itself: nothing waits on disk any more.
      if (backlog !== null) backlog.purged();
      runtime.reset();
      releaseWaiters();
    }

    // Fills the window from the backlog (a restart) and flushes.
    function resume() {
      if (backlog === null) return 0;
      var loaded = backlog.resume();
      if (events.length > 0) flush();
      return loaded;
    }

    function close() {
      closed = true;
      runtime.reset();
    }

    function removeMessages(ids) {
      var wanted = new Set(Array.isArray(ids) ? ids : []);
      var gone = [];
      events = events.filter(function (event) {
        var hit = event !== null && typeof event === 'object' && wanted.has(event.messageId);
        if (hit) gone.push(event);
        return !hit;
      });
      gone.forEach(function (event) {
        settleWaiter(event, { accepted: true });
      });
      removed(gone, 'removed');
      refill();
      return gone;
    }

    return {
      send: send,
      enqueue: enqueue,
      flush: flush,
      purge: purge,
      close: close,
      removeMessages: removeMessages,
      cancelScheduledRetry: function () {
        runtime.cancelScheduledRetry();
      },
      isDisabled: function () {
        return disabledReason !== null;
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
      resume: resume,
      backlogOnDisk: function () {
        return backlog !== null && backlog.backlogOnDisk();
      },
      runtime: runtime,
      maxEvents: maxEvents,
    };
  }

  ns.createExperienceQueue = createExperienceQueue;
})();
