// tests/delivery-api.spec.js — the Experience API client, the API routes (Insights included) and the
// outcome of an answer: the host's status kinds, Retry-After (core/api-response.js). The Swift
// host sends every request: a test plays its part (upsert below).
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var http = ns.apiResponse;

  var TRACK = { type: 'track', event: 'Clicked', messageId: 'm-1' };

  function profile(id) {
    return { id: id, stableId: id, random: 0.5, audiences: ['a-1'], traits: {}, location: {} };
  }

  function envelope(id, extra) {
    var data = {
      profile: profile(id),
      experiences: [{ experienceId: 'exp-1', variantIndex: 1, variants: { base: 'var' } }],
      changes: [{ key: 'flag', type: 'Variable', value: true, meta: { experienceId: 'exp-1', variantIndex: 1 } }],
    };
    return { data: Object.assign(data, extra || {}), message: '', error: null };
  }

  // Replies to every request with `reply` (an object or a function of the request).
  function answer(reply) {
    __testHost.fetchHandler = typeof reply === 'function' ? reply : function () { return reply; };
  }

  function experienceApi(extra) {
    return ns.createExperienceApi(Object.assign({ clientId: 'org-1', environment: 'main', statusKinds: __testHost.statusKinds }, extra || {}));
  }

  // The host's side of one profile upsert: the request profileUpsertRequest builds is sent
  // (recorded in __testHost.fetches) and the `answer` reply handed to profileAnswerOutcome, a
  // transport failure ({error}) to failureOutcome. Returns the outcome.
  function upsert(api, request) {
    var built = api.profileUpsertRequest(request);
    var sent = { url: built.url, method: built.method, headers: built.headers, body: built.body };
    __testHost.fetches.push(sent);
    var reply = __testHost.fetchHandler(sent);
    if (reply.error !== undefined) return api.failureOutcome(reply.error);
    var body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    return api.profileAnswerOutcome(reply.status, reply.headers || {}, body);
  }

  jsTest('creating a profile is a text/plain POST of {events, options.features} to …/profiles', function () {
    answer({ status: 200, body: envelope('p-new') });
    var outcome = upsert(experienceApi({ enabledFeatures: ['location'] }), { events: [TRACK] });
    var request = __testHost.fetches[0];
    assert.equal(request.method, 'POST');
    assert.equal(request.url, 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles');
    assert.deepEqual(request.headers, { 'Content-Type': 'text/plain' });
    assert.deepEqual(JSON.parse(request.body), { events: [TRACK], options: { features: ['location'] } });
    assert.equal(outcome.ok, true);
    assert.equal(outcome.data.profile.id, 'p-new');
    assert.deepEqual(outcome.data.selectedOptimizations, [{ experienceId: 'exp-1', variantIndex: 1, variants: { base: 'var' }, sticky: false }]);
  });

  jsTest('an update posts to …/profiles/{id}, ?type=preflight follows ?locale= (sent only when set), the features default to ip-enrichment and location', function () {
    answer({ status: 200, body: envelope('p 1') });
    var locale;
    var api = experienceApi({ preflight: true, getLocale: function () { return locale; } });
    assert.deepEqual(api.features, ['ip-enrichment', 'location'], 'A3: never omitted, never empty');
    assert.deepEqual(experienceApi({ enabledFeatures: [] }).features, ['ip-enrichment', 'location']);
    upsert(api, { profileId: 'p 1', events: [TRACK] });
    locale = 'de-DE';
    upsert(api, { profileId: '', events: [TRACK] });
    assert.equal(__testHost.fetches[0].url, 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles/p%201?type=preflight');
    assert.equal(__testHost.fetches[1].url, 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles?locale=de-DE&type=preflight', '"" ⇒ create');
    assert.deepEqual(JSON.parse(__testHost.fetches[0].body).options, { features: ['ip-enrichment', 'location'] });
  });

  jsTest('an empty event array is rejected before any request', function () {
    answer({ status: 200, body: envelope('p-new') });
    assert.throws(function () { upsert(experienceApi(), { events: [] }); }, /at least one event/);
    assert.equal(__testHost.fetches.length, 0);
  });

  jsTest('API v2: the Experience client uses the spaces routes and the version\'s default environment', function () {
    answer({ status: 200, body: envelope('p-1') });
    var experience = ns.createExperienceApi({ clientId: 'space-1', apiVersion: 'v2', getLocale: function () { return 'de-DE'; }, preflight: true, statusKinds: __testHost.statusKinds });
    assert.equal(experience.profilesUrl('p-1'),
      'https://experience.ninetailed.co/v3/spaces/space-1/environments/master/profiles/p-1?locale=de-DE&type=preflight');
    assert.equal(http.experienceProfilesPath('v2', 'a b', 'env/1'), 'v3/spaces/a%20b/environments/env%2F1/profiles');
    assert.equal(http.defaultEnvironment('v1'), 'main');
    assert.equal(http.defaultEnvironment('v2'), 'master');
    assert.equal(upsert(experience, { profileId: 'p-1', events: [TRACK] }).ok, true, 'a v2 success envelope (error: null) parses');
  });

  jsTest('API v2: an error envelope\'s code reaches the outcome; a v1 boolean error carries none', function () {
    answer(function (request) {
      return request.url.indexOf('/v3/') !== -1
        ? { status: 429, body: { message: 'busy', data: {}, error: { code: 'ERR_PROFILE_OVERLOAD' } } }
        : { status: 400, body: { message: 'bad', data: {}, error: true } };
    });
    var outcome = upsert(experienceApi({ apiVersion: 'v2', clientId: 'space-1' }), { events: [TRACK] });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.status, 429);
    assert.equal(outcome.code, 'ERR_PROFILE_OVERLOAD');
    outcome = upsert(experienceApi(), { events: [TRACK] });
    assert.equal(outcome.kind, 'drop');
    assert.equal('code' in outcome, false);
  });

  jsTest('readTenant: spaceId speaks v2, clientId v1, unless apiVersion says otherwise', function () {
    function fail(text) { return new Error(text); }
    assert.deepEqual(http.readTenant({ spaceId: 's' }, fail), { clientId: 's', apiVersion: 'v2', environment: 'master' });
    assert.deepEqual(http.readTenant({ clientId: 'c' }, fail), { clientId: 'c', apiVersion: 'v1', environment: 'main' });
    assert.deepEqual(http.readTenant({ clientId: 'c', apiVersion: 'v2', environment: 'dev' }, fail), { clientId: 'c', apiVersion: 'v2', environment: 'dev' });
    assert.deepEqual(http.readTenant({ spaceId: 's', clientId: 's', environment: '' }, fail), { clientId: 's', apiVersion: 'v2', environment: 'master' });
    assert.throws(function () { http.readTenant({ spaceId: '' }, fail, true); }, /"spaceId" must be a non-empty string/);
  });

  jsTest('base URLs join with or without a trailing slash', function () {
    assert.equal(http.joinUrl('http://h/experience', 'v2/x'), 'http://h/experience/v2/x');
    assert.equal(http.joinUrl('http://h/experience/', '/v2/x'), 'http://h/experience/v2/x');
    assert.equal(http.joinUrl('http://h/experience//', '//v2/x'), 'http://h/experience/v2/x');
    var urls = ['http://127.0.0.1:9/experience', 'http://127.0.0.1:9/experience/'].map(function (base) {
      return experienceApi({ baseUrl: base }).profilesUrl();
    });
    assert.equal(urls[0], urls[1]);
    assert.equal(urls[0], 'http://127.0.0.1:9/experience/v2/organizations/org-1/environments/main/profiles');
    assert.equal(experienceApi({ baseUrl: '' }).profilesUrl(), 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles', 'falsy ⇒ default');
  });

  jsTest('a change whose type is not Variable is dropped on its own', function () {
    var body = envelope('p-1', {
      changes: [
        { key: 'kept', type: 'Variable', value: { a: 1 }, meta: { experienceId: 'e', variantIndex: 0 }, extra: 'stripped' },
        { key: 'other', type: 'Audience', value: 1 },
        { type: 'Something' },
      ],
    });
    var parsed = ns.experienceApi.parseResponse(JSON.stringify(body));
    assert.deepEqual(parsed.data.changes, [{ key: 'kept', type: 'Variable', value: { a: 1 }, meta: { experienceId: 'e', variantIndex: 0 } }]);
    assert.equal(parsed.ignoredChanges, 2);
    assert.equal(parsed.data.profile.id, 'p-1');
  });

  jsTest('API v2 envelope: error is null or {code} (a boolean is refused), v1 takes a boolean', function () {
    function body(error) {
      return JSON.stringify({ data: envelope('p').data, message: 'ok', error: error });
    }
    var parse = ns.experienceApi.parseResponse;
    assert.equal(parse(body(null), 'v2').data.profile.id, 'p');
    assert.equal(parse(body({ code: 'ERR_CONFIG_NOT_FOUND' }), 'v2').data.profile.id, 'p');
    assert.throws(function () { parse(body(false), 'v2'); }, /"error" is neither null nor an \{code\} object/);
    assert.equal(parse(body(false), 'v1').data.profile.id, 'p');
    assert.throws(function () { parse(body({ code: 'X' }), 'v1'); }, /"error" is neither null nor a boolean/);
  });

  jsTest('the change union: Experience and Fragment changes are carried through, flags read Variable changes only', function () {
    var changes = [
      { type: 'Variable', key: 'headline', value: 'Hello', meta: { experienceId: 'opt-1', variantIndex: 0 } },
      { type: 'Experience', id: 'experience-1', variantId: 'experience-variant-1', meta: { optimizationId: 'optimization-2', variantIndex: 1 } },
      { type: 'Fragment', id: 'fragment-1', variantId: 'fragment-variant-2', meta: { optimizationId: 'optimization-3', variantIndex: 2 }, extra: 1 },
      { type: 'Component', id: 'c-1' },
    ];
    var parsed = ns.experienceApi.parseResponse(JSON.stringify(envelope('p', { changes: changes })), 'v2');
    assert.equal(parsed.ignoredChanges, 1, 'an unknown type is dropped on its own');
    assert.deepEqual(parsed.data.changes.map(function (c) { return c.type; }), ['Variable', 'Experience', 'Fragment']);
    assert.deepEqual(parsed.data.changes[2], { type: 'Fragment', id: 'fragment-1', variantId: 'fragment-variant-2', meta: { optimizationId: 'optimization-3', variantIndex: 2 } });
    assert.deepEqual(ns.flags.resolve(parsed.data.changes), { headline: 'Hello' });
    // Variable values: an object with a `value` key holding an object unwraps; others stay.
    function flagOf(value) {
      return ns.flags.resolve([{ type: 'Variable', key: 'k', value: value, meta: { experienceId: 'e', variantIndex: 0 } }]).k;
    }
    assert.deepEqual(flagOf({ value: { amount: 10 } }), { amount: 10 });
    assert.deepEqual(flagOf({ value: 'x' }), { value: 'x' });
    assert.equal(flagOf({ value: null }), null);
    assert.equal(flagOf(42), 42);
    // An Experience change with a Variable's meta is malformed: the envelope fails.
    assert.throws(function () {
      ns.experienceApi.parseResponse(JSON.stringify(envelope('p', { changes: [
        { type: 'Experience', id: 'entry_1', variantId: 'variant_1', meta: { experienceId: 'exp_1', variantIndex: 1 } },
      ] })), 'v2');
    }, /data\.changes\[0\] is not an Experience change/);
  });

  jsTest('an invalid envelope on a 2xx is an "invalid" outcome (delivered, not retried)', function () {
    var cases = [
      ['not json', /not JSON/],
      [JSON.stringify({ message: 'x' }), /no "data" object/],
      [JSON.stringify({ data: { profile: { id: 1 }, experiences: [], changes: [] } }), /data\.profile/],
      [JSON.stringify(envelope('p', { experiences: [{ experienceId: 'e', variantIndex: '1', variants: {} }] })), /data\.experiences\[0\]/],
      [JSON.stringify(envelope('p', { changes: [{ key: 'k', type: 'Variable', meta: {} }] })), /data\.changes\[0\]/],
      [JSON.stringify(envelope('p', { changes: undefined })), /data\.changes is not an array/],
    ];
    cases.forEach(function (c) {
      assert.throws(function () { ns.experienceApi.parseResponse(c[0]); }, c[1]);
    });
    answer({ status: 200, body: 'not json' });
    var outcome = upsert(experienceApi(), { events: [TRACK] });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.kind, 'invalid');
    assert.equal(outcome.status, 200);
  });

  jsTest('status kinds are the host\'s: an answer takes the kind of its status in the table handed over', function () {
    function fail(text) { return new Error(text); }
    var table = http.readStatusKinds({ fallback: 'drop', statuses: { 200: 'success', 503: 'disable' } }, fail);
    assert.equal(http.kindOf(table, 200), 'success');
    assert.equal(http.kindOf(table, 503), 'disable');
    assert.equal(http.kindOf(table, 500), 'drop', 'a status the table does not list takes the fallback');
    assert.equal(http.outcomeOfStatus('Experience', ns.createResponse({ status: 503 }), table).kind, 'disable');
    assert.throws(function () { http.outcomeOfStatus('Experience', ns.createResponse({ status: 503 })); }, /no status kinds/);
    assert.throws(function () { http.readStatusKinds(undefined, fail); }, /"statusKinds" must be \{fallback, statuses\}/);
    assert.throws(function () { http.readStatusKinds({ fallback: 'later', statuses: {} }, fail); }, /"statusKinds" must be/);
    assert.throws(function () { http.readStatusKinds({ fallback: 'retry', statuses: { 600: 'drop' } }, fail); }, /"statusKinds.statuses" must map/);
    assert.throws(function () { http.readStatusKinds({ fallback: 'retry', statuses: { 404: 'gone' } }, fail); }, /"statusKinds.statuses" must map/);
    // The outcome's kind follows the host's table for every status (Swift's test covers the table itself).
    var api = experienceApi();
    for (var status = 100; status <= 599; status++) {
      var kind = http.kindOf(__testHost.statusKinds, status);
      if (kind !== 'success') assert.equal(api.profileAnswerOutcome(status, {}, '').kind, kind, String(status));
    }
  });

  jsTest('a non-2xx outcome carries its kind and reason, and no wait: Retry-After is the host\'s', function () {
    function response(status, retryAfter) {
      return ns.createResponse({ status: status, headers: retryAfter === undefined ? {} : { 'Retry-After': retryAfter } });
    }
    var kinds = __testHost.statusKinds;
    assert.deepEqual(http.outcomeOfStatus('Experience', response(429, '7'), kinds),
      { ok: false, kind: 'retry', status: 429, reason: 'Experience API answered 429 Too Many Requests' });
    assert.equal(http.parseRetryAfter, undefined);
    assert.equal(http.outcomeOfStatus('Experience', response(401), kinds).reason, 'Experience API answered 401 Unauthorized');
  });

  jsTest('a transport failure is a retry whose reason carries the message; its text decides nothing else', function () {
    answer({ error: 'request timed out after 25 ms' });
    var outcome = upsert(experienceApi(), { events: [TRACK] });
    assert.deepEqual(outcome, { ok: false, kind: 'retry', status: 0, reason: 'Experience API request failed: request timed out after 25 ms' });
    assert.equal(http.isTimeout, undefined, 'no timeout is read from a message');
  });

  jsTest('applyOptimizationData runs the state interceptors, writes changed keys and success in one push', function () {
    var store = ns.createStateStore({ experienceRequestState: { status: 'pending' } });
    var notified = [];
    store.subscribe(function (snapshot) { notified.push(snapshot); });
    var data = ns.experienceApi.parseResponse(JSON.stringify(envelope('p-1'))).data;
    var registry = ns.stateInterceptors;
    var remove = registry && typeof registry.add === 'function' ? registry.add(function (value) {
      assert.equal(value.profile.id, 'p-1', 'interceptors see a copy of the data');
      return { selectedOptimizations: [] };
    }) : null;
    try {
      ns.experienceApi.applyOptimizationData(store, data);
    } finally {
      if (remove) remove();
    }
    assert.equal(notified.length, 1, 'one notification');
    var state = store.get();
    assert.deepEqual(state.experienceRequestState, { status: 'success' });
    assert.equal(state.profile.id, 'p-1');
    assert.deepEqual(state.changes, data.changes);
    if (remove) assert.deepEqual(state.selectedOptimizations, [], 'the interceptor output is applied');
    assert.equal(data.selectedOptimizations.length, 1, 'the raw data is untouched');
    // Equal values are not written again (no extra notification beyond the request state).
    store.set({ experienceRequestState: { status: 'pending' } });
    var before = state.profile;
    ns.experienceApi.applyOptimizationData(store, ns.experienceApi.parseResponse(JSON.stringify(envelope('p-1'))).data);
    assert.ok(store.get().profile === before, 'a deep-equal profile keeps the current object');
  });
})();
