// tests/request-handoff.spec.js — the request handoff with replay (service/request-handoff.js).
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  function pipeline(extra) {
    return ns.createRequestEvents(Object.assign({
      clientId: 'space-1', apiVersion: 'v2', environment: 'master', allowedEventTypes: ['identify', 'page'], channel: 'server',
      library: { name: 'lib', version: '2.0.0' }, api: {}, requestTimeoutMs: 500,
    }, extra || {}));
  }

  function answerWith(profileId) {
    __testHost.fetchHandler = function () {
      return {
        status: 200,
        body: {
          data: { profile: { id: profileId, stableId: profileId, random: 0.5, audiences: [], traits: {}, location: {} }, experiences: [], changes: [] },
          message: 'ok', error: null,
        },
      };
    };
  }

  // As the Swift host does it: the call, then (while its preview is pending) the request sent
  // (__testHost.deliverExperience) and the answer interpreted.
  function delivered(events, answer) {
    return Promise.resolve(__testHost.deliverExperience(answer, function (context, status, headers, bodyText, failure) {
      return events.interpret(context, status, headers, bodyText, failure, ns.requestHandoffFinishers);
    }));
  }

  function prepare(extra, input, request) {
    var events = pipeline(extra);
    return delivered(events, ns.prepareRequestHandoff(events, input, request));
  }

  function commit(events, replay, request) {
    return delivered(events, ns.commitRequestReplay(events, replay, request));
  }

  function tracks(count) {
    var list = [];
    for (var i = 0; i < count; i++) list.push({ type: 'track', event: 'e' + i });
    return list;
  }

  jsTest('handoff: a known profile, consent given: replay of the initial events and the page, one preview call', function () {
    answerWith('p-1');
    return prepare({}, { routeKey: '/shop?x=1', initialEvents: [{ type: 'identify', userId: 'u-1' }, { type: 'track', event: 'viewed' }], page: { name: 'Shop' } },
      { consent: true, profile: { id: 'p-1' }, locale: 'de_DE', eventContext: { userAgent: 'ua' } }).then(function (result) {
      assert.deepEqual(result.handoff.cache, { scope: 'private-request' });
      assert.equal(result.handoff.profileId, 'p-1');
      assert.equal(result.handoff.replay.routeKey, '/shop?x=1');
      assert.equal(result.handoff.replay.locale, 'de-DE');
      assert.deepEqual(result.handoff.replay.events.map(function (e) { return e.type; }), ['identify', 'track', 'page']);
      assert.equal(result.handoff.replay.events[2].context.userAgent, 'ua');
      assert.equal(result.experience.ok, true);
      assert.equal(__testHost.fetches.length, 1);
      assert.ok(/\/v3\/spaces\/space-1\/environments\/master\/profiles\/p-1\?locale=de-DE&type=preflight$/.test(__testHost.fetches[0].url), __testHost.fetches[0].url);
      assert.deepEqual(JSON.parse(__testHost.fetches[0].body).events.map(function (e) { return e.messageId; }),
        result.handoff.replay.events.map(function (e) { return e.messageId; }), 'the preview sends exactly the replayed events');
    });
  });

  jsTest('handoff: without a known profile the previewed profile id is handed over', function () {
    answerWith('p-new');
    return prepare({}, { routeKey: '/' }, { consent: true }).then(function (result) {
      assert.equal(result.handoff.profileId, 'p-new');
      assert.equal(result.handoff.replay.events.length, 1);
    });
  });

  jsTest('handoff: a route key that is not a path, or an initial page event: no replay, no call', function () {
    answerWith('p-1');
    return prepare({}, { routeKey: 'https://example.test/' }, { consent: true, profile: { id: 'continuation' } }).then(function (result) {
      assert.deepEqual(result.handoff, { cache: { scope: 'private-request' }, profileId: 'continuation' });
      return prepare({}, { routeKey: '/', initialEvents: [{ type: 'page' }] }, { consent: true, profile: { id: 'continuation' } });
    }).then(function (result) {
      assert.deepEqual(result.handoff, { cache: { scope: 'private-request' }, profileId: 'continuation' });
      assert.equal(__testHost.fetches.length, 0);
    });
  });

  jsTest('handoff: more than 200 events or 50 identify events: no replay, no call', function () {
    answerWith('p-1');
    return prepare({}, { routeKey: '/', initialEvents: tracks(200) }, { consent: true }).then(function (result) {
      assert.equal(result.handoff.replay, undefined);
      var identifies = [];
      for (var i = 0; i < 51; i++) identifies.push({ type: 'identify', userId: 'u' + i });
      return prepare({}, { routeKey: '/', initialEvents: identifies }, { consent: true });
    }).then(function (result) {
      assert.equal(result.handoff.replay, undefined);
      assert.equal(__testHost.fetches.length, 0);
      return prepare({}, { routeKey: '/', initialEvents: tracks(199) }, { consent: true });
    }).then(function (result) {
      assert.equal(result.handoff.replay.events.length, 200, '199 + the page is within the limit');
    });
  });

  jsTest('handoff: without consent the allow-list decides event by event; what it refuses is reported', function () {
    answerWith('p-1');
    return prepare({ allowedEventTypes: ['page', 'track'] }, { routeKey: '/', initialEvents: [{ type: 'identify', userId: 'u' }, { type: 'track', event: 't' }] },
      { consent: false, profile: { id: 'p-1' } }).then(function (result) {
      assert.deepEqual(result.handoff.replay.events.map(function (e) { return e.type; }), ['track', 'page']);
      assert.ok(result.handoff.replay.events.every(function (e) { return e.context.gdpr.isConsentGiven === false; }));
      assert.equal(__testHost.fetches.length, 1);
      assert.deepEqual(result.blocked.map(function (b) { return b.method; }), ['identify']);
    });
  });

  jsTest('handoff: events refused and page not allowed: no profile id, no replay, no call', function () {
    return prepare({ allowedEventTypes: [] }, { routeKey: '/' }, { consent: false }).then(function (result) {
      assert.deepEqual(result.handoff, { cache: { scope: 'private-request' } });
      assert.deepEqual(result.blocked.map(function (b) { return b.method; }), ['page']);
      assert.equal(__testHost.fetches.length, 0);
    });
  });

  jsTest('handoff: a failed preview keeps the replay and carries no data', function () {
    __testHost.fetchHandler = function () { return { error: 'connection refused' }; };
    return prepare({}, { routeKey: '/' }, { consent: true }).then(function (result) {
      assert.equal(result.experience.ok, false);
      assert.equal(result.handoff.replay.events.length, 1);
      assert.equal(result.handoff.replay.events[0].type, 'page');
      assert.equal(result.handoff.profileId, undefined);
    });
  });

  jsTest('commit: with the same consent the replay\'s events go out unchanged in one stored upsert; a malformed replay is refused', function () {
    answerWith('p-1');
    var replay;
    return prepare({}, { routeKey: '/', initialEvents: [{ type: 'track', event: 'arrived' }] }, { consent: true, profile: { id: 'p-1' } }).then(function (result) {
      replay = result.handoff.replay;
      __testHost.fetches = [];
      return commit(pipeline(), replay, { consent: true, profile: { id: 'p-1' } });
    }).then(function (committed) {
      assert.equal(committed.accepted, true);
      assert.equal(committed.experience.ok, true);
      assert.equal(__testHost.fetches.length, 1);
      assert.equal(__testHost.fetches[0].url.indexOf('type=preflight'), -1, 'stored, not a preview');
      assert.deepEqual(JSON.parse(__testHost.fetches[0].body).events, replay.events);
      var bad = ns.commitRequestReplay(pipeline(), { routeKey: '/', events: [{ type: 'track' }] }, { consent: true });
      assert.ok(bad instanceof Error && /followed by one page event/.test(bad.message), String(bad));
      var refused = ns.commitRequestReplay(pipeline({ allowedEventTypes: [] }), replay, { consent: false });
      assert.equal(refused.accepted, false);
    });
  });

  jsTest('commit: each event is gated and stamped by the consent of the committing request, not the preparing one', function () {
    answerWith('p-1');
    var replay;
    return prepare({}, { routeKey: '/', initialEvents: [{ type: 'identify', userId: 'u-1' }, { type: 'track', event: 'a' }, { type: 'track', event: 'b' }] },
      { consent: true, profile: { id: 'p-1' } }).then(function (result) {
      replay = result.handoff.replay;
      assert.deepEqual(replay.events.map(function (e) { return e.context.gdpr.isConsentGiven; }), [true, true, true, true]);
      __testHost.fetches = [];
      // The visitor declined between the page and the commit: identify and page stay allowed
      // (the allow-list), the tracks are refused.
      return commit(pipeline(), replay, { consent: false, profile: { id: 'p-1' } });
    }).then(function (committed) {
      assert.equal(committed.accepted, true);
      assert.deepEqual(committed.blocked.map(function (b) { return b.method; }), ['track', 'track']);
      assert.equal(__testHost.fetches.length, 1);
      var sent = JSON.parse(__testHost.fetches[0].body).events;
      assert.deepEqual(sent.map(function (e) { return e.type; }), ['identify', 'page']);
      assert.deepEqual(sent.map(function (e) { return e.messageId; }), [replay.events[0].messageId, replay.events[3].messageId]);
      sent.forEach(function (e) { assert.equal(e.context.gdpr.isConsentGiven, false, 'stamped with the consent at commit'); });
      assert.equal(replay.events[0].context.gdpr.isConsentGiven, true, 'the handoff itself is not mutated');
      __testHost.fetches = [];
      // Consent unset and a strict allow-list: nothing is admitted, nothing is sent.
      var refused = ns.commitRequestReplay(pipeline({ allowedEventTypes: [] }), replay, { profile: { id: 'p-1' } });
      assert.equal(refused.accepted, false);
      assert.deepEqual(refused.blocked.map(function (b) { return b.method; }), ['identify', 'track', 'track', 'page']);
      assert.equal(__testHost.fetches.length, 0);
    });
  });

  jsTest('commit: a forged replay stamped as consented is re-stamped with the committing request\'s consent', function () {
    answerWith('p-1');
    var forged = { routeKey: '/', events: [
      { type: 'track', event: 'x', messageId: 'm-1', context: { gdpr: { isConsentGiven: true } } },
      { type: 'page', messageId: 'm-2', context: { gdpr: { isConsentGiven: true }, userAgent: 'ua' } },
    ] };
    return commit(pipeline(), forged, { profile: { id: 'p-1' } }).then(function (committed) {
      assert.deepEqual(committed.blocked.map(function (b) { return b.method; }), ['track']);
      var sent = JSON.parse(__testHost.fetches[0].body).events;
      assert.deepEqual(sent.map(function (e) { return e.messageId; }), ['m-2']);
      assert.deepEqual(sent[0].context, { gdpr: { isConsentGiven: false }, userAgent: 'ua' });
    });
  });

  jsTest('the Experiences handoff envelope: version 1, analytics events need a profile, at most 65 536 bytes', function () {
    var parse = ns.experiencesHandoff.parse;
    var page = { transport: 'personalization', event: { type: 'page' } };
    var view = { transport: 'analytics', event: { type: 'exo_node_view' } };
    var valid = { version: 1, spaceId: 's', environmentId: 'master', events: [page, view], initialPageRouteKey: '/' };
    assert.equal(parse(valid), valid);
    assert.throws(function () { parse(Object.assign({}, valid, { version: 2 })); }, /needs "version": 1/);
    assert.throws(function () { parse({ version: 1, spaceId: 's', environmentId: 'e', events: [view] }); }, /analytics event without a profile/);
    assert.equal(parse({ version: 1, spaceId: 's', environmentId: 'e', initialProfileId: 'p', events: [view] }).events.length, 1);
    assert.throws(function () { parse({ version: 1, spaceId: 's', environmentId: 'e', events: [view], initialPageRouteKey: '/' }); }, /profile/);
    assert.throws(function () { parse({ version: 1, spaceId: 's', environmentId: 'e', events: [], initialPageRouteKey: '/' }); }, /needs a personalization page/);
    var big = new Array(65537).join('x');
    assert.throws(function () { parse({ version: 1, spaceId: 's', environmentId: 'e', initialProfileId: big, events: [] }); }, /exceeds 65536 serialized bytes/);
    var cyclic = { version: 1 };
    cyclic.self = cyclic;
    assert.throws(function () { parse(cyclic); }, /cannot be serialized/);
  });
})();
