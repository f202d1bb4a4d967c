// tests/service.spec.js — the request-scoped, stateless service core (service/request-events.js,
// service/service-bridge.js).
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  function envelope(id, variantIndex) {
    return {
      data: {
        profile: { id: id, stableId: id, random: 0.5, audiences: [], traits: {}, location: {} },
        experiences: [{ experienceId: 'exp-1', variantIndex: variantIndex, variants: { base: 'var' } }],
        changes: [{ key: 'flag', type: 'Variable', value: { value: { on: variantIndex } }, meta: { experienceId: 'exp-1', variantIndex: variantIndex } }],
      },
      message: '',
      error: null,
    };
  }

  // Answers every Experience request with a profile named after the path (or "p-new").
  function answerWithProfiles() {
    __testHost.fetchHandler = function (request) {
      var match = /\/profiles\/([^/?]+)/.exec(request.url);
      return { status: 200, body: envelope(match ? decodeURIComponent(match[1]) : 'p-new', 1) };
    };
  }

  function settings(extra) {
    return Object.assign({
      clientId: 'org-1', environment: 'main', allowedEventTypes: ['identify', 'page'], channel: 'server',
      library: { name: 'lib', version: '1.0.0' }, api: { experienceBaseUrl: 'https://exp.test/' }, requestTimeoutMs: 500,
      statusKinds: __testHost.statusKinds,
    }, extra || {});
  }

  function events(extra) {
    return ns.createRequestEvents(settings(extra));
  }

  // A call as the Swift host makes it: run, then (for a pending Experience call) the host sends
  // the request (__testHost.deliverExperience) and the pipeline interprets the answer.
  function send(pipeline, method, payload, request) {
    return Promise.resolve(__testHost.deliverExperience(pipeline.run(method, payload, request), pipeline.interpret));
  }

  jsTest('service: configure tells the host which calls go to the Experience API, by method and by payload', function () {
    var answer = JSON.parse(__service.configure({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds }));
    assert.deepEqual(answer.experienceMethods.slice().sort(), ['identify', 'page', 'screen', 'track']);
    assert.deepEqual(answer.experiencePayloadRoutes, [{ method: 'trackView', field: 'sticky', equals: true }]);
    // The pipeline follows the same list: the route's payload sends a view to the Experience API.
    var pipeline = events();
    var request = { profile: { id: 'p1' }, consent: true };
    var view = { componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1000 };
    assert.ok(pipeline.run('trackView', Object.assign({ sticky: true }, view), request).experienceRequest, 'sticky: Experience');
    var plain = pipeline.run('trackView', Object.assign({ sticky: false }, view), request);
    assert.equal(plain.experienceRequest, undefined, 'not sticky: no Experience request');
    assert.equal(plain.insights.length, 1, 'not sticky: Insights');
  });

  jsTest('service: default allow-list is identify + page, channel server; config errors name the key', function () {
    __service.configure({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds });
    assert.throws(function () { __service.configure({ clientId: '', environment: 'main' }); }, /"clientId" must be a non-empty string/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', allowedEventTypes: 'page' }); }, /"allowedEventTypes" must be an array of strings/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', api: { experienceBaseUrl: 3 } }); }, /"api.experienceBaseUrl" must be a string/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', requestTimeoutMs: 0 }); }, /"requestTimeoutMs" must be a positive integer/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main' }); }, /service config "statusKinds" must be \{fallback, statuses\}/, 'the host hands over its status kinds');
    answerWithProfiles();
    __service.call('page', {}, {}, 'r1');
    __service.call('track', { event: 'x' }, {}, 'r2');
    return Promise.resolve().then(function () {}).then(function () {}).then(function () {}).then(function () {
      var byId = {};
      __testHost.settled.forEach(function (s) { byId[s.requestId] = s; });
      assert.equal(byId.r2.ok, true);
      assert.deepEqual(JSON.parse(byId.r2.json), { accepted: false, blocked: { reason: 'consent', method: 'track', args: [{ event: 'x' }] } });
    }).then(function () {
      return new Promise(function (resolve) { setTimeoutLike(resolve); });
    }).then(function () {
      var page = __testHost.settled.filter(function (s) { return s.requestId === 'r1'; })[0];
      assert.ok(page && page.ok, 'page is allow-listed before consent');
      var result = JSON.parse(page.json);
      assert.equal(result.accepted, true);
      assert.equal(result.events[0].channel, 'server');
      assert.equal(result.events[0].context.gdpr.isConsentGiven, false);
    });
  });

  // Lets the fake fetch reply and the promise chain run (microtasks only).
  function setTimeoutLike(resolve) {
    var rounds = 0;
    (function spin() {
      rounds += 1;
      if (rounds > 50) return resolve();
      Promise.resolve().then(spin);
    })();
  }

  jsTest('service: blocked calls send nothing and report method and payload once', function () {
    answerWithProfiles();
    var pipeline = events();
    var blocked = pipeline.run('track', { event: 'Bought', properties: { plan: 'pro' } }, { consent: false, profile: { id: 'p-1' } });
    assert.deepEqual(blocked, { accepted: false, blocked: { reason: 'consent', method: 'track', args: [{ event: 'Bought', properties: { plan: 'pro' } }] } });
    var view = pipeline.run('trackView', { componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1 }, { profile: { id: 'p-1' } });
    assert.equal(view.accepted, false, 'unset consent gates like false');
    var strict = events({ allowedEventTypes: [] }).run('page', {}, {});
    assert.equal(strict.accepted, false, '[] is strict opt-in');
    assert.equal(__testHost.fetches.length, 0);
  });

  jsTest('service: an Experience call upserts the request profile with locale, ip and eventContext', function () {
    answerWithProfiles();
    var request = {
      consent: true, profile: { id: 'p 7' }, locale: 'de-DE', ip: '203.0.113.9',
      eventContext: { userAgent: 'UA/1', page: { url: 'https://site.test/?utm_campaign=spring', path: '/' }, campaign: { name: 'ctx' } },
    };
    return send(events(), 'page', { campaign: { name: 'own' } }, request).then(function (result) {
      var fetch = __testHost.fetches[0];
      assert.equal(fetch.url, 'https://exp.test/v2/organizations/org-1/environments/main/profiles/p%207?locale=de-DE');
      assert.equal(fetch.headers['X-Force-IP'], '203.0.113.9');
      var sent = JSON.parse(fetch.body).events[0];
      assert.equal(sent.type, 'page');
      assert.equal(sent.context.userAgent, 'UA/1');
      assert.equal(sent.context.locale, 'de-DE');
      assert.deepEqual(sent.context.campaign, { name: 'own' }, 'the call\'s own payload wins over eventContext');
      assert.equal(sent.context.gdpr.isConsentGiven, true);
      assert.equal(result.accepted, true);
      assert.equal(result.experience.ok, true);
      assert.equal(result.experience.data.profile.id, 'p 7');
      assert.equal(result.events[0].messageId, sent.messageId);
    });
  });

  jsTest('service: a new visitor creates a profile; preflight asks the API not to store', function () {
    answerWithProfiles();
    return send(events(), 'identify', { userId: 'u-1', traits: { tier: 'gold' } }, { consent: true, preflight: true }).then(function (result) {
      assert.equal(__testHost.fetches[0].url, 'https://exp.test/v2/organizations/org-1/environments/main/profiles?type=preflight');
      assert.equal(result.experience.data.profile.id, 'p-new');
    });
  });

  jsTest('service: an Experience call returns the request for the host to send; the engine sends nothing and arms no timer', function () {
    answerWithProfiles();
    var pipeline = events();
    var pending = pipeline.run('track', { event: 'x' }, { consent: true, profile: { id: 'p-1' }, locale: 'de_DE', timeoutMs: 250 });
    assert.equal(pending.accepted, true);
    assert.equal(pending.experience, undefined, 'no outcome before the host answers');
    assert.deepEqual(Object.keys(pending.experienceRequest).sort(), ['body', 'headers', 'method', 'url']);
    assert.equal(pending.experienceRequest.method, 'POST');
    assert.equal(pending.experienceRequest.url, 'https://exp.test/v2/organizations/org-1/environments/main/profiles/p-1?locale=de-DE');
    assert.deepEqual(pending.experienceRequest.headers, { 'Content-Type': 'text/plain' });
    var body = JSON.parse(pending.experienceRequest.body);
    assert.deepEqual(body.events, pending.events);
    assert.deepEqual(body.options, { features: ['ip-enrichment', 'location'] });
    assert.equal(pending.context.then, 'call');
    assert.equal(__testHost.fetches.length, 0, 'the engine sends nothing');
    assert.equal(__testHost.pendingTimers().length, 0, 'the budget is the host\'s');
    var context = JSON.parse(JSON.stringify(pending.context));
    var done = pipeline.interpret(context, 200, {}, JSON.stringify(envelope('p-1', 0)), null);
    assert.equal(done.accepted, true);
    assert.deepEqual(done.events, pending.events);
    assert.equal(done.experience.ok, true);
    assert.equal(done.experience.data.profile.id, 'p-1');
  });

  jsTest('service: interpret turns a budget overrun, a transport failure and an overload into typed outcomes', function () {
    var pipeline = events();
    var pending = pipeline.run('page', {}, { consent: true, timeoutMs: 250 });
    var timedOut = pipeline.interpret(pending.context, 0, null, '', 'timeout');
    assert.equal(timedOut.experience.ok, false);
    assert.equal(timedOut.experience.kind, 'timeout');
    assert.ok(/250 ms/.test(timedOut.experience.reason), timedOut.experience.reason);
    var failed = pipeline.interpret(pending.context, 0, null, 'connection refused', 'transport');
    assert.equal(failed.experience.kind, 'retry');
    assert.equal(failed.experience.status, 0);
    assert.ok(/Experience API request failed: connection refused/.test(failed.experience.reason), failed.experience.reason);
    var overload = JSON.stringify({ data: null, message: 'busy', error: { code: 'ERR_PROFILE_OVERLOAD' } });
    var refused = pipeline.interpret(pending.context, 429, { 'retry-after': '2' }, overload, null);
    assert.deepEqual(refused.experience, {
      ok: false, kind: 'retry', status: 429, reason: 'Experience API answered 429 Too Many Requests', code: 'ERR_PROFILE_OVERLOAD',
    });
    var invalid = pipeline.interpret(pending.context, 200, {}, '{"data": {}}', null);
    assert.equal(invalid.experience.kind, 'invalid');
    assert.ok(pipeline.interpret({ then: 'nothing' }, 200, {}, '', null) instanceof Error);
  });

  jsTest('service: __service.interpretExperience answers JSON text on any configured engine and throws for a foreign context', function () {
    __service.configure(settings());
    var answer = JSON.parse(__service.call('page', {}, { consent: true, profile: { id: 'p-2' } }, 'r1'));
    assert.equal(answer[0], true);
    var pending = answer[1];
    assert.ok(pending.experienceRequest && pending.context);
    var text = __service.interpretExperience(pending.context, 200, { 'Content-Type': 'application/json' }, JSON.stringify(envelope('p-2', 1)), null);
    var done = JSON.parse(text);
    assert.equal(done.experience.data.profile.id, 'p-2');
    assert.deepEqual(done.events, pending.events);
    assert.throws(function () { __service.interpretExperience({}, 200, {}, '', null); }, /needs the context its call returned/);
  });

  jsTest('service: failFast (open circuit) answers at once without a request', function () {
    answerWithProfiles();
    return send(events(), 'page', {}, { consent: true, failFast: true }).then(function (result) {
      assert.equal(result.accepted, true);
      assert.equal(result.experience.kind, 'circuitOpen');
      assert.equal(__testHost.fetches.length, 0);
    });
  });

  jsTest('service: API failures come back as typed outcomes, never as rejections', function () {
    __testHost.fetchHandler = function () { return { status: 503, headers: { 'Retry-After': '3' }, body: '' }; };
    return send(events(), 'track', { event: 'x' }, { consent: true, profile: { id: 'p-1' } }).then(function (result) {
      assert.equal(result.experience.ok, false);
      assert.equal(result.experience.kind, 'retry');
      assert.equal(result.experience.status, 503);
    });
  });

  jsTest('service: Insights methods need a profile id and name the method', function () {
    var pipeline = events();
    var methods = [
      ['trackView', { componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 2000 }],
      ['trackClick', { componentId: 'c', variantIndex: 1 }],
      ['trackHover', { componentId: 'c', hoverId: 'h', hoverDurationMs: 500 }],
      ['trackFlagView', { componentId: 'flag' }],
    ];
    methods.forEach(function (pair) {
      var error = pipeline.run(pair[0], pair[1], { consent: true });
      assert.ok(error instanceof Error, pair[0]);
      assert.ok(error.message.indexOf(pair[0] + ' requires a request-bound profile id') === 0, error.message);
      assert.equal(error.code, ns.ERROR_CODES.profileIdRequired, 'the host tells it by its code, not its text');
      assert.ok(pipeline.run(pair[0], pair[1], { consent: true, profile: { id: '' } }) instanceof Error, 'an empty id is no id');
      var ok = pipeline.run(pair[0], pair[1], { consent: true, profile: { id: 'p-9' } });
      assert.equal(ok.accepted, true);
      assert.deepEqual(ok.insights, [{ event: 0 }], 'the event by its index, the request\'s profile unnamed');
      assert.equal(JSON.stringify(ok).split('"messageId"').length - 1, 1, 'the event is written once');
    });
    assert.equal(pipeline.run('trackClick', { componentId: 'c', variantIndex: 1 }, { consent: true, profile: { id: 'p' } }).events[0].type, 'component_click');
    assert.equal(pipeline.run('trackHover', { componentId: 'c', hoverId: 'h', hoverDurationMs: 5 }, { consent: true, profile: { id: 'p' } }).events[0].type, 'component_hover');
    assert.equal(pipeline.run('trackFlagView', { componentId: 'f' }, { consent: true, profile: { id: 'p' } }).events[0].componentType, 'Variable');
    assert.ok(/must include a string "componentId"/.test(pipeline.run('trackClick', {}, { consent: true, profile: { id: 'p' } }).message));
    assert.equal(__testHost.fetches.length, 0, 'nothing is sent directly');
  });

  jsTest('service: runEach answers each call of a batch as run answers it alone, writing each event once', function () {
    var pipeline = events({ allowedEventTypes: ['identify', 'page', 'component'] });
    var request = { consent: undefined, profile: { id: 'p-7' }, eventContext: { page: { path: '/a' } }, now: 1700000000000 };
    var view = function (id) { return { componentId: 'c-' + id, viewId: 'v-' + id, variantIndex: 0, viewDurationMs: 0 }; };
    var payloads = [view(1), { componentId: 'c-bad' }, view(2), Object.assign({ sticky: true }, view(3)), view(4)];
    var batch = pipeline.runEach('trackView', payloads, request);
    assert.equal(batch.answers.length, payloads.length, 'an answer per payload, in order');
    assert.deepEqual(batch.answers[0], { accepted: true, insights: [{ event: 0 }] });
    assert.ok(/viewDurationMs|variantIndex|viewId/.test(batch.answers[1].failed.message), 'the validation error of run: ' + batch.answers[1].failed.message);
    assert.equal(pipeline.run('trackView', payloads[1], request).message, batch.answers[1].failed.message, 'the same message as run');
    assert.deepEqual(batch.answers[2], { accepted: true, insights: [{ event: 1 }] }, 'indexes count accepted events only');
    assert.ok(/Experience API: call it alone/.test(batch.answers[3].failed.message), 'a sticky view is the host\'s to call alone');
    assert.deepEqual(batch.answers[4], { accepted: true, insights: [{ event: 2 }] });
    assert.deepEqual(batch.events.map(function (e) { return e.componentId; }), ['c-1', 'c-2', 'c-4']);
    // Each event is the one run builds alone (its own messageId; the same shape and context).
    var alone = pipeline.run('trackView', view(1), request).events[0];
    var first = batch.events[0];
    assert.notEqual(first.messageId, batch.events[1].messageId, 'each event its own messageId');
    assert.deepEqual(Object.keys(first).sort(), Object.keys(alone).sort());
    assert.deepEqual(first.context, alone.context, 'the request\'s context (page, consent, library)');
    assert.equal(first.timestamp, alone.timestamp, 'the request\'s clock');
    assert.equal(JSON.stringify(batch).split('"messageId"').length - 1, 3, 'each event is written once');
  });

  jsTest('service: runEach gates, needs a profile id per call and refuses what is not one Insights method', function () {
    var pipeline = events();
    var view = { componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 0 };
    var blocked = pipeline.runEach('trackView', [view, view], { profile: { id: 'p' } });
    assert.deepEqual(blocked.answers, [0, 1].map(function () {
      return { accepted: false, blocked: { reason: 'consent', method: 'trackView', args: [view] } };
    }), 'no consent: each call blocked, as run blocks it');
    assert.deepEqual(blocked.events, [], 'nothing built');
    var anonymous = pipeline.runEach('trackClick', [{ componentId: 'c', variantIndex: 1 }], { consent: true });
    assert.equal(anonymous.answers[0].failed.code, ns.ERROR_CODES.profileIdRequired, 'the code the host reads');
    assert.ok(anonymous.answers[0].failed.message.indexOf('trackClick requires a request-bound profile id') === 0);
    assert.ok(pipeline.runEach('page', [{}], { consent: true }) instanceof Error, 'an Experience method');
    assert.ok(pipeline.runEach('nope', [], {}) instanceof Error, 'an unknown method');
    assert.ok(pipeline.runEach('trackView', view, {}) instanceof Error, 'payloads not an array');
    assert.deepEqual(pipeline.runEach('trackView', [], { consent: true, profile: { id: 'p' } }), { answers: [], events: [] });
    // The bridge function settles the answer at once, as call does.
    __service.configure({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds });
    var settled = JSON.parse(__service.callEach('trackView', [view], { consent: true, profile: { id: 'p' } }, 'r-each'));
    assert.equal(settled[0], true);
    assert.deepEqual(settled[1].answers, [{ accepted: true, insights: [{ event: 0 }] }]);
    var refused = JSON.parse(__service.callEach('track', [], {}, 'r-each-2'));
    assert.equal(refused[0], false);
    assert.equal(__testHost.fetches.length, 0, 'nothing is sent directly');
  });

  jsTest('service: a sticky view goes to the Experience API first, then to Insights with the returned profile', function () {
    answerWithProfiles();
    return send(events(), 'trackView', { componentId: 'c', viewId: 'v-1', variantIndex: 1, viewDurationMs: 2000, sticky: true }, { consent: true }).then(function (result) {
      assert.equal(__testHost.fetches.length, 1);
      var sent = JSON.parse(__testHost.fetches[0].body).events[0];
      assert.equal(sent.type, 'component');
      assert.equal(result.insights.length, 1);
      assert.equal(result.insights[0].profile.id, 'p-new');
      assert.equal(result.events.length, 2);
      assert.equal(result.insights[0].event, 1, 'the second view, by its index');
      assert.notEqual(result.events[1].messageId, sent.messageId, 'own messageId');
      assert.equal(result.events[0].messageId, sent.messageId);
    });
  });

  jsTest('service: a sticky view whose Experience call failed goes to Insights with the request profile, unnamed', function () {
    __testHost.fetchHandler = function () { return { status: 503, body: {} }; };
    var view = { componentId: 'c', viewId: 'v-1', variantIndex: 1, viewDurationMs: 2000, sticky: true };
    return send(events(), 'trackView', view, { consent: true, profile: { id: 'p-1', traits: { a: 1 } } }).then(function (result) {
      assert.equal(result.experience.ok, false);
      assert.deepEqual(result.insights, [{ event: 1 }], 'the request\'s profile: the host has it');
      return send(events(), 'trackView', view, { consent: true });
    }).then(function (result) {
      assert.equal(result.experience.ok, false);
      assert.equal(result.insights, undefined, 'no profile id: nothing for Insights');
    });
  });

  jsTest('service: flags and merge tags are computed from what the request carries, with no event', function () {
    __service.configure(settings());
    var changes = envelope('p', 2).data.changes;
    assert.equal(__service.getFlag('flag', changes), '{"on":2}');
    assert.equal(__service.getFlag('missing', changes), 'null');
    assert.equal(__service.getFlag('flag', null), 'null');
    var tag = { sys: { id: 'mt', type: 'Entry', contentType: { sys: { id: 'nt_mergetag' } } }, fields: { nt_name: 'n', nt_mergetag_id: 'traits.tier', nt_fallback: 'friend' } };
    assert.equal(__service.getMergeTagValue(tag, { id: 'p', traits: { tier: 'gold' }, audiences: [], location: {}, random: 0, stableId: 'p', session: {} }) !== undefined, true);
    assert.equal(__testHost.fetches.length, 0);
  });

  jsTest('service: requests share nothing: consent and profile of one call never leak into the next', function () {
    answerWithProfiles();
    var pipeline = events();
    return send(pipeline, 'track', { event: 'a' }, { consent: true, profile: { id: 'alice' } }).then(function () {
      var second = pipeline.run('track', { event: 'b' }, { profile: { id: 'bob' } });
      assert.equal(second.accepted, false, 'bob has not consented');
      return send(pipeline, 'page', {}, {});
    }).then(function (third) {
      assert.equal(__testHost.fetches.length, 2);
      assert.ok(/\/profiles$/.test(__testHost.fetches[1].url), 'no profile id carried over');
      assert.equal(JSON.parse(__testHost.fetches[1].body).events[0].context.gdpr.isConsentGiven, false);
      assert.equal(third.experience.data.profile.id, 'p-new');
    });
  });
  // Resolution on a service engine: the bridge's prepared documents without a visitor.
  jsTest('service: resolvePrepared resolves prepared documents and registers a context per match', function () {
    var fx = globalThis.fixtures;
    __service.configure({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds });
    __service.prepareEntry(1, fx.optimizedEntry(), undefined, 'oe@1');
    __service.prepareSelections(2, fx.selectedOptimizations(), 'visitor-1');
    var first = __service.resolvePrepared(1, 2).split('|');
    var second = __service.resolvePrepared(1, 2).split('|');
    assert.deepEqual(first.slice(0, 4), ['4', '0', '0', '0']);
    assert.ok(/^[0-9a-f-]{36}$/.test(first[4]) && first[4] !== second[4], 'a fresh context id per resolve');
    assert.equal(__service.resolvePrepared(1, null), '-1|-1|-1|0|');
    assert.equal(__service.resolvePrepared(9, null), '?e');
    assert.equal(__service.resolvePrepared(1, 9), '?s');
    assert.equal(__service.adoptEntry(3, 'oe@1'), true, 'equal content adopts the prepared record');
    assert.equal(__service.adoptSelections(4, 'visitor-1'), true);
    assert.equal(__service.adoptEntry(5, 'unknown'), false);
    assert.deepEqual(__service.resolvePrepared(3, 4).split('|').slice(0, 4), ['4', '0', '0', '0']);
    var now = __testHost.now();
    assert.equal(__service.registerDeferred({ pairs: [[1, 2], [9, null]], records: [0, now, 'host-1'] }), '?e1');
    assert.equal(__service.registerDeferred({ pairs: [[1, 2]], records: [0, now, 'host-1'] }), '');
    assert.throws(function () { __service.registerDeferred(null); }, /expects \{pairs, records\}/);
    assert.throws(function () { __service.prepareSelections(6, 'nope'); }, /must be an array or null/);
  });

  jsTest('service: configure sets the log level and the prepared-document capacity, checks the locale, naming a bad key', function () {
    __service.configure({ clientId: 'org-1', environment: 'main', logLevel: 'debug', entryCacheSize: 1, statusKinds: __testHost.statusKinds });
    assert.equal(ns.host.isLogEnabled('debug'), true);
    var fx = globalThis.fixtures;
    __service.prepareEntry(1, fx.optimizedEntry());
    __service.prepareEntry(2, fx.optimizedEntry());
    assert.equal(__service.resolvePrepared(1, null), '?e', 'one entry fits');
    assert.equal(__service.resolvePrepared(2, null), '-1|-1|-1|0|');
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', logLevel: 'loud' }); }, /service config "logLevel" must be one of fatal, error/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', entryCacheSize: 0 }); }, /service config "entryCacheSize" must be a positive integer/);
    assert.throws(function () { __service.configure({ clientId: 'a', environment: 'main', locale: '*' }); }, /locale must be a valid locale string, received "\*"/);
    __service.configure({ clientId: 'a', environment: 'main', locale: 'de_DE', statusKinds: __testHost.statusKinds });
    __service.configure({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds });
    assert.equal(ns.host.isLogEnabled('debug'), false, 'the default level is error');
    assert.equal(__service.resolvePrepared(2, null), '?e', 'a new configuration starts empty');
  });
})();
