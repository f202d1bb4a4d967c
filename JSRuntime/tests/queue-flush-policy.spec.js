// tests/queue-flush-policy.spec.js — retry/backoff/circuit policy of the delivery queues
// . Timers run on the fake host's manual clock.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var policyLib = ns.queueFlushPolicy;

  function recorder() {
    var calls = [];
    return {
      calls: calls,
      callbacks: {
        onFlushFailure: function (ctx) { calls.push(['onFlushFailure', ctx]); },
        onCircuitOpen: function (ctx) { calls.push(['onCircuitOpen', ctx]); },
        onFlushRecovered: function (ctx) { calls.push(['onFlushRecovered', ctx]); },
        onCallbackError: function (name, error) { calls.push(['onCallbackError', name, error.message]); },
      },
    };
  }

  jsTest('Q17 toPositiveInt and toRatio normalise numbers', function () {
    var toPositiveInt = policyLib.toPositiveInt;
    var toRatio = policyLib.toRatio;
    assert.equal(toPositiveInt(undefined, 10), 10);
    assert.equal(toPositiveInt(NaN, 10), 10);
    assert.equal(toPositiveInt(0, 10), 10);
    assert.equal(toPositiveInt(-1, 10), 10);
    assert.equal(toPositiveInt(12.9, 10), 12);
    assert.equal(toPositiveInt(Infinity, 10), 10);
    assert.equal(toPositiveInt('12', 10), 10, 'no coercion from strings');
    assert.equal(toPositiveInt(1, 10), 1);
    assert.equal(toRatio(undefined, 0.2), 0.2);
    assert.equal(toRatio(-2, 0.2), 0);
    assert.equal(toRatio(0.5, 0.2), 0.5);
    assert.equal(toRatio(10, 0.2), 1);
    assert.equal(toRatio(NaN, 0.2), 0.2);
    assert.equal(toRatio(null, 0.2), 0.2);
  });

  jsTest('Q1 invalid flush policy values fall back to the defaults; jitterRatio is clamped', function () {
    var policy = policyLib.resolveQueueFlushPolicy({
      baseBackoffMs: 0, maxBackoffMs: -1, jitterRatio: 2, maxConsecutiveFailures: 0, circuitOpenMs: NaN,
    });
    assert.deepEqual(policy, {
      flushIntervalMs: 30000, baseBackoffMs: 500, maxBackoffMs: 30000, jitterRatio: 1,
      maxConsecutiveFailures: 8, circuitOpenMs: 120000,
    });
    assert.deepEqual(policyLib.resolveQueueFlushPolicy(undefined), policyLib.DEFAULT_QUEUE_FLUSH_POLICY);
    assert.deepEqual(policyLib.resolveQueueFlushPolicy(null), policyLib.DEFAULT_QUEUE_FLUSH_POLICY);
    assert.deepEqual(policyLib.resolveQueueFlushPolicy({ flushIntervalMs: 1000.7, onFlushFailure: function () {} }), {
      flushIntervalMs: 1000, baseBackoffMs: 500, maxBackoffMs: 30000, jitterRatio: 0.2,
      maxConsecutiveFailures: 8, circuitOpenMs: 120000,
    }, 'callbacks are not part of the numeric policy');
  });

  jsTest('Q2 maxBackoffMs is raised to baseBackoffMs', function () {
    var policy = policyLib.resolveQueueFlushPolicy({ baseBackoffMs: 100, maxBackoffMs: 10 });
    assert.equal(policy.baseBackoffMs, 100);
    assert.equal(policy.maxBackoffMs, 100);
  });

  jsTest('Q3 retry delay is capped exponential backoff', function () {
    var policy = policyLib.resolveQueueFlushPolicy({ baseBackoffMs: 10, maxBackoffMs: 40, jitterRatio: 0 });
    var delays = [1, 2, 3, 4].map(function (n) { return policyLib.computeRetryDelay(policy, n, 0.5); });
    assert.deepEqual(delays, [10, 20, 40, 40]);
    assert.equal(policyLib.computeRetryDelay(policy, 5000, 0), 40, 'huge failure counts stay capped');
  });

  jsTest('Q3 jitter adds up to jitterRatio of the capped delay', function () {
    var policy = policyLib.resolveQueueFlushPolicy({ baseBackoffMs: 100, maxBackoffMs: 1000, jitterRatio: 0.5 });
    assert.equal(policyLib.computeRetryDelay(policy, 1, 0), 100);
    assert.equal(policyLib.computeRetryDelay(policy, 1, 0.5), 125);
    assert.equal(policyLib.computeRetryDelay(policy, 2, function () { return 0.999; }), 300);
    assert.equal(policyLib.computeRetryDelay(policy, 1, 7), 150, 'random is clamped below 1');
    var delay = policyLib.computeRetryDelay(policy, 1);
    assert.ok(delay >= 100 && delay <= 150, 'Math.random by default');
  });

  jsTest('Q4 failure window below the limit waits the retry delay', function () {
    assert.deepEqual(policyLib.computeFailureWindow({
      consecutiveFailures: 1, now: 1000, retryDelayMs: 250, maxConsecutiveFailures: 3, circuitOpenMs: 5000,
    }), { openedCircuit: false, retryDelayMs: 250, nextFlushAllowedAt: 1250, circuitOpenUntil: 0 });
  });

  jsTest('Q5 failure window at the limit opens the circuit', function () {
    assert.deepEqual(policyLib.computeFailureWindow({
      consecutiveFailures: 3, now: 1000, retryDelayMs: 250, maxConsecutiveFailures: 3, circuitOpenMs: 5000,
    }), { openedCircuit: true, retryDelayMs: 5000, nextFlushAllowedAt: 6000, circuitOpenUntil: 6000 });
  });

  jsTest('Q6 shouldSkip: in-flight flushes are skipped even when forced; forced flushes ignore offline', function () {
    var runtime = ns.createQueueFlushRuntime({});
    assert.equal(runtime.shouldSkip({ force: false, isOnline: true }), false);
    assert.equal(runtime.shouldSkip({ isOnline: false }), true, 'offline and not forced');
    runtime.markFlushStarted();
    assert.equal(runtime.shouldSkip({ force: false, isOnline: true }), true);
    assert.equal(runtime.shouldSkip({ force: true, isOnline: true }), true);
    runtime.markFlushFinished();
    assert.equal(runtime.shouldSkip({ force: true, isOnline: false }), false);
  });

  jsTest('Q7 failures back off, then open the circuit; retries fire on the injected clock', function () {
    var rec = recorder();
    var retries = [];
    var runtime = ns.createQueueFlushRuntime({
      policy: { baseBackoffMs: 10, maxBackoffMs: 10, jitterRatio: 0, maxConsecutiveFailures: 2, circuitOpenMs: 50 },
      callbacks: rec.callbacks,
      onRetry: function () { retries.push(__testHost.now() - __testHost.START_TIME); },
    });
    var first = runtime.handleFailure({ queuedBatches: 1, queuedEvents: 3 });
    assert.deepEqual(first, { consecutiveFailures: 1, retryDelayMs: 10, openedCircuit: false });
    assert.deepEqual(rec.calls, [['onFlushFailure', { consecutiveFailures: 1, queuedBatches: 1, queuedEvents: 3, retryDelayMs: 10 }]]);
    assert.equal(runtime.shouldSkip({ isOnline: true }), true, 'inside the backoff window');
    assert.equal(runtime.shouldSkip({ force: true, isOnline: true }), false, 'forced flushes ignore the window');
    __testHost.advance(9);
    assert.deepEqual(retries, []);
    __testHost.advance(1);
    assert.deepEqual(retries, [10], 'retry after 10 ms');
    assert.equal(runtime.shouldSkip({ isOnline: true }), false, 'window elapsed');

    var second = runtime.handleFailure({ queuedBatches: 1, queuedEvents: 3 });
    assert.deepEqual(second, { consecutiveFailures: 2, retryDelayMs: 50, openedCircuit: true });
    assert.deepEqual(rec.calls.slice(1), [
      ['onFlushFailure', { consecutiveFailures: 2, queuedBatches: 1, queuedEvents: 3, retryDelayMs: 10 }],
      ['onCircuitOpen', { consecutiveFailures: 2, queuedBatches: 1, queuedEvents: 3, retryDelayMs: 50 }],
    ]);
    assert.equal(runtime.isCircuitOpen(), true);
    assert.equal(runtime.state().circuitOpenUntil, __testHost.now() + 50);
    __testHost.advance(49);
    assert.deepEqual(retries, [10]);
    assert.equal(runtime.shouldSkip({ isOnline: true }), true, 'circuit open');
    __testHost.advance(1);
    assert.deepEqual(retries, [10, 60], 'retry after circuitOpenMs');
    assert.equal(runtime.isCircuitOpen(), false);

    runtime.handleFailure({ queuedBatches: 2, queuedEvents: 4 });
    assert.deepEqual(rec.calls[rec.calls.length - 1], ['onCircuitOpen', { consecutiveFailures: 3, queuedBatches: 2, queuedEvents: 4, retryDelayMs: 50 }],
      'every further failure re-opens the circuit');
    assert.equal(__testHost.pendingTimers().length, 1, 'one pending retry at most');
  });

  jsTest('Q8 success after a failure recovers, resets the window and cancels the pending retry', function () {
    var rec = recorder();
    var retries = 0;
    var runtime = ns.createQueueFlushRuntime({
      policy: { baseBackoffMs: 100, jitterRatio: 0 },
      callbacks: rec.callbacks,
      onRetry: function () { retries += 1; },
    });
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    assert.equal(runtime.shouldSkip({ isOnline: true }), true);
    assert.equal(runtime.state().retryScheduled, true);
    runtime.handleSuccess();
    assert.equal(runtime.shouldSkip({ isOnline: true }), false);
    assert.deepEqual(rec.calls[1], ['onFlushRecovered', { consecutiveFailures: 1 }]);
    assert.deepEqual(runtime.state(), {
      consecutiveFailures: 0, nextFlushAllowedAt: 0, circuitOpenUntil: 0, flushInFlight: false, retryScheduled: false,
    });
    assert.equal(__testHost.pendingTimers().length, 0);
    __testHost.advance(10000);
    assert.equal(retries, 0, 'cancelled retry never fires');
    runtime.handleSuccess();
    assert.equal(rec.calls.length, 2, 'no recovery callback without a failure');
  });

  jsTest('Q9 a throwing callback is reported to onCallbackError and never propagates', function () {
    var errors = [];
    var runtime = ns.createQueueFlushRuntime({
      policy: { maxConsecutiveFailures: 1, jitterRatio: 0 },
      callbacks: {
        onFlushFailure: function () { throw new Error('boom'); },
        onCircuitOpen: function () { throw new Error('open boom'); },
        onCallbackError: function (name, error) { errors.push([name, error.message]); },
      },
    });
    var result = runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    assert.equal(result.openedCircuit, true);
    assert.deepEqual(errors, [['onFlushFailure', 'boom'], ['onCircuitOpen', 'open boom']]);
  });

  jsTest('Q9 without onCallbackError a throwing callback is warn-logged', function () {
    __optimization.host.setLogLevel('warn');
    var runtime = ns.createQueueFlushRuntime({
      name: 'Insights',
      callbacks: { onFlushRecovered: function () { throw new Error('nope'); } },
    });
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    runtime.handleSuccess();
    __optimization.host.setLogLevel('error');
    assert.equal(__testHost.logs.length, 1);
    assert.equal(__testHost.logs[0].level, 'warn');
    assert.ok(/Insights flush policy callback "onFlushRecovered" failed: Error: nope/.test(__testHost.logs[0].message), __testHost.logs[0].message);
  });

  jsTest('queue flush runtime: reset() (purge) clears counters, windows and the retry without callbacks', function () {
    var rec = recorder();
    var retries = 0;
    var runtime = ns.createQueueFlushRuntime({
      policy: { maxConsecutiveFailures: 1, jitterRatio: 0, circuitOpenMs: 1000 },
      callbacks: rec.callbacks,
      onRetry: function () { retries += 1; },
    });
    runtime.markFlushStarted();
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 2 });
    runtime.reset();
    assert.deepEqual(runtime.state(), {
      consecutiveFailures: 0, nextFlushAllowedAt: 0, circuitOpenUntil: 0, flushInFlight: true, retryScheduled: false,
    });
    runtime.markFlushFinished();
    assert.equal(runtime.shouldSkip({ isOnline: true }), false);
    __testHost.advance(5000);
    assert.equal(retries, 0);
    runtime.handleSuccess();
    assert.equal(rec.calls.filter(function (c) { return c[0] === 'onFlushRecovered'; }).length, 0);
  });

  jsTest('queue flush runtime: cancelScheduledRetry keeps the window; a rejected retry is warn-logged', function () {
    __optimization.host.setLogLevel('warn');
    var runtime = ns.createQueueFlushRuntime({
      policy: { baseBackoffMs: 20, jitterRatio: 0 },
      onRetry: function () { return Promise.reject(new Error('still down')); },
    });
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    runtime.cancelScheduledRetry();
    assert.equal(runtime.state().retryScheduled, false);
    assert.equal(runtime.shouldSkip({ isOnline: true }), true, 'window still applies');
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    __testHost.advance(40);
    return Promise.resolve().then(function () {}).then(function () {
      __optimization.host.setLogLevel('error');
      assert.equal(__testHost.logs.length, 1);
      assert.ok(/Queue scheduled flush retry failed: Error: still down/.test(__testHost.logs[0].message), __testHost.logs[0].message);
    });
  });

  jsTest('createCircuitBreaker: opens at the limit for circuitOpenMs (or a longer minimum); one probe after the window', function () {
    var breaker = policyLib.createCircuitBreaker({ policy: { maxConsecutiveFailures: 2, circuitOpenMs: 1000 } });
    assert.equal(breaker.admit(), true);
    assert.deepEqual(breaker.recordFailure(), { consecutiveFailures: 1, openedCircuit: false, circuitOpenUntil: 0 });
    assert.equal(breaker.isOpen(), false);
    var opened = breaker.recordFailure(2500);
    assert.equal(opened.openedCircuit, true);
    assert.equal(opened.circuitOpenUntil, __testHost.now() + 2500, 'a longer minimum (Retry-After) wins');
    assert.equal(breaker.isOpen(), true);
    assert.equal(breaker.admit(), false);
    __testHost.advance(2500);
    assert.equal(breaker.isOpen(), false);
    assert.equal(breaker.admit(), true, 'the first caller after the window is the probe');
    assert.equal(breaker.admit(), false, 'the others wait for the probe');
    breaker.release();
    assert.equal(breaker.admit(), true, 'a released probe lets the next caller through');
    assert.equal(breaker.recordFailure().openedCircuit, true, 'a failed probe re-opens at once');
    assert.equal(breaker.admit(), false);
    __testHost.advance(1000);
    assert.equal(breaker.admit(), true);
    assert.equal(breaker.recordSuccess(), 3);
    assert.equal(breaker.admit(), true);
    assert.equal(breaker.admit(), true, 'closed: every caller');
    assert.deepEqual(breaker.state(), { consecutiveFailures: 0, circuitOpenUntil: 0, probing: false });
  });

  jsTest('a queue runtime reads the same breaker: its failures open it, a success closes it', function () {
    var runtime = ns.createQueueFlushRuntime({ policy: { maxConsecutiveFailures: 1, circuitOpenMs: 500 } });
    runtime.handleFailure({ queuedBatches: 1, queuedEvents: 1 });
    assert.equal(runtime.circuit.isOpen(), true);
    assert.equal(runtime.isCircuitOpen(), true);
    assert.equal(runtime.shouldSkip({}), true);
    runtime.handleSuccess();
    assert.equal(runtime.circuit.state().consecutiveFailures, 0);
    assert.equal(runtime.shouldSkip({}), false);
    runtime.reset();
  });
})();
