// tests/delivery-queues.spec.js — delivery through the bridge on the fake host. The Swift host
// queues and sends both paths (fake-host.js: __testHost.experience, whose flights call
// __bridge.experienceRequest / experienceAnswered as the Swift `ExperienceQueue` does, and
// __testHost.insights, so no Insights request leaves JavaScript); what is tested here is
// JavaScript's side: the upsert it builds (URL, ?locale=, profile id rules, body), what each
// answer means for the caller and the visitor's state (experienceRequestState, applied data,
// refusals, disabled delivery), consent purges, and what the bridge hands to the host's Insights
// queue. Backoff, the circuit, Retry-After, the cap, the outbox and reconnect flushes are the
// host's (tested in Swift).
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

  function dispositions() {
    return __testHost.experience.answers.map(function (answer) { return answer.disposition; });
  }

  // Starts the bridge with consent and the fake API; the host's Experience queue (and the state's
  // `online`) online unless config.online === false.
  function withDelivery(config, body) {
    return function () {
      var rec = { states: [], emitted: [] };
      var settings = Object.assign({ clientId: 'org-1', environment: 'main', defaults: { consent: true } }, config || {});
      var online = settings.online !== false;
      delete settings.online;
      var api = settings.api && settings.api.handler ? settings.api.handler : fakeApi();
      if (settings.api) delete settings.api.handler;
      globalThis.__nativeOnStateChange = function (json) { rec.states.push(JSON.parse(json)); };
      globalThis.__nativeOnEventEmitted = function (json) { rec.emitted.push(JSON.parse(json)); };
      __testHost.fetchHandler = api;
      rec.api = api;
      function cleanup() {
        delete globalThis.__nativeOnEventEmitted;
      }
      try {
        __testHost.experience.online = online;
        __bridge.setOnline(online);
        __bridge.initialize(settings);
        return Promise.resolve(body(rec)).then(function (value) { cleanup(); return value; }, function (error) { cleanup(); throw error; });
      } catch (error) {
        cleanup();
        throw error;
      }
    };
  }

  function state() {
    return JSON.parse(__bridge.getState());
  }

  // The request states pushed since `from`, consecutive repeats collapsed.
  function requestStatuses(rec, from) {
    var statuses = rec.states.slice(from || 0).map(function (s) { return s.experienceRequestState.status; });
    return statuses.filter(function (s, i) { return i === 0 || s !== statuses[i - 1]; });
  }

  jsTest('online track: one upsert; the request state goes idle → pending → success; raw data to the caller; selections applied', withDelivery({}, function (rec) {
    var during;
    rec.api.script.experience.push(function () {
      during = state().experienceRequestState;
      return { status: 200, body: envelope('p-new') };
    });
    __bridge.track({ event: 'bought' }, 't1');
    assert.deepEqual(state().experienceRequestState, { status: 'idle' }, 'the call only hands the event to the host');
    assert.equal(__testHost.experience.accepted.length, 1);
    assert.equal(settled('t1').length, 0, 'the sender waits for its flight');
    return drain().then(function () {
      assert.deepEqual(during, { status: 'pending' }, 'pending while in flight');
      assert.deepEqual(requestStatuses(rec), ['idle', 'pending', 'success']);
      var sent = requests('experience');
      assert.equal(sent.length, 1);
      assert.equal(sent[0].url, 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles');
      assert.equal(sent[0].method, 'POST');
      assert.deepEqual(sent[0].headers, { 'Content-Type': 'text/plain' });
      var body = JSON.parse(sent[0].body);
      assert.deepEqual(Object.keys(body).sort(), ['events', 'options']);
      assert.deepEqual(body.options, { features: ['ip-enrichment', 'location'] });
      assert.deepEqual(body.events, [rec.emitted[0]], 'the events as published');
      assert.equal(eventsOf(sent[0])[0].event, 'bought');
      assert.deepEqual(dispositions(), ['delivered']);
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.equal(outcome.value.accepted, true);
      assert.equal(outcome.value.data.profile.id, 'p-new');
      assert.equal(state().profile.id, 'p-new');
      assert.equal(state().canOptimize, true);
      assert.equal(state().selectedOptimizations[0].sticky, false, 'parsed selections always carry sticky');
      assert.equal(__testHost.experience.queued.length, 0);
    });
  }));

  jsTest('anonymous id: used with persistence consent, forgotten without it; profile.id otherwise; reset ⇒ create', withDelivery({
    defaults: { consent: true, persistenceConsent: true, anonymousId: 'anon-1' },
    api: { handler: (function () { var api = fakeApi(); api.script.experience.push({ status: 200, body: envelope('server-1') }); return api; })() },
  }, function () {
    var accepted = __testHost.experience.accepted;
    __bridge.track({ event: 'a' }, 't1');
    assert.equal(accepted[0].profileId, 'anon-1', 'handed to the host with the upsert\'s profile id');
    return drain().then(function () {
      assert.ok(/\/profiles\/anon-1$/.test(requests('experience')[0].url), 'anonymous id while persistence consent is true');
      assert.equal(state().profile.id, 'server-1');
      __bridge.track({ event: 'b' }, 't2');
      assert.equal(accepted[1].profileId, 'server-1');
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
      assert.equal(accepted[3].profileId, null, 'no profile id after reset');
      return drain();
    }).then(function () {
      assert.ok(/\/profiles$/.test(requests('experience')[3].url), 'after reset a new profile is created');
    });
  }));

  jsTest('without persistence consent a configured anonymous id is not used', withDelivery({
    defaults: { consent: true, persistenceConsent: false, anonymousId: 'anon-1' },
  }, function () {
    __bridge.track({ event: 'a' }, 't1');
    assert.equal(__testHost.experience.accepted[0].profileId, null);
    return drain().then(function () {
      assert.ok(/\/profiles$/.test(requests('experience')[0].url));
    });
  }));

  jsTest('a retrying flight (500) answers {accepted:true} and fails api-error; the host\'s retry goes pending → success', withDelivery({}, function (rec) {
    rec.api.script.experience.push({ status: 500 });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.deepEqual(dispositions(), ['retrying']);
      assert.deepEqual(result('t1').value, { accepted: true }, 'still queued by the host: accepted, no data');
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
      assert.equal(__testHost.experience.queued.length, 1, 'the host keeps it');
      var before = rec.states.length;
      __testHost.runExperienceFlight();
      assert.deepEqual(requestStatuses(rec, before), ['pending', 'success']);
      assert.equal(requests('experience').length, 2);
      assert.equal(state().profile.id, 'p-new', 'the retry\'s answer is applied');
    });
  }));

  jsTest('a timed-out request fails with reason "timeout"; another transport failure with "api-error"', withDelivery({}, function (rec) {
    rec.api.script.experience.push({ error: 'request timed out after 25 ms', timedOut: true }, { error: 'connection reset by peer' });
    __bridge.identify({ userId: 'u' }, 'i1');
    return drain().then(function () {
      assert.equal(__testHost.experience.answers[0].failure, 'request timed out after 25 ms');
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'timeout' });
      assert.equal(state().canOptimize, false);
      assert.deepEqual(result('i1').value, { accepted: true });
      __testHost.runExperienceFlight();
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
    });
  }));

  jsTest('setOnline records the network in the state only: JavaScript sends nothing itself', withDelivery({ online: false }, function () {
    __bridge.track({ event: 'a' }, 't1');
    assert.deepEqual(result('t1').value, { accepted: true }, 'queued by the host (offline): accepted at once');
    __bridge.setOnline(true);
    assert.equal(ns.bridgeShared.current.state.get().online, true);
    return drain().then(function () {
      assert.equal(__testHost.fetches.length, 0, 'the host flushes on reconnect, not JavaScript');
      assert.equal(__testHost.experience.queued.length, 1);
      __bridge.setOnline(false);
      assert.equal(ns.bridgeShared.current.state.get().online, false);
    });
  }));

  jsTest('events before any profile go to the host while it was told null; the first profile is told when it exists', withDelivery({}, function () {
    var insights = __testHost.insights;
    assert.deepEqual(insights.profiles, [null], 'initialize told the host: no profile yet');
    __bridge.trackClick({ componentId: 'early-1', variantIndex: 0 }, 'c1');
    __bridge.trackClick({ componentId: 'early-2', variantIndex: 0 }, 'c2');
    return drain().then(function () {
      assert.deepEqual(insights.accepted.map(function (a) { return [a.event.componentId, a.profile]; }),
        [['early-1', null], ['early-2', null]], 'handed over while no profile exists (the host holds them)');
      assert.deepEqual(insights.profiles, [null], 'an unchanged profile is not told again');
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

  jsTest('other 4xx: the caller gets the refusal {status, reason, code}; failed api-error; later events flow', withDelivery({}, function (rec) {
    rec.api.script.experience.push({ status: 422, body: { data: null, message: 'invalid', error: { code: 'ERR_INVALID_EVENT' } } });
    __bridge.track({ event: 'bad' }, 't1');
    return drain().then(function () {
      assert.deepEqual(dispositions(), ['dropped']);
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.deepEqual(outcome.value, {
        accepted: true,
        refused: { status: 422, reason: __testHost.experience.answers[0].reason, code: 'ERR_INVALID_EVENT' },
      }, 'the host\'s reason and the API\'s code');
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
      rec.api.script.experience.push({ status: 400, body: 'not an envelope' });
      __bridge.track({ event: 'bad-2' }, 't2');
      return drain();
    }).then(function () {
      assert.deepEqual(result('t2').value.refused, { status: 400, reason: __testHost.experience.answers[1].reason }, 'no code without one');
      __bridge.track({ event: 'good' }, 't3');
      return drain();
    }).then(function () {
      assert.equal(result('t3').value.accepted, true);
      assert.equal(result('t3').value.data.profile.id, 'p-new');
      assert.deepEqual(state().experienceRequestState, { status: 'success' });
      assert.equal(requests('experience').length, 3);
    });
  }));

  jsTest('401/403/404 disable Experience delivery: the refusal is remembered and refuses later sends at once', withDelivery({
    defaults: { consent: true, profile: PF },
  }, function (rec) {
    rec.api.script.experience.push({ status: 401, body: { data: null, message: 'no', error: { code: 'ERR_UNAUTHORIZED' } } });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.deepEqual(dispositions(), ['disabled']);
      var outcome = result('t1');
      assert.equal(outcome.ok, true);
      assert.deepEqual(outcome.value, {
        accepted: true, refused: { status: 401, reason: __testHost.experience.answers[0].reason, code: 'ERR_UNAUTHORIZED' },
      });
      assert.deepEqual(state().experienceRequestState, { status: 'failed', reason: 'api-error' });
      __bridge.track({ event: 'b' }, 't2');
      assert.equal(__testHost.experience.accepted.length, 2, 'handed over; the host answers -1');
      return drain();
    }).then(function () {
      assert.deepEqual(result('t2').value, result('t1').value, 'later sends are refused with the remembered refusal');
      assert.equal(requests('experience').length, 1, 'no further Experience requests');
    });
  }));

  jsTest('consent(false) purges the host\'s Experience and Insights queues in the same call; a waiting sender is released', withDelivery({
    defaults: { consent: true, profile: PF },
  }, function () {
    __bridge.track({ event: 'a' }, 't1');
    assert.equal(__testHost.experience.queued[0].awaited, true, 'the sender waits for its flight');
    __bridge.trackClick({ componentId: 'a', variantIndex: 0 }, 'c1');
    assert.equal(__testHost.insights.queued.length, 1);
    __bridge.consent(false);
    assert.equal(__testHost.experience.purges, 1, '__nativeExperiencePurge in the same call');
    assert.equal(__testHost.experience.queued.length, 0);
    assert.equal(__testHost.insights.purges, 1, '__nativeInsightsPurge in the same call');
    assert.equal(__testHost.insights.queued.length, 0);
    return drain().then(function () {
      assert.deepEqual(result('t1').value, { accepted: true }, 'the purge released its sender');
      assert.equal(requests('experience').length, 0, 'the purged event never leaves');
      __bridge.consent(true);
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      assert.equal(requests('experience').length, 1);
      assert.deepEqual(eventsOf(requests('experience')[0]).map(function (e) { return e.event; }), ['b']);
      assert.equal(result('t2').value.accepted, true);
    });
  }));

  jsTest('an answer that arrives after a purge ("stale") still applies a 2xx to the state', withDelivery({}, function (rec) {
    rec.api.script.experience.push(function () {
      __bridge.consent(false);
      return { status: 200, body: envelope('p-late') };
    });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.deepEqual(dispositions(), ['stale']);
      assert.deepEqual(__testHost.experience.answers[0].tickets, [], 'its sender was released by the purge');
      assert.deepEqual(result('t1').value, { accepted: true });
      assert.equal(state().profile.id, 'p-late', 'the answer updates the visitor\'s state');
      assert.deepEqual(state().experienceRequestState, { status: 'success' });
    });
  }));

  jsTest('sticky views go to Experience first, then Insights with the new profile', withDelivery({}, function () {
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 1, viewDurationMs: 1, sticky: true }, 'v1');
    assert.equal(__testHost.experience.accepted.length, 1, 'handed to the host\'s Experience queue');
    assert.equal(__testHost.insights.accepted.length, 0, 'Insights waits for the Experience result');
    return drain().then(function () {
      var accepted = __testHost.insights.accepted;
      assert.equal(accepted.length, 1);
      assert.equal(accepted[0].event.type, 'component');
      assert.equal(accepted[0].event.viewId, 'v');
      assert.equal(accepted[0].profile.id, 'p-new', 'after the Experience answer created the profile');
      assert.notEqual(accepted[0].event.messageId, eventsOf(requests('experience')[0])[0].messageId, 'its own messageId');
      assert.equal(result('v1').value.accepted, true);
      assert.equal(result('v1').value.data.profile.id, 'p-new');
    });
  }));

  jsTest('through the bridge: interceptors shape the state, the caller receives the raw data; canOptimize turns true with the answer and false on reset', withDelivery({}, function (rec) {
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

  jsTest('through the bridge, ?locale= is the state locale; setLocale changes it; enabledFeatures shape the body', withDelivery({
    locale: ' de_DE ', api: { enabledFeatures: ['location'] },
  }, function () {
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.ok(/\/profiles\?locale=de-DE$/.test(requests('experience')[0].url), requests('experience')[0].url);
      assert.deepEqual(JSON.parse(requests('experience')[0].body).options, { features: ['location'] });
      __bridge.setLocale('fr_FR');
      __bridge.track({ event: 'b' }, 't2');
      return drain();
    }).then(function () {
      assert.ok(/\/profiles\/p-new\?locale=fr-FR$/.test(requests('experience')[1].url), requests('experience')[1].url);
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
