// tests/delivery-queues.spec.js — delivery through the bridge on the fake host: the Experience
// queue's online sends, offline buffering, retries with backoff and Retry-After, the circuit
// breaker, status handling, consent purges, reconnect and destroy flushes; and what the bridge
// hands to the host's Insights queue (fake-host.js __testHost.insights: the Swift host queues,
// batches and sends Insights events, so no Insights request leaves JavaScript). Every timer runs
// on __testHost.advance.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };
  var EXPERIENCE = '/profiles';

  function envelope(id, experiences) {
    return {
      data: {
        profile: { id: id, stableId: id, random: 0.5, audiences: [], traits: {}, location: {} },
        experiences: experiences || [{ experienceId: 'exp-1', variantIndex: 1, variants: { base: 'var' } }],
        changes: [],
      },
      message: '',
      error: null,
    };
  }

  // A fake Experience API: scripted replies (FIFO; a function receives the request), else the
  // envelope of the requested id or `newId`. Any other request fails the test.
  function fakeApi(newId) {
    var script = { experience: [] };
    var handler = function (request) {
      if (request.url.indexOf(EXPERIENCE) === -1) throw new Error('unexpected request to ' + request.url);
      if (script.experience.length > 0) {
        var next = script.experience.shift();
        return typeof next === 'function' ? next(request) : next;
      }
      var match = /\/profiles\/([^?]+)/.exec(request.url);
      return { status: 200, body: envelope(match ? decodeURIComponent(match[1]) : newId || 'p-new') };
    };
    handler.script = script;
    return handler;
  }

  var requests = __testHost.fetchesTo;
  var eventsOf = __testHost.eventsOf;
  var drain = __testHost.drainJobs;

  function settled(requestId) {
    return __testHost.settled.filter(function (s) { return s.requestId === requestId; });
  }

  function result(requestId) {
    var list = settled(requestId);
    assert.equal(list.length, 1, 'settled once: ' + requestId);
    return { ok: list[0].ok, value: list[0].ok ? JSON.parse(list[0].json) : list[0].json };
  }

  // Starts the bridge (online unless config.online === false) with consent and the fake API.
  function withDelivery(config, body) {
    return function () {
      var rec = { queueEvents: [], states: [], emitted: [] };
      var settings = Object.assign({ clientId: 'org-1', environment: 'main', defaults: { consent: true } }, config || {});
      var online = settings.online !== false;
      delete settings.online;
      var api = settings.api && settings.api.handler ? settings.api.handler : fakeApi();
      if (settings.api) delete settings.api.handler;
      globalThis.__nativeOnQueueEvent = function (json) { rec.queueEvents.push(JSON.parse(json)); };
      globalThis.__nativeOnStateChange = function (json) { rec.states.push(JSON.parse(json)); };
      globalThis.__nativeOnEventEmitted = function (json) { rec.emitted.push(JSON.parse(json)); };
      __testHost.fetchHandler = api;
      rec.api = api;
      rec.ofType = function (type, queue) {
        return rec.queueEvents.filter(function (e) { return e.type === type && (queue === undefined || e.queue === queue); });
      };
      function cleanup() {
        delete globalThis.__nativeOnQueueEvent;
        delete globalThis.__nativeOnEventEmitted;
      }
      try {
        __bridge.setOnline(online);
        __bridge.initialize(settings);
        return Promise.resolve(body(rec)).then(function (value) { cleanup(); return value; }, function (error) { cleanup(); throw error; });
      } catch (error) {
        cleanup();
        throw error;
      }
    };
  }

  function sizes() {
    return JSON.parse(__bridge.queueSizes());
  }

  function state() {
    return JSON.parse(__bridge.getState());
  }

  var FAST = { baseBackoffMs: 10, maxBackoffMs: 10, jitterRatio: 0, maxConsecutiveFailures: 2, circuitOpenMs: 1000 };

  jsTest('online track: one upsert; Q13 idle → pending → success; raw data to the caller; selections applied', withDelivery({}, function (rec) {
    __bridge.track({ event: 'bought' }, 't1');
    assert.deepEqual(state().experienceRequestState, { status: 'pending' }, 'pending while in flight');
    return drain().then(function () {
      var statuses = rec.states.map(function (s) { return s.experienceRequestState.status; });
      assert.deepEqual(statuses.filter(function (s, i) { return i === 0 || s !== statuses[i - 1]; }), ['idle', 'pending', 'success']);
      var sent = requests('experience');
      assert.equal(sent.length, 1);
      assert.equal(sent[0].url, 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles');
      assert.equal(eventsOf(sent[0])[0].event, 'bought');
      assert.equal(eventsOf(sent[0])[0].messageId, rec.emitted[0].messageId);
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.equal(outcome.value.accepted, true);
      assert.equal(outcome.value.data.profile.id, 'p-new');
      assert.equal(state().profile.id, 'p-new');
      assert.equal(state().canOptimize, true);
      assert.equal(state().selectedOptimizations[0].sticky, false, 'parsed selections always carry sticky');
      assert.deepEqual(sizes(), { experience: 0 });
    });
  }));

  jsTest('anonymous id: used with persistence consent, forgotten without it; profile.id otherwise; reset ⇒ create', withDelivery({
    defaults: { consent: true, persistenceConsent: true, anonymousId: 'anon-1' },
    api: { handler: (function () { var api = fakeApi(); api.script.experience.push({ status: 200, body: envelope('server-1') }); return api; })() },
  }, function () {
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.ok(/\/profiles\/anon-1$/.test(requests('experience')[0].url), 'anonymous id while persistence consent is true');
      assert.equal(state().profile.id, 'server-1');
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      assert.ok(/\/profiles\/server-1$/.test(requests('experience')[1].url), 'anonymous id := profile.id');
      __bridge.consent({ persistence: false });
      __bridge.track({ event: 'c' }, 't3');
      return drain();
    }).then(function () {
      assert.ok(/\/profiles\/server-1$/.test(requests('experience')[2].url), 'profile.id keeps continuity in the session');
      __bridge.reset();
      __bridge.track({ event: 'd' }, 't4');
      return drain();
    }).then(function () {
      assert.ok(/\/profiles$/.test(requests('experience')[3].url), 'after reset a new profile is created');
    });
  }));

  jsTest('without persistence consent a configured anonymous id is not used', withDelivery({
    defaults: { consent: true, persistenceConsent: false, anonymousId: 'anon-1' },
  }, function () {
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.ok(/\/profiles$/.test(requests('experience')[0].url));
    });
  }));

  jsTest('an online failure is queued, retried on the clock, not lost; failed api-error → pending → success', withDelivery({
    queuePolicy: { flush: { baseBackoffMs: 100, maxBackoffMs: 100, jitterRatio: 0 } },
  }, function (rec) {
    rec.api.script.experience.push({ status: 500 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.deepEqual(result('t1').value, { accepted: true }, 'queued for retry: accepted, no data');
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
      assert.deepEqual(sizes().experience, 1);
      assert.deepEqual(rec.ofType('flushFailure', 'experience').map(function (e) { return e.context; }),
        [{ consecutiveFailures: 1, queuedBatches: 1, queuedEvents: 1, retryDelayMs: 100 }]);
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 1, 'nothing is sent during the backoff');
      assert.deepEqual(result('t2').value, { accepted: true });
      __testHost.advance(99);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 1);
      __testHost.advance(1);
      assert.deepEqual(state().experienceRequestState, { status: 'pending' });
      return drain();
    }).then(function () {
      var sent = requests('experience');
      assert.equal(sent.length, 2);
      assert.deepEqual(eventsOf(sent[1]).map(function (e) { return e.event; }), ['a', 'b'], 'one request, in order');
      assert.equal(eventsOf(sent[1])[0].messageId, eventsOf(sent[0])[0].messageId, 'a retry keeps the messageId');
      assert.deepEqual(state().experienceRequestState, { status: 'success' });
      assert.deepEqual(rec.ofType('flushRecovered', 'experience')[0].context, { consecutiveFailures: 1 });
      assert.equal(sizes().experience, 0);
    });
  }));

  jsTest('Q14: a timed-out request fails with reason "timeout"', withDelivery({}, function (rec) {
    rec.api.script.experience.push({ error: 'request timed out after 25 ms' });
    __bridge.identify({ userId: 'u' }, 'i1');
    return drain().then(function () {
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'timeout' });
      assert.equal(state().canOptimize, false);
    });
  }));

  jsTest('Q11: offline cap 2 reports one drop; the reconnect flush sends both and reports its failure', withDelivery({
    online: false,
    queuePolicy: { offlineMaxEvents: 2, flush: { baseBackoffMs: 321, jitterRatio: 0, maxBackoffMs: 321 } },
  }, function (rec) {
    rec.api.script.experience.push({ status: 503 });
    ['e1', 'e2', 'e3'].forEach(function (name, i) { __bridge.track({ event: name }, 't' + i); });
    var drops = rec.ofType('offlineDrop', 'experience');
    assert.equal(drops.length, 1);
    assert.equal(drops[0].context.droppedCount, 1);
    assert.equal(drops[0].context.maxEvents, 2);
    assert.equal(drops[0].context.queuedEvents, 2);
    assert.equal(drops[0].context.droppedEvents[0].event, 'e1');
    assert.equal(__testHost.fetches.length, 0, 'nothing is sent offline');
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.deepEqual(eventsOf(requests('experience')[0]).map(function (e) { return e.event; }), ['e2', 'e3']);
      assert.deepEqual(rec.ofType('flushFailure', 'experience')[0].context,
        { consecutiveFailures: 1, queuedBatches: 1, queuedEvents: 2, retryDelayMs: 321 });
    });
  }));

  jsTest('offline: 150 events keep the newest 100 (50 drops reported); going online sends them in one request, in order', withDelivery({ online: false }, function (rec) {
    for (var i = 0; i < 150; i++) __bridge.track({ event: 'e' + i }, 't' + i);
    var dropped = rec.ofType('offlineDrop').reduce(function (sum, e) { return sum + e.context.droppedCount; }, 0);
    assert.equal(dropped, 50);
    assert.equal(sizes().experience, 100);
    for (var k = 0; k < 150; k++) assert.deepEqual(result('t' + k).value, { accepted: true });
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = requests('experience');
      assert.equal(sent.length, 1);
      var names = eventsOf(sent[0]).map(function (e) { return e.event; });
      assert.equal(names.length, 100);
      assert.equal(names[0], 'e50');
      assert.equal(names[99], 'e149');
      assert.equal(sizes().experience, 0);
    });
  }));

  jsTest('Q12: destroy() fires one forced Experience flush, even offline; Insights events are the host\'s', withDelivery({ online: false, defaults: { consent: true, profile: PF } }, function () {
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'c1');
    __bridge.track({ event: 'e' }, 't1');
    assert.equal(__testHost.insights.queued.length, 1, 'the click was handed to the host');
    __bridge.destroy();
    assert.equal(requests('experience').length, 1);
    assert.deepEqual(eventsOf(requests('experience')[0]).map(function (e) { return e.event; }), ['e']);
    assert.equal(__testHost.fetches.length, 1, 'JavaScript sends no Insights request');
    assert.equal(__testHost.insights.purges, 0, 'destroy does not purge the host\'s Insights queue');
    return drain().then(function () {
      assert.equal(__testHost.fetches.length, 1, 'no follow-up after destroy');
      assert.equal(__testHost.pendingTimers().length, 0, 'no timers after destroy');
    });
  }));

  jsTest('Q18: initialize replaces the instance; the old queues report nothing afterwards', withDelivery({ online: false }, function (rec) {
    rec.api.script.experience.push({ status: 500 });
    __bridge.track({ event: 'old' }, 't1');
    __bridge.initialize({ clientId: 'org-1', environment: 'main', defaults: { consent: true } });
    assert.equal(requests('experience').length, 1, 'the old instance flushed on its way out');
    return drain().then(function () {
      assert.equal(rec.ofType('flushFailure').length, 0);
      assert.equal(sizes().experience, 0);
    });
  }));

  jsTest('events before any profile go to the host while it was told null; the first profile is told when it exists', withDelivery({}, function () {
    var insights = __testHost.insights;
    assert.deepEqual(insights.profiles, [null], 'initialize told the host: no profile yet');
    __bridge.trackClick({ componentId: 'early-1', variantIndex: 0 }, 'c1');
    __bridge.trackClick({ componentId: 'early-2', variantIndex: 0 }, 'c2');
    __bridge.flush('f0');
    return drain().then(function () {
      assert.deepEqual(insights.accepted.map(function (a) { return [a.event.componentId, a.profile]; }),
        [['early-1', null], ['early-2', null]], 'handed over while no profile exists (the host holds them)');
      assert.deepEqual(insights.profiles, [null], 'an unchanged profile is not told again');
      assert.equal(result('f0').value, null);
      __bridge.track({ event: 'creates-profile' }, 't1');
      return drain();
    }).then(function () {
      assert.equal(insights.profiles.length, 2, 'the first profile is told once it exists');
      assert.equal(insights.profiles[1].id, 'p-new');
      assert.deepEqual(insights.profiles[1], state().profile);
      __bridge.trackClick({ componentId: 'late', variantIndex: 0 }, 'c3');
      assert.equal(insights.accepted[2].profile.id, 'p-new');
      assert.equal(insights.profiles.length, 2);
      assert.equal(requests('insights').length, 0, 'JavaScript sends no Insights request');
    });
  }));

  jsTest('circuit breaker: opens after maxConsecutiveFailures, sends nothing while open, then recovers', withDelivery({
    queuePolicy: { flush: FAST },
  }, function (rec) {
    rec.api.script.experience.push({ status: 500 }, { error: 'connection closed before the response was complete' });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      __testHost.advance(10);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 2);
      var open = rec.ofType('circuitOpen', 'experience');
      assert.equal(open.length, 1);
      assert.deepEqual(open[0].context, { consecutiveFailures: 2, queuedBatches: 1, queuedEvents: 1, retryDelayMs: 1000 });
      __bridge.track({ event: 'b' }, 't2');
      __bridge.flush('f1');
      __testHost.advance(999);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 2, 'nothing while the circuit is open');
      assert.deepEqual(result('t2').value, { accepted: true });
      __testHost.advance(1);
      return drain();
    }).then(function () {
      var sent = requests('experience');
      assert.equal(sent.length, 3);
      assert.deepEqual(eventsOf(sent[2]).map(function (e) { return e.event; }), ['a', 'b']);
      assert.deepEqual(rec.ofType('flushRecovered', 'experience')[0].context, { consecutiveFailures: 2 });
    });
  }));

  jsTest('Experience: Retry-After on 429/503 is the minimum next delay (seconds and HTTP date)', withDelivery({
    queuePolicy: { flush: { baseBackoffMs: 10, maxBackoffMs: 10, jitterRatio: 0 } },
  }, function (rec) {
    rec.api.script.experience.push(
      { status: 429, headers: { 'Retry-After': '5' } },
      { status: 503, headers: { 'Retry-After': new Date(__testHost.now() + 5000 + 8000).toUTCString() } });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.equal(rec.ofType('flushFailure', 'experience')[0].context.retryDelayMs, 5000);
      __testHost.advance(4999);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 1);
      __testHost.advance(1);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 2);
      assert.equal(rec.ofType('flushFailure', 'experience')[1].context.retryDelayMs, 8000, 'an HTTP date counts from now');
      __testHost.advance(8000);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 3);
      assert.equal(sizes().experience, 0);
    });
  }));

  jsTest('other 4xx: the batch is dropped and reported; the caller gets the refusal; later events flow', withDelivery({ logLevel: 'warn' }, function (rec) {
    rec.api.script.experience.push({ status: 422 });
    __bridge.track({ event: 'bad' }, 't1');
    return drain().then(function () {
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.equal(outcome.value.accepted, true);
      assert.equal(outcome.value.refused.status, 422);
      assert.ok(/Experience API answered 422 Unprocessable Entity; the batch of 1 event\(s\) was dropped/.test(outcome.value.refused.reason), outcome.value.refused.reason);
      var dropped = rec.ofType('batchDropped', 'experience');
      assert.equal(dropped.length, 1);
      assert.equal(dropped[0].context.status, 422);
      assert.equal(dropped[0].context.droppedCount, 1);
      assert.equal(dropped[0].context.droppedEvents[0].event, 'bad');
      assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && /was dropped/.test(l.message); }), 'logged reason');
      assert.equal(sizes().experience, 0);
      __bridge.track({ event: 'good' }, 't2');
      return drain();
    }).then(function () {
      assert.equal(result('t2').value.accepted, true);
      assert.equal(requests('experience').length, 2);
    });
  }));

  jsTest('401/403/404 disable Experience delivery with a clear error instead of retrying', withDelivery({
    defaults: { consent: true, profile: PF },
    logLevel: 'error',
  }, function (rec) {
    rec.api.script.experience.push({ status: 401 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.equal(outcome.value.refused.status, 401);
      assert.ok(/^Experience API delivery disabled: Experience API answered 401 Unauthorized \(check clientId, environment and the Experience base URL\)/.test(outcome.value.refused.reason), outcome.value.refused.reason);
      var disabled = rec.ofType('deliveryDisabled');
      assert.deepEqual(disabled.map(function (e) { return [e.queue, e.context.status]; }), [['experience', 401]]);
      assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && /Experience API delivery disabled/.test(l.message); }));
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
      __bridge.track({ event: 'b' }, 't2');
      __bridge.flush('f1');
      __testHost.advance(10 * 60 * 1000);
      return drain();
    }).then(function () {
      assert.equal(result('t2').value.refused.status, 401, 'later sends are refused at once');
      assert.equal(result('f1').value, null);
      assert.equal(requests('experience').length, 1, 'no further Experience requests');
      assert.deepEqual(sizes(), { experience: 0 });
    });
  }));

  jsTest('setOnline(true) cancels the scheduled retry and force-flushes Experience', withDelivery({
    defaults: { consent: true, profile: PF },
    queuePolicy: { flush: { baseBackoffMs: 60000, maxBackoffMs: 60000, jitterRatio: 0 } },
  }, function (rec) {
    rec.api.script.experience.push({ status: 500 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.equal(rec.ofType('flushFailure', 'experience').length, 1);
      assert.equal(__testHost.pendingTimers().length, 1, 'the 60 s retry');
      __bridge.setOnline(false);
      var before = __testHost.fetches.length;
      __bridge.setOnline(true);
      var forced = __testHost.fetches.slice(before);
      assert.equal(forced.length, 1, 'a forced flush despite the 60 s backoff');
      assert.deepEqual(eventsOf(forced[0]).map(function (e) { return e.event; }), ['a']);
      assert.equal(__testHost.pendingTimers().length, 0, 'the scheduled retry is cancelled');
      return drain();
    }).then(function () {
      assert.deepEqual(sizes(), { experience: 0 });
      assert.equal(rec.ofType('flushRecovered', 'experience').length, 1);
    });
  }));

  jsTest('consent(false) purges the Experience queue (resetting its flush runtime) and the host\'s Insights queue', withDelivery({
    defaults: { consent: true, profile: PF },
    queuePolicy: { flush: FAST },
  }, function (rec) {
    rec.api.script.experience.push({ status: 500 }, { status: 500 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      __testHost.advance(10);
      return drain();
    }).then(function () {
      assert.equal(rec.ofType('circuitOpen', 'experience').length, 1);
      __bridge.trackClick({ componentId: 'a', variantIndex: 0 }, 'c1');
      assert.equal(__testHost.insights.queued.length, 1);
      __bridge.consent(false);
      assert.deepEqual(sizes(), { experience: 0 });
      assert.equal(__testHost.insights.purges, 1, '__nativeInsightsPurge in the same call');
      assert.equal(__testHost.insights.queued.length, 0);
      assert.equal(__testHost.pendingTimers().length, 0, 'retry and circuit window gone');
      __bridge.consent(true);
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 3, 'sent at once: the circuit was reset');
      assert.deepEqual(eventsOf(requests('experience')[2]).map(function (e) { return e.event; }), ['b']);
      assert.equal(result('t2').value.accepted, true);
    });
  }));

  jsTest('sticky views go to Experience first, then Insights; flush() before initialize fails', withDelivery({ defaults: { consent: true, profile: PF } }, function () {
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 1, viewDurationMs: 1, sticky: true }, 'v1');
    assert.equal(requests('experience').length, 1);
    assert.equal(__testHost.insights.accepted.length, 0, 'Insights waits for the Experience result');
    return drain().then(function () {
      var accepted = __testHost.insights.accepted;
      assert.equal(accepted.length, 1);
      assert.equal(accepted[0].event.type, 'component');
      assert.equal(accepted[0].event.viewId, 'v');
      assert.notEqual(accepted[0].event.messageId, eventsOf(requests('experience')[0])[0].messageId, 'its own messageId');
      assert.equal(result('v1').value.accepted, true);
      __bridge.destroy();
      __bridge.flush('f1');
      assert.deepEqual(settled('f1'), [{ requestId: 'f1', ok: false, json: 'SDK not initialized. Call initialize() first.' }]);
    });
  }));

  jsTest('through the bridge: interceptors shape the state, the caller receives the raw data; Q19 canOptimize', withDelivery({}, function (rec) {
    var registry = ns.stateInterceptors;
    var remove = registry && typeof registry.add === 'function'
      ? registry.add(function () { return { selectedOptimizations: [] }; }) : function () {};
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      remove();
      assert.equal(result('t1').value.data.selectedOptimizations.length, 1, 'raw data');
      if (registry) assert.deepEqual(state().selectedOptimizations, [], 'intercepted state');
      var flags = rec.states.map(function (s) { return s.canOptimize; });
      assert.deepEqual(flags.filter(function (v, i) { return i === 0 || v !== flags[i - 1]; }), [false, true]);
      if (typeof __bridge.reset === 'function') {
        __bridge.reset();
        assert.equal(rec.states[rec.states.length - 1].canOptimize, false);
      }
    });
  }));

  jsTest('A8 re-expressed (retries belong to the queue): 503 then 200 ⇒ 2 requests; 400 ⇒ 1 request, dropped; a failed fetch ⇒ retried', withDelivery({
    queuePolicy: { flush: { baseBackoffMs: 10, maxBackoffMs: 10, jitterRatio: 0 } },
  }, function (rec) {
    rec.api.script.experience.push({ status: 503 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      __testHost.advance(10);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 2);
      assert.equal(rec.ofType('flushFailure').length, 1);
      assert.deepEqual(state().experienceRequestState, { status: 'success' }, 'the second answer is applied');
      rec.api.script.experience.push({ status: 400 });
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      __testHost.advance(60000);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 3, 'a 400 is never retried');
      assert.equal(result('t2').value.refused.status, 400);
      assert.equal(rec.ofType('flushFailure').length, 1, 'and is no failure of the queue');
      rec.api.script.experience.push({ error: 'connection closed before the response was complete' });
      __bridge.track({ event: 'c' }, 't3');
      return drain();
    }).then(function () {
      __testHost.advance(10);
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 5);
      assert.deepEqual(eventsOf(requests('experience')[4]).map(function (e) { return e.event; }), ['c']);
      assert.equal(sizes().experience, 0);
    });
  }));

  jsTest('A6 through the bridge: ?locale= is the state locale; setLocale changes it', withDelivery({ locale: ' de_DE ' }, function () {
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.ok(/\?locale=de-DE$/.test(requests('experience')[0].url), requests('experience')[0].url);
      if (typeof __bridge.setLocale === 'function') __bridge.setLocale('fr_FR');
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      if (typeof __bridge.setLocale === 'function') assert.ok(/\?locale=fr-FR$/.test(requests('experience')[1].url), requests('experience')[1].url);
    });
  }));

  jsTest('api config is validated and names the key', function () {
    assert.throws(function () { __bridge.initialize({ clientId: 'c', environment: 'main', api: { experienceBaseUrl: 1 } }); },
      /^initialize config "api\.experienceBaseUrl" must be a string when provided\.$/);
    assert.throws(function () { __bridge.initialize({ clientId: 'c', environment: 'main', api: { enabledFeatures: 'location' } }); },
      /"api\.enabledFeatures" must be an array of strings/);
    assert.throws(function () { __bridge.initialize({ clientId: 'c', environment: 'main', api: [] }); }, /"api" must be an object/);
  });
})();
