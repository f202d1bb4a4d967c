// bridge/queue-flush-policy.js
// Contract: the retry/backoff/circuit-breaker policy of the delivery queues.
// One runtime per queue (the client's Experience queue). Publishes
// `__optimization.createQueueFlushRuntime` and the namespace `__optimization.queueFlushPolicy` =
// {toPositiveInt, toRatio, DEFAULT_QUEUE_FLUSH_POLICY, resolveQueueFlushPolicy, computeRetryDelay,
// computeFailureWindow}:
//   toPositiveInt(value, fallback) → number   finite and ≥ 1 ⇒ Math.floor(value), else fallback
//                                              (no coercion: "5" ⇒ fallback).
//   toRatio(value, fallback) → number          finite ⇒ clamped to [0, 1], else fallback.
//   DEFAULT_QUEUE_FLUSH_POLICY                 frozen {flushIntervalMs 30000, baseBackoffMs 500,
//                                              maxBackoffMs 30000, jitterRatio 0.2,
//                                              maxConsecutiveFailures 8, circuitOpenMs 120000}.
//   resolveQueueFlushPolicy(input) → policy    frozen object with exactly the six numeric keys
//                                              above; integers via toPositiveInt, jitterRatio via
//                                              toRatio, then maxBackoffMs = max(baseBackoffMs,
//                                              maxBackoffMs). A missing/non-object input (or null
//                                              members) ⇒ defaults. Callbacks in the input are NOT
//                                              part of the policy (pass them to the runtime).
//   computeRetryDelay(policy, consecutiveFailures, random) → ms
//                                              round(min(maxBackoffMs, baseBackoffMs·2^(n−1)) ·
//                                              (1 + jitterRatio·r)), n = max(1, floor(failures)),
//                                              r = `random` (a number, or a function returning
//                                              one) clamped to [0, 1); undefined ⇒ Math.random().
//   computeFailureWindow({consecutiveFailures, now, retryDelayMs, maxConsecutiveFailures,
//                         circuitOpenMs}) → {openedCircuit, retryDelayMs, nextFlushAllowedAt,
//                                              circuitOpenUntil}: below the limit the next flush
//                                              waits retryDelayMs (circuitOpenUntil 0); at or past
//                                              it the circuit opens for circuitOpenMs.
//   createCircuitBreaker({policy?, host?}) → breaker   THE circuit breaker of every JavaScript
//                delivery path (a client's Experience queue; the Insights queues of client and
//                service and the service's Experience circuit are the Swift host's):
//     recordFailure(minimumOpenMs?) → {consecutiveFailures, openedCircuit, circuitOpenUntil}
//                n += 1; at or past maxConsecutiveFailures the circuit opens until now +
//                max(circuitOpenMs, minimumOpenMs) (computeFailureWindow); frees the probe.
//     recordSuccess() → previous n    closes the circuit (n = 0); frees the probe.
//     admit() → bool   for callers that run concurrently: true while closed; while open false;
//                once the open window has passed the FIRST caller is admitted as the probe
//                and the others are refused until it reports (recordFailure, recordSuccess or
//                release).
//     release()        frees the probe of an admitted call that ended without a request.
//     isOpen() → now < circuitOpenUntil;  reset();  state() → {consecutiveFailures,
//                circuitOpenUntil, probing}.
//   createQueueFlushRuntime({policy?, host?, onRetry?, callbacks?, random?, name?}) → runtime
//     policy     raw or resolved (it is resolved again; idempotent). host defaults to
//                `__optimization.host` (needs now/setTimeout/clearTimeout/log). onRetry() is the
//                non-forced flush to run when a scheduled retry fires (a returned promise's
//                rejection is warn-logged). callbacks: {onFlushFailure(ctx), onCircuitOpen(ctx),
//                onFlushRecovered({consecutiveFailures}), onCallbackError(name, error)}; an
//                exception from a callback goes to onCallbackError, else is warn-logged as
//                `<name> flush policy callback "<callback>" failed: …`; it never propagates.
//     shouldSkip({force?, isOnline?}) → bool     true while a flush is in flight (even forced);
//                else false when forced; else true when offline (isOnline === false; undefined
//                counts as online), or now < nextFlushAllowedAt, or now < circuitOpenUntil.
//     markFlushStarted() / markFlushFinished()  the in-flight flag.
//     circuit          its createCircuitBreaker (one flush at a time: the queue reads isOpen()).
//     handleFailure({queuedBatches, queuedEvents, minRetryDelayMs?}) → {consecutiveFailures,
//                retryDelayMs, openedCircuit}: n += 1; delay = max(computeRetryDelay, minRetryDelayMs)
//                (minRetryDelayMs: a server's Retry-After, honoured as the minimum wait, also for
//                the circuit window); onFlushFailure({consecutiveFailures,
//                queuedBatches, queuedEvents, retryDelayMs: delay}); below the limit: the next
//                flush waits `delay` and a retry is scheduled after it; at/after the limit: the
//                circuit opens (nextFlushAllowedAt = circuitOpenUntil = now + circuitOpenMs),
//                onCircuitOpen({…, retryDelayMs: circuitOpenMs}), retry after circuitOpenMs.
//                A new schedule replaces the previous one (one pending retry at most).
//     handleSuccess()   cancels the retry, resets counters and windows; after ≥ 1 failure calls
//                       onFlushRecovered({consecutiveFailures: previous n}).
//     reset()           (purge) cancels the retry, resets counters and windows, no callback; the
//                       in-flight flag is left alone (a running flush still finishes).
//     cancelScheduledRetry()    (used when the host comes back online).
//     state() → {consecutiveFailures, nextFlushAllowedAt, circuitOpenUntil, flushInFlight,
//                retryScheduled}; isCircuitOpen() → now < circuitOpenUntil; policy (resolved).
// Every timer runs on the host's injected clock (host.setTimeout); nothing here reads real time.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/queue-flush-policy.js', {
    provides: ['createQueueFlushRuntime', 'queueFlushPolicy'],
    uses: ['host'],
  });

  var DEFAULT_QUEUE_FLUSH_POLICY = Object.freeze({
    flushIntervalMs: 30000,
    baseBackoffMs: 500,
    maxBackoffMs: 30000,
    jitterRatio: 0.2,
    maxConsecutiveFailures: 8,
    circuitOpenMs: 120000,
  });

  function isFiniteNumber(value) {
    return typeof value === 'number' && isFinite(value);
  }

  function toPositiveInt(value, fallback) {
    return isFiniteNumber(value) && value >= 1 ? Math.floor(value) : fallback;
  }

  function toRatio(value, fallback) {
    if (!isFiniteNumber(value)) return fallback;
    return value < 0 ? 0 : value > 1 ? 1 : value;
  }

  function resolveQueueFlushPolicy(input) {
    var raw = input !== null && typeof input === 'object' ? input : {};
    var defaults = DEFAULT_QUEUE_FLUSH_POLICY;
    var baseBackoffMs = toPositiveInt(raw.baseBackoffMs, defaults.baseBackoffMs);
    var maxBackoffMs = toPositiveInt(raw.maxBackoffMs, defaults.maxBackoffMs);
    return Object.freeze({
      flushIntervalMs: toPositiveInt(raw.flushIntervalMs, defaults.flushIntervalMs),
      baseBackoffMs: baseBackoffMs,
      maxBackoffMs: Math.max(baseBackoffMs, maxBackoffMs),
      jitterRatio: toRatio(raw.jitterRatio, defaults.jitterRatio),
      maxConsecutiveFailures: toPositiveInt(raw.maxConsecutiveFailures, defaults.maxConsecutiveFailures),
      circuitOpenMs: toPositiveInt(raw.circuitOpenMs, defaults.circuitOpenMs),
    });
  }

  function unitRandom(random) {
    var value = typeof random === 'function' ? random() : random === undefined ? Math.random() : random;
    if (!isFiniteNumber(value) || value < 0) return 0;
    return value >= 1 ? 0.9999999999999999 : value;
  }

  function computeRetryDelay(policy, consecutiveFailures, random) {
    var failures = isFiniteNumber(consecutiveFailures) && consecutiveFailures >= 1 ? Math.floor(consecutiveFailures) : 1;
    // 2^(n−1) overflows to Infinity for huge n; min() with maxBackoffMs caps it.
    var exponential = policy.baseBackoffMs * Math.pow(2, failures - 1);
    var capped = Math.min(policy.maxBackoffMs, exponential);
    return Math.round(capped * (1 + policy.jitterRatio * unitRandom(random)));
  }

  function computeFailureWindow(input) {
    var n = input.consecutiveFailures;
    var now = input.now;
    if (n < input.maxConsecutiveFailures) {
      return {
        openedCircuit: false,
        retryDelayMs: input.retryDelayMs,
        nextFlushAllowedAt: now + input.retryDelayMs,
        circuitOpenUntil: 0,
      };
    }
    var until = now + input.circuitOpenMs;
    return { openedCircuit: true, retryDelayMs: input.circuitOpenMs, nextFlushAllowedAt: until, circuitOpenUntil: until };
  }

  function createCircuitBreaker(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var policy = resolveQueueFlushPolicy(settings.policy);
    var host = settings.host || ns.host;
    var consecutiveFailures = 0;
    var circuitOpenUntil = 0;
    var probing = false;

    function recordFailure(minimumOpenMs) {
      probing = false;
      consecutiveFailures += 1;
      var minimum = isFiniteNumber(minimumOpenMs) && minimumOpenMs > 0 ? Math.ceil(minimumOpenMs) : 0;
      var window = computeFailureWindow({
        consecutiveFailures: consecutiveFailures,
        now: host.now(),
        retryDelayMs: 0,
        maxConsecutiveFailures: policy.maxConsecutiveFailures,
        circuitOpenMs: Math.max(policy.circuitOpenMs, minimum),
      });
      circuitOpenUntil = window.circuitOpenUntil;
      return { consecutiveFailures: consecutiveFailures, openedCircuit: window.openedCircuit, circuitOpenUntil: circuitOpenUntil };
    }

    function recordSuccess() {
      var previous = consecutiveFailures;
      reset();
      return previous;
    }

    function reset() {
      consecutiveFailures = 0;
      circuitOpenUntil = 0;
      probing = false;
    }

    function admit() {
      if (consecutiveFailures < policy.maxConsecutiveFailures) return true;
      if (probing || host.now() < circuitOpenUntil) return false;
      probing = true;
      return true;
    }

    return {
      policy: policy,
      recordFailure: recordFailure,
      recordSuccess: recordSuccess,
      admit: admit,
      release: function () { probing = false; },
      isOpen: function () { return circuitOpenUntil > 0 && host.now() < circuitOpenUntil; },
      reset: reset,
      state: function () {
        return { consecutiveFailures: consecutiveFailures, circuitOpenUntil: circuitOpenUntil, probing: probing };
      },
    };
  }

  function describeError(error) {
    return error instanceof Error ? error.name + ': ' + error.message : String(error);
  }

  function createQueueFlushRuntime(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var policy = resolveQueueFlushPolicy(settings.policy);
    var host = settings.host || ns.host;
    var onRetry = typeof settings.onRetry === 'function' ? settings.onRetry : null;
    var callbacks = settings.callbacks !== null && typeof settings.callbacks === 'object' ? settings.callbacks : {};
    var random = settings.random;
    var name = typeof settings.name === 'string' && settings.name.length > 0 ? settings.name : 'Queue';

    var circuit = createCircuitBreaker({ policy: policy, host: host });
    var nextFlushAllowedAt = 0;
    var flushInFlight = false;
    var retryTimer = null;

    function warn(message) {
      if (host && typeof host.log === 'function') host.log('warn', message);
    }

    function invoke(callbackName, argument) {
      var callback = callbacks[callbackName];
      if (typeof callback !== 'function') return;
      try {
        callback(argument);
      } catch (error) {
        var onCallbackError = callbacks.onCallbackError;
        if (typeof onCallbackError === 'function') {
          try {
            onCallbackError(callbackName, error);
            return;
          } catch (nested) {
            // fall through to the log
          }
        }
        warn(name + ' flush policy callback "' + callbackName + '" failed: ' + describeError(error));
      }
    }

    function cancelScheduledRetry() {
      if (retryTimer === null) return;
      host.clearTimeout(retryTimer);
      retryTimer = null;
    }

    function fireRetry() {
      retryTimer = null;
      if (onRetry === null) return;
      try {
        var outcome = onRetry();
        if (outcome !== null && typeof outcome === 'object' && typeof outcome.then === 'function') {
          outcome.then(undefined, function (error) {
            warn(name + ' scheduled flush retry failed: ' + describeError(error));
          });
        }
      } catch (error) {
        warn(name + ' scheduled flush retry failed: ' + describeError(error));
      }
    }

    function scheduleRetry(delayMs) {
      cancelScheduledRetry();
      retryTimer = host.setTimeout(fireRetry, delayMs);
    }

    function shouldSkip(gate) {
      var input = gate !== null && typeof gate === 'object' ? gate : {};
      if (flushInFlight) return true;
      if (input.force === true) return false;
      if (input.isOnline === false) return true;
      return host.now() < nextFlushAllowedAt || circuit.isOpen();
    }

    function handleFailure(counts) {
      var input = counts !== null && typeof counts === 'object' ? counts : {};
      var minimum = isFiniteNumber(input.minRetryDelayMs) && input.minRetryDelayMs > 0 ? Math.ceil(input.minRetryDelayMs) : 0;
      var failure = circuit.recordFailure(minimum);
      var n = failure.consecutiveFailures;
      var delay = Math.max(computeRetryDelay(policy, n, random), minimum);
      var context = {
        consecutiveFailures: n,
        queuedBatches: isFiniteNumber(input.queuedBatches) ? input.queuedBatches : 0,
        queuedEvents: isFiniteNumber(input.queuedEvents) ? input.queuedEvents : 0,
        retryDelayMs: delay,
      };
      invoke('onFlushFailure', context);
      var waitMs = failure.openedCircuit ? Math.max(policy.circuitOpenMs, minimum) : delay;
      nextFlushAllowedAt = host.now() + waitMs;
      if (failure.openedCircuit) {
        invoke('onCircuitOpen', {
          consecutiveFailures: n,
          queuedBatches: context.queuedBatches,
          queuedEvents: context.queuedEvents,
          retryDelayMs: waitMs,
        });
      }
      scheduleRetry(waitMs);
      return { consecutiveFailures: n, retryDelayMs: waitMs, openedCircuit: failure.openedCircuit };
    }

    function handleSuccess() {
      cancelScheduledRetry();
      nextFlushAllowedAt = 0;
      var previous = circuit.recordSuccess();
      if (previous > 0) invoke('onFlushRecovered', { consecutiveFailures: previous });
    }

    function reset() {
      cancelScheduledRetry();
      nextFlushAllowedAt = 0;
      circuit.reset();
    }

    return {
      policy: policy,
      shouldSkip: shouldSkip,
      markFlushStarted: function () { flushInFlight = true; },
      markFlushFinished: function () { flushInFlight = false; },
      handleFailure: handleFailure,
      handleSuccess: handleSuccess,
      reset: reset,
      cancelScheduledRetry: cancelScheduledRetry,
      circuit: circuit,
      isCircuitOpen: circuit.isOpen,
      state: function () {
        var breaker = circuit.state();
        return {
          consecutiveFailures: breaker.consecutiveFailures,
          nextFlushAllowedAt: nextFlushAllowedAt,
          circuitOpenUntil: breaker.circuitOpenUntil,
          flushInFlight: flushInFlight,
          retryScheduled: retryTimer !== null,
        };
      },
    };
  }

  ns.queueFlushPolicy = Object.freeze({
    toPositiveInt: toPositiveInt,
    toRatio: toRatio,
    DEFAULT_QUEUE_FLUSH_POLICY: DEFAULT_QUEUE_FLUSH_POLICY,
    resolveQueueFlushPolicy: resolveQueueFlushPolicy,
    computeRetryDelay: computeRetryDelay,
    computeFailureWindow: computeFailureWindow,
    createCircuitBreaker: createCircuitBreaker,
  });
  ns.createQueueFlushRuntime = createQueueFlushRuntime;
})();
