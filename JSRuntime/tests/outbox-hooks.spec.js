// tests/outbox-hooks.spec.js — the durable-outbox side of the stateful bridge (docs/outbox.md):
// every accepted event is pushed to __nativeOutboxAppend before the call returns, every event that
// leaves a queue for good is pushed to __nativeOutboxRemoved with its reason, consent withdrawal
// calls __nativeOutboxPurge, restoreQueuedEvents re-queues recovered events without gate or
// append, and removeQueuedEvents drops events an outbox bound expired. Also the queue hooks alone.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var EXPERIENCE = '/profiles';
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };

  function envelope(id) {
    return {
      data: {
        profile: { id: id, stableId: id, random: 0.5, audiences: [], traits: {}, location: {} },
        experiences: [],
        changes: [],
      },
      message: '',
      error: null,
    };
  }

  var requests = __testHost.fetchesTo;
  var eventsOf = __testHost.eventsOf;
  var drain = __testHost.drainJobs;

  function sizes() {
    return JSON.parse(__bridge.queueSizes());
  }

  // Starts the bridge with consent, a scripted API (per API: FIFO of replies, else 200/204) and
  // recording outbox push-backs.
  function withOutbox(config, body) {
    return function () {
      var rec = { appended: [], removed: [], purges: 0, queueEvents: [], script: { experience: [], insights: [] } };
      globalThis.__nativeOutboxAppend = function (queue, messageId, profileId, consent, acceptedAt, payload) {
        rec.appended.push({ queue: queue, messageId: messageId, profileId: profileId, consent: consent, acceptedAt: acceptedAt, payload: JSON.parse(payload) });
      };
      globalThis.__nativeOutboxRemoved = function (queue, ids, reason) {
        rec.removed.push({ queue: queue, ids: JSON.parse(ids), reason: reason });
      };
      globalThis.__nativeOutboxPurge = function () { rec.purges++; };
      globalThis.__nativeOnQueueEvent = function (json) { rec.queueEvents.push(JSON.parse(json)); };
      __testHost.fetchHandler = function (request) {
        var api = request.url.indexOf(EXPERIENCE) !== -1 ? 'experience' : 'insights';
        if (rec.script[api].length > 0) return rec.script[api].shift();
        return api === 'insights' ? { status: 204 } : { status: 200, body: envelope('p-1') };
      };
      rec.removedIds = function (reason, queue) {
        return rec.removed.filter(function (r) { return r.reason === reason && (queue === undefined || r.queue === queue); })
          .reduce(function (all, r) { return all.concat(r.ids); }, []);
      };
      function cleanup() {
        ['__nativeOutboxAppend', '__nativeOutboxRemoved', '__nativeOutboxPurge', '__nativeOnQueueEvent'].forEach(function (name) {
          delete globalThis[name];
        });
      }
      try {
        __bridge.setOnline(config.online !== false);
        var settings = Object.assign({ clientId: 'org-1', environment: 'main', defaults: { consent: true } }, config);
        delete settings.online;
        __bridge.initialize(settings);
        return Promise.resolve(body(rec)).then(function (value) { cleanup(); return value; }, function (error) { cleanup(); throw error; });
      } catch (error) {
        cleanup();
        throw error;
      }
    };
  }

  jsTest('outbox: an accepted Experience event is appended before the call returns, then acknowledged as delivered', withOutbox({}, function (rec) {
    __bridge.track({ event: 'bought' }, 't1');
    assert.equal(rec.appended.length, 1, 'appended synchronously');
    var appended = rec.appended[0];
    assert.equal(appended.queue, 'experience');
    assert.equal(appended.consent, true);
    assert.equal(appended.payload.event, 'bought');
    assert.equal(appended.payload.messageId, appended.messageId);
    assert.equal(typeof appended.acceptedAt, 'number');
    assert.deepEqual(rec.removed, [], 'nothing acknowledged before the answer');
    return drain().then(function () {
      assert.equal(eventsOf(requests('experience')[0])[0].messageId, appended.messageId, 'the appended bytes are what is sent');
      assert.deepEqual(rec.removed, [{ queue: 'experience', ids: [appended.messageId], reason: 'delivered' }]);
    });
  }));

  jsTest('outbox: Insights events are appended with the profile that will carry them (null while held)', withOutbox({}, function (rec) {
    __bridge.trackClick({ componentId: 'hero', variantIndex: 0 }, 'c1');
    assert.equal(rec.appended.length, 1);
    assert.equal(rec.appended[0].queue, 'insights');
    assert.equal(rec.appended[0].payload.profile, null, 'no profile yet: held');
    assert.equal(rec.appended[0].profileId, null);
    assert.equal(rec.appended[0].payload.event.messageId, rec.appended[0].messageId);
    __bridge.identify({ userId: 'u' }, 'i1');
    return drain().then(function () {
      __bridge.trackClick({ componentId: 'hero', variantIndex: 0 }, 'c2');
      var second = rec.appended[rec.appended.length - 1];
      assert.equal(second.queue, 'insights');
      assert.equal(second.profileId, 'p-1');
      assert.equal(second.payload.profile.id, 'p-1');
      return new Promise(function (resolve) { __bridge.flush('f1'); resolve(); }).then(drain);
    }).then(function () {
      var insightIds = rec.appended.filter(function (a) { return a.queue === 'insights'; }).map(function (a) { return a.messageId; });
      assert.deepEqual(rec.removedIds('delivered', 'insights').sort(), insightIds.sort(), 'both delivered in one batch');
    });
  }));

  jsTest('outbox: retries acknowledge nothing; a refused batch is acknowledged as dropped', withOutbox({
    queuePolicy: { flush: { baseBackoffMs: 10, maxBackoffMs: 10, jitterRatio: 0 } },
  }, function (rec) {
    rec.script.experience.push({ status: 503 });
    rec.script.experience.push({ status: 422, body: { message: 'bad' } });
    __bridge.track({ event: 'a' }, 't1');
    return drain().then(function () {
      assert.deepEqual(rec.removed, [], 'a 503 keeps the event on disk');
      assert.equal(sizes().experience, 1);
      __testHost.advance(10);
      return drain();
    }).then(function () {
      assert.deepEqual(rec.removedIds('dropped', 'experience'), [rec.appended[0].messageId]);
    });
  }));

  jsTest('outbox: delivery disabled acknowledges everything the queue discards', withOutbox({ online: false, defaults: { consent: true, profile: PF } }, function (rec) {
    __bridge.identify({ userId: 'u' }, 'i1');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c1');
    rec.script.experience.push({ status: 401 });
    rec.script.insights.push({ status: 403 });
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.deepEqual(rec.removedIds('disabled', 'experience'), [rec.appended[0].messageId]);
      assert.deepEqual(rec.removedIds('disabled', 'insights'), [rec.appended[1].messageId]);
      assert.deepEqual(sizes(), { experience: 0, insights: 0 });
    });
  }));

  jsTest('outbox: the in-memory cap acknowledges the events it drops', withOutbox({
    online: false, queuePolicy: { offlineMaxEvents: 2 },
  }, function (rec) {
    __bridge.track({ event: 'a' }, 't1');
    __bridge.track({ event: 'b' }, 't2');
    __bridge.track({ event: 'c' }, 't3');
    assert.deepEqual(rec.removedIds('capped', 'experience'), [rec.appended[0].messageId], 'the oldest');
    assert.equal(sizes().experience, 2);
  }));

  jsTest('outbox: consent withdrawal purges the outbox in the same call; blocked calls append nothing', withOutbox({ online: false }, function (rec) {
    __bridge.track({ event: 'a' }, 't1');
    __bridge.consent(false);
    assert.equal(rec.purges, 1);
    assert.deepEqual(sizes(), { experience: 0, insights: 0 });
    __bridge.track({ event: 'b' }, 't2');
    assert.equal(rec.appended.length, 1, 'a blocked call is never written');
  }));

  jsTest('restoreQueuedEvents: recovered events are queued ahead of new ones with their bytes, sent, and never re-appended', withOutbox({ online: false }, function (rec) {
    var old = { type: 'track', event: 'old', messageId: 'm-old', context: { gdpr: { isConsentGiven: false } }, timestamp: '2026-01-01T00:00:00.000Z' };
    var click = { type: 'component', componentType: 'Entry', componentId: 'x', messageId: 'm-click' };
    var restored = __bridge.restoreQueuedEvents([
      { queue: 'experience', event: old },
      { queue: 'insights', item: { profile: { id: 'p-old' }, event: click } },
      { queue: 'nonsense', event: {} },
      null,
    ]);
    assert.equal(restored, 2);
    assert.equal(rec.appended.length, 0, 'restored events are already on disk');
    assert.deepEqual(sizes(), { experience: 1, insights: 1 });
    __bridge.track({ event: 'new' }, 't1');
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = eventsOf(requests('experience')[0]);
      assert.deepEqual(sent.map(function (e) { return e.messageId; }), ['m-old', rec.appended[0].messageId], 'recovered first');
      assert.deepEqual(sent[0], old, 'byte for byte (consent flag and timestamp kept)');
      var batches = JSON.parse(requests('insights')[0].body);
      assert.equal(batches[0].profile.id, 'p-old', 'sent for the profile it was accepted for');
      assert.equal(batches[0].events[0].messageId, 'm-click');
      assert.deepEqual(rec.removedIds('delivered').sort(), ['m-click', 'm-old', rec.appended[0].messageId].sort());
    });
  }));

  jsTest('removeQueuedEvents: events an outbox bound dropped leave memory and are reported as offlineDrop', withOutbox({ online: false }, function (rec) {
    __bridge.track({ event: 'a' }, 't1');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c1');
    var experienceId = rec.appended[0].messageId;
    assert.equal(__bridge.removeQueuedEvents('experience', [experienceId, 'gone-already'], 'expired'), 1);
    assert.deepEqual(sizes(), { experience: 0, insights: 1 });
    var drop = rec.queueEvents.filter(function (e) { return e.type === 'offlineDrop'; })[0];
    assert.equal(drop.queue, 'experience');
    assert.equal(drop.context.droppedCount, 2, 'every id the outbox dropped is counted');
    assert.equal(drop.context.reason, 'expired');
    assert.equal(drop.context.droppedEvents[0].messageId, experienceId);
    assert.equal(__bridge.removeQueuedEvents('insights', [rec.appended[1].messageId], 'maxBytes'), 1, 'held events too');
    assert.deepEqual(sizes(), { experience: 0, insights: 0 });
  }));

  jsTest('without __nativeOutboxAppend the queues get no hooks', function () {
    var fetched = 0;
    __testHost.fetchHandler = function () { fetched++; return { status: 204 }; };
    __bridge.setOnline(false);
    __bridge.initialize({ clientId: 'org-1', environment: 'main', defaults: { consent: true, profile: PF } });
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c1');
    assert.equal(sizes().insights, 1);
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.equal(fetched, 1);
    });
  });

  jsTest('insights queue hooks: onAccepted gets the bucket profile, removeMessages finds held and bucketed events', function () {
    var accepted = [];
    var removed = [];
    var profile;
    var queue = ns.createInsightsQueue({
      getProfile: function () { return profile; },
      maxEvents: 3,
      onAccepted: function (event, p) { accepted.push([event.messageId, p && p.id]); },
      onRemoved: function (events, reason) { removed.push([events.map(function (e) { return e.messageId; }), reason]); },
    });
    queue.send({ messageId: 'h1' });
    profile = { id: 'p' };
    queue.send({ messageId: 'b1' });
    queue.send({ messageId: 'b2' }, { id: 'other' });
    assert.deepEqual(accepted, [['h1', undefined], ['b1', 'p'], ['b2', 'other']]);
    queue.send({ messageId: 'b3' });
    assert.deepEqual(removed, [[['h1'], 'capped']], 'the cap reports the oldest');
    assert.deepEqual(queue.removeMessages(['b2', 'nope']).map(function (e) { return e.messageId; }), ['b2']);
    assert.equal(queue.size(), 2);
    assert.deepEqual(removed[1], [['b2'], 'removed']);
    queue.enqueue({ messageId: 'r1' });
    assert.equal(accepted.length, 4, 'enqueue (restore) does not call onAccepted');
  });

  jsTest('experience queue hooks: onAccepted per send, removeMessages releases waiters', function () {
    var accepted = [];
    var removed = [];
    var queue = ns.createExperienceQueue({
      maxEvents: 5,
      onAccepted: function (event) { accepted.push(event.messageId); },
      onRemoved: function (events, reason) { removed.push([events.map(function (e) { return e.messageId; }), reason]); },
    });
    queue.send({ messageId: 'a' });
    queue.send({ messageId: 'b' });
    queue.enqueue({ messageId: 'restored' });
    assert.deepEqual(accepted, ['a', 'b']);
    assert.deepEqual(queue.removeMessages(['a']).map(function (e) { return e.messageId; }), ['a']);
    assert.deepEqual(queue.peek().map(function (e) { return e.messageId; }), ['b', 'restored']);
    assert.deepEqual(removed, [[['a'], 'removed']]);
  });
})();
