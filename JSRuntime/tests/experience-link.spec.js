// tests/experience-link.spec.js — bridge/experience-link.js, the client's Experience path on
// the (fake) Swift host's queue: what each answer of __nativeExperienceAccept means for the sender,
// the upsert built for a flight, what each flight disposition means for its senders and the
// visitor's state, released senders, the consent purge, and the three __bridge entry points
// before initialize.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };
  var ACCEPTED = { accepted: true };
  var drain = __testHost.drainJobs;

  function envelopeText(id, changes) {
    return JSON.stringify({
      data: {
        profile: { id: id, stableId: id, random: 0.5, audiences: [], traits: {}, location: {} },
        experiences: [{ experienceId: 'exp-1', variantIndex: 1, variants: {} }],
        changes: changes || [],
      },
      message: '',
      error: null,
    });
  }

  // A link on the fake host, recording what it applies and the request states it sets.
  function makeLink() {
    var rec = { applied: [], states: [], profileId: undefined };
    rec.link = ns.createExperienceLink({
      api: ns.createExperienceApi({ clientId: 'org-1', environment: 'main' }),
      getProfileId: function () { return rec.profileId; },
      applyData: function (data) { rec.applied.push(data); },
      setRequestState: function (requestState) { rec.states.push(requestState); },
    });
    return rec;
  }

  // Sends `event` and records how its result settles: {value, settled}.
  function track(link, event) {
    var outcome = { settled: false, value: undefined };
    var returned = link.send(event);
    outcome.returned = returned;
    Promise.resolve(returned).then(function (value) {
      outcome.settled = true;
      outcome.value = value;
    });
    return outcome;
  }

  jsTest('experience link: accept answers 0 (queued), a ticket (the sender waits), -1 (refused) and {ticket, released}', function () {
    var t = makeLink();
    var host = __testHost.experience;
    host.acceptAnswer = 0;
    assert.deepEqual(t.link.send({ n: 0 }), ACCEPTED, 'queued: {accepted:true} synchronously');
    host.acceptAnswer = 3;
    var waiting = track(t.link, { n: 1 });
    assert.ok(waiting.returned instanceof Promise, 'a ticket: the sender waits for its flight');
    host.acceptAnswer = '{"ticket":4,"released":[3]}';
    var next = track(t.link, { n: 2 });
    host.acceptAnswer = '{"ticket":0,"released":[]}';
    assert.deepEqual(t.link.send({ n: 3 }), ACCEPTED, 'a JSON answer whose ticket is 0: queued');
    host.acceptAnswer = -1;
    var refused = track(t.link, { n: 4 });
    assert.deepEqual(t.states, [], 'accepting sets no request state');
    return drain().then(function () {
      assert.deepEqual(waiting.value, ACCEPTED, 'released by the cap: {accepted:true}');
      assert.equal(next.settled, false, 'ticket 4 still waits');
      assert.deepEqual(refused.value, { accepted: true, refused: { status: 0, reason: 'Experience API delivery is disabled.' } });
      t.link.answered({ disposition: 'retrying', tickets: [4], status: 503, reason: 'Experience API answered 503' });
      return drain();
    }).then(function () {
      assert.deepEqual(next.value, ACCEPTED);
      assert.deepEqual(host.accepted.map(function (a) { return a.event.n; }), [0, 1, 2, 3, 4], 'every event handed over');
    });
  });

  jsTest('experience link: the event goes over as JSON with the profile id (null without one); a throwing accept throws', function () {
    var t = makeLink();
    var host = __testHost.experience;
    var event = { type: 'track', event: 'e', properties: { a: [1, 2] } };
    t.link.send(event);
    t.profileId = '';
    t.link.send(event);
    t.profileId = 'p-1';
    t.link.send(event);
    assert.deepEqual(host.accepted, [
      { event: event, profileId: null }, { event: event, profileId: null }, { event: event, profileId: 'p-1' },
    ]);
    host.failAccept = 'the Experience store failed';
    assert.throws(function () { t.link.send(event); }, /^the Experience store failed$/);
    var thrown = null;
    try {
      t.link.send(event);
    } catch (error) {
      thrown = error;
    }
    assert.equal(thrown && thrown.code, 'experienceEventNotStored', 'the failure carries its code, for the host to read');
    assert.equal(host.accepted.length, 3);
  });

  jsTest('experienceRequest builds the upsert for the host\'s events and sets experienceRequestState pending', function () {
    var pushed = [];
    __bridge.initialize({
      clientId: 'org-1', environment: 'main', locale: 'de-DE', api: { enabledFeatures: ['location'] },
      defaults: { consent: true, profile: PF },
    });
    globalThis.__nativeOnStateChange = function (json) { pushed.push(JSON.parse(json).experienceRequestState); };
    var events = [{ type: 'track', event: 'a', messageId: 'm-a' }, { type: 'page', messageId: 'm-b' }];
    var built = JSON.parse(__bridge.experienceRequest(JSON.stringify(events)));
    assert.deepEqual(built, {
      url: 'https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles/p-1?locale=de-DE',
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ events: events, options: { features: ['location'] } }),
    });
    assert.deepEqual(pushed, [{ status: 'pending' }]);
    assert.throws(function () { __bridge.experienceRequest('[]'); }, /at least one event/);
    assert.throws(function () { __bridge.experienceRequest('not json'); });
  });

  jsTest('experience link: "delivered" settles its tickets with the answer\'s data and applies it; an invalid body fails api-error', function () {
    var t = makeLink();
    __testHost.experience.acceptAnswer = function (event) { return event.ticket; };
    var first = track(t.link, { ticket: 1 });
    var second = track(t.link, { ticket: 2 });
    var other = track(t.link, { ticket: 3 });
    ns.host.setLogLevel('warn');
    try {
      t.link.answered({
        disposition: 'delivered', tickets: [1, 2, 99], status: 200, reason: '', headers: { 'Content-Type': 'application/json' },
        body: envelopeText('p-new', [{ type: 'Unknown' }]),
      });
    } finally {
      ns.host.setLogLevel('error');
    }
    assert.equal(t.applied.length, 1);
    assert.equal(t.applied[0].profile.id, 'p-new');
    assert.deepEqual(t.states, [], 'applyData sets the success state itself');
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && /ignored 1 change/.test(l.message); }));
    return drain().then(function () {
      assert.deepEqual(first.value, { accepted: true, data: t.applied[0] }, 'the caller receives the answer\'s data');
      assert.deepEqual(second.value, first.value);
      assert.equal(other.settled, false, 'another flight\'s sender still waits');
      t.link.answered({ disposition: 'delivered', tickets: [3], status: 200, reason: '', headers: {}, body: 'not an envelope' });
      return drain();
    }).then(function () {
      assert.deepEqual(other.value, ACCEPTED, 'it reached the API: accepted, no data');
      assert.equal(t.applied.length, 1, 'nothing applied');
      assert.deepEqual(t.states, [{ status: 'failed', reason: 'api-error' }]);
      assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && /not sent again/.test(l.message); }));
    });
  });

  jsTest('experience link: "dropped" and "disabled" refuse with {status, reason, code?}; a disabled refusal answers later -1s', function () {
    var t = makeLink();
    __testHost.experience.acceptAnswer = function (event) { return event.ticket; };
    var dropped = track(t.link, { ticket: 1 });
    var disabled = track(t.link, { ticket: 2 });
    t.link.answered({ disposition: 'dropped', tickets: [1], status: 422, reason: 'Experience API answered 422', headers: {}, body: 'plain text' });
    t.link.answered({
      disposition: 'disabled', tickets: [2], status: 404, reason: 'Experience API delivery disabled: Experience API answered 404', headers: {},
      body: JSON.stringify({ data: null, message: 'not found', error: { code: 'ERR_NOT_FOUND' } }),
    });
    var later = track(t.link, { ticket: -1 });
    return drain().then(function () {
      assert.deepEqual(dropped.value, { accepted: true, refused: { status: 422, reason: 'Experience API answered 422' } });
      var refusal = { accepted: true, refused: { status: 404, reason: 'Experience API delivery disabled: Experience API answered 404', code: 'ERR_NOT_FOUND' } };
      assert.deepEqual(disabled.value, refusal);
      assert.deepEqual(later.value, refusal, 'the remembered refusal');
      assert.deepEqual(t.states, [{ status: 'failed', reason: 'api-error' }, { status: 'failed', reason: 'api-error' }]);
      assert.deepEqual(t.applied, []);
    });
  });

  jsTest('experience link: "retrying" settles {accepted:true}; a failure the host marks timedOut fails timeout, others api-error', function () {
    var t = makeLink();
    __testHost.experience.acceptAnswer = function (event) { return event.ticket; };
    var timedOut = track(t.link, { ticket: 1 });
    var failed = track(t.link, { ticket: 2 });
    var answered = track(t.link, { ticket: 3 });
    var byText = track(t.link, { ticket: 4 });
    t.link.answered({ disposition: 'retrying', tickets: [1], status: 0, reason: 'Experience API request failed: request timed out after 5 s', failure: 'request timed out after 5 s', timedOut: true });
    t.link.answered({ disposition: 'retrying', tickets: [2], status: 0, reason: 'Experience API request failed: connection reset', failure: 'connection reset' });
    t.link.answered({ disposition: 'retrying', tickets: [3], status: 503, reason: 'Experience API answered 503', headers: { 'Retry-After': '5' }, body: '' });
    // A failure whose text reads like a timeout, not marked as one: the text decides nothing.
    t.link.answered({ disposition: 'retrying', tickets: [4], status: 0, reason: 'Experience API request failed: request timed out', failure: 'request timed out' });
    return drain().then(function () {
      [timedOut, failed, answered, byText].forEach(function (sender) { assert.deepEqual(sender.value, ACCEPTED); });
      assert.deepEqual(t.states, [
        { status: 'failed', reason: 'timeout' }, { status: 'failed', reason: 'api-error' }, { status: 'failed', reason: 'api-error' },
        { status: 'failed', reason: 'api-error' },
      ]);
      assert.deepEqual(t.applied, []);
    });
  });

  jsTest('experience link: "stale" (purged in flight) applies a 2xx answer; any other ends the pending request state as failed', function () {
    var t = makeLink();
    __testHost.experience.acceptAnswer = 5;
    var sender = track(t.link, { n: 1 });
    t.link.answered({ disposition: 'stale', tickets: [], status: 200, reason: '', headers: {}, body: envelopeText('p-late') });
    t.link.answered({ disposition: 'stale', tickets: [], status: 500, reason: '', headers: {}, body: envelopeText('p-error') });
    t.link.answered({ disposition: 'stale', tickets: [], status: 200, reason: '', headers: {}, body: 'not an envelope' });
    t.link.answered({ disposition: 'stale', tickets: [], status: 0, reason: '', failure: 'connection reset' });
    assert.deepEqual(t.applied.map(function (data) { return data.profile.id; }), ['p-late']);
    assert.deepEqual(t.states, [
      { status: 'failed', reason: 'api-error' }, { status: 'failed', reason: 'api-error' }, { status: 'failed', reason: 'api-error' },
    ], 'a request that was pending does not stay pending');
    return drain().then(function () {
      assert.equal(sender.settled, false, 'its sender is the purge\'s to release');
    });
  });

  jsTest('experience link: purge calls __nativeExperiencePurge and releases the tickets it returns', function () {
    var t = makeLink();
    __testHost.experience.online = true;
    var first = track(t.link, { n: 1 });
    var second = track(t.link, { n: 2 });
    __testHost.experience.acceptAnswer = 9;
    var outside = track(t.link, { n: 3 });
    assert.deepEqual(__testHost.experience.queued.map(function (q) { return q.ticket; }), [1, 2]);
    t.link.purge();
    assert.equal(__testHost.experience.purges, 1);
    return drain().then(function () {
      assert.deepEqual(first.value, ACCEPTED);
      assert.deepEqual(second.value, ACCEPTED);
      assert.equal(outside.settled, false, 'a ticket the purge did not return still waits');
      assert.equal(__testHost.fetches.length, 0, 'the scheduled flight found nothing to send');
    });
  });

  jsTest('releaseExperienceWaiters resolves those senders with {accepted:true}; experienceAnswered settles the others', function () {
    __bridge.initialize({ clientId: 'org-1', environment: 'main', defaults: { consent: true } });
    var ticket = 0;
    __testHost.experience.acceptAnswer = function () { ticket += 1; return ticket; };
    __bridge.track({ event: 'a' }, 't1');
    __bridge.track({ event: 'b' }, 't2');
    __bridge.track({ event: 'c' }, 't3');
    function settledFor(id) {
      return __testHost.settled.filter(function (s) { return s.requestId === id; });
    }
    return drain().then(function () {
      assert.equal(__testHost.settled.length, 0, 'all three wait');
      __bridge.releaseExperienceWaiters('[1, 3, 42]');
      return drain();
    }).then(function () {
      assert.deepEqual(settledFor('t1'), [{ requestId: 't1', ok: true, json: '{"accepted":true}' }]);
      assert.deepEqual(settledFor('t3'), [{ requestId: 't3', ok: true, json: '{"accepted":true}' }]);
      assert.deepEqual(settledFor('t2'), []);
      __bridge.experienceAnswered(JSON.stringify({ disposition: 'delivered', tickets: [2], status: 200, reason: '', headers: {}, body: envelopeText('p-2') }));
      return drain();
    }).then(function () {
      assert.equal(JSON.parse(settledFor('t2')[0].json).data.profile.id, 'p-2');
      assert.equal(JSON.parse(__bridge.getState()).profile.id, 'p-2', 'applied to the visitor\'s state');
      __bridge.releaseExperienceWaiters('[1, 2, 3]');
      return drain();
    }).then(function () {
      assert.equal(__testHost.settled.length, 3, 'a sender settles once');
    });
  });

  jsTest('before __bridge.initialize: experienceRequest throws not-initialized; experienceAnswered and releaseExperienceWaiters do nothing', function () {
    var pushes = 0;
    var before = __bridge.getState();
    globalThis.__nativeOnStateChange = function () { pushes += 1; };
    assert.throws(function () { __bridge.experienceRequest('[{"type":"track","event":"a"}]'); }, /^SDK not initialized\. Call initialize\(\) first\.$/);
    assert.equal(__bridge.experienceAnswered(JSON.stringify({ disposition: 'delivered', tickets: [1], status: 200, reason: '', headers: {}, body: envelopeText('p-1') })), undefined);
    assert.equal(__bridge.releaseExperienceWaiters('[1]'), undefined);
    assert.equal(pushes, 0);
    assert.equal(__bridge.getState(), before, 'the state is untouched');
    assert.equal(JSON.parse(__bridge.getState()).profile, null);
    assert.deepEqual(__testHost.settled, []);
    __bridge.initialize({ clientId: 'org-1', environment: 'main' });
    __bridge.destroy();
    assert.throws(function () { __bridge.experienceRequest('[{"type":"track","event":"a"}]'); }, /SDK not initialized/, 'after destroy too');
  });
})();
