// core/experience-queue.js
// Contract: `__optimization.createExperienceQueue(options)` → the Experience path (spec §6.2,
// §6.4, §3.5; DECISIONS 9). One ordered buffer of built, already-published events, capped at
// `maxEvents` (a positive number, floored; invalid ⇒ 100): when full, the OLDEST events are dropped
// so the new one fits and onDrop({droppedCount, droppedEvents (oldest first), maxEvents,
// queuedEvents}) is called (exceptions logged).
//
// Without `api` the queue only buffers (send ⇒ enqueue, {accepted: true} synchronously). With
// delivery options:
//   api                 {upsertProfile({profileId, events}) → Promise<outcome>} (core/experience-api.js)
//   isOnline()          default: always online
//   getProfileId()      the upsert id (the bridge: persistence-consented anonymous id ?? profile.id)
//   onResponse(data)    applies a successful response (spec §3.5; sets experienceRequestState success)
//   setRequestState(s)  experienceRequestState: {status: "pending"} when a request starts,
//                       {status: "failed", reason: "timeout"|"api-error"} when it fails
//   onQueueEvent(type, context)   "batchDropped" {status, reason, droppedCount, droppedEvents} and
//                       "deliveryDisabled" {status, reason, droppedCount}
//   flushPolicy, callbacks, random, host   for the flush runtime (core/queue-flush-policy.js;
//                       callbacks get onFlushFailure/onCircuitOpen/onFlushRecovered)
// Durable-outbox hooks (docs/outbox.md; both optional, called synchronously, exceptions logged):
//   onAccepted(event)   every event send() queued, before send() returns (not restored ones)
//   onRemoved(events, reason)   events that left the queue for good: "delivered" (2xx, also with
//                       an unusable body), "dropped" (other 4xx), "disabled" (401/403/404: every
//                       queued event), "capped" (the maxEvents cap), "removed" (removeMessages).
//                       A purge reports nothing (the host purges its outbox itself).
// Behaviour with delivery:
//   send(event) → result | Promise<result>   offline ⇒ enqueue, {accepted: true}. Online ⇒ enqueue
//       and flush; the promise resolves {accepted: true, data} when the request carrying the event
//       succeeded (data = the raw, un-intercepted response data), or {accepted: true} as soon as
//       the event stays queued (failed and queued for retry — DECISIONS 9 —, waiting for backoff or
//       an open circuit, dropped by the cap, purged), and rejects with the reason when its batch
//       was refused (other 4xx) or delivery is disabled. Events are sent strictly in order, one
//       request at a time, so an event never overtakes one queued before it.
//   flush({force?}) → Promise   gate shouldSkip({force, isOnline}); empty ⇒ cancel the scheduled
//       retry; else ONE upsert with every queued event in insertion order; while events remain
//       (arrived during the request) and the gate allows, the next request follows. A flush while
//       one is running returns the running one. Outcome handling:
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
//   cancelScheduledRetry(), isDisabled(), runtime (the flush runtime), enqueue(event) (restores an
//   already-built event: no gate, no onAccepted), size(), drain() → events (removes all),
//   peek() → copy, maxEvents.
(function () {
  'use strict';
  var ns = globalThis.__optimization || (globalThis.__optimization = {});

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
    var onAccepted = typeof settings.onAccepted === 'function' ? settings.onAccepted : null;
    var onRemoved = typeof settings.onRemoved === 'function' ? settings.onRemoved : null;

    var events = [];
    var waiters = new Map(); // event → {resolve, reject}: online sends awaiting their request
    var active = null; // the running flush (a promise)
    var generation = 0; // bumped by purge(): a request in flight then finishes without bookkeeping
    var disabledReason = null;
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
      if (events.length >= maxEvents) dropped = events.splice(0, events.length - maxEvents + 1);
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
    }

    function disabledError() {
      return new Error(disabledReason);
    }

    function accept(event) {
      enqueue(event);
      if (onAccepted !== null) callSafely('onAccepted', onAccepted, event);
    }

    function send(event) {
      if (api === null) {
        accept(event);
        return { accepted: true };
      }
      if (disabledReason !== null) return Promise.reject(disabledError());
      accept(event);
      if (closed || !isOnline()) return { accepted: true };
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
      if (active !== null) return active;
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
      runtime.markFlushStarted();
      setRequestState({ status: 'pending' });
      return api.upsertProfile({ profileId: getProfileId(), events: batch }).then(undefined, function (error) {
        return ns.apiResponse.outcomeOfError('Experience', error);
      }).then(function (outcome) {
        runtime.markFlushFinished();
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
          host.log('warn', 'Experience API response: ignored ' + outcome.ignoredChanges + ' change(s) whose type is not "Variable".');
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
            settleWaiter(event, undefined, new Error(dropReason));
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
      var discarded = events.length;
      var discardedEvents = events;
      events = [];
      removed(discardedEvents, 'disabled');
      runtime.reset();
      setRequestState({ status: 'failed', reason: 'api-error' });
      host.log('error', disabledReason + ' ' + discarded + ' queued event(s) discarded.');
      emit('deliveryDisabled', { status: outcome.status, reason: disabledReason, droppedCount: discarded });
      var error = disabledError();
      var pending = Array.from(waiters.values());
      waiters.clear();
      pending.forEach(function (waiter) {
        waiter.reject(error);
      });
    }

    function purge() {
      generation++;
      events = [];
      runtime.reset();
      releaseWaiters();
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
      runtime: runtime,
      maxEvents: maxEvents,
    };
  }

  ns.createExperienceQueue = createExperienceQueue;
})();
