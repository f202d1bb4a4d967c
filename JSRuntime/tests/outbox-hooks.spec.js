// tests/outbox-hooks.spec.js — the durable-outbox side of the stateful bridge (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md,
// bridge/outbox-link.js): every accepted event is stored through __nativeOutboxAppend before the
// call returns (a failed store fails the call), the queues keep a window of the stored backlog
// and load the rest as they drain, every event that leaves a queue for good is pushed to
// __nativeOutboxRemoved with its reason, consent withdrawal calls __nativeOutboxPurge,
// resumeBacklog fills the windows after a restart, and removeQueuedEvents drops events an outbox
// bound expired. Also the queue hooks alone.
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

  // An in-memory store with the outbox's contract: sequences in append order, one record per
  // undelivered messageId, acknowledgement by messageId, load after a sequence per queue.
  function createStore() {
    var store = { records: [], nextSequence: 1, failNext: null };
    store.append = function (queue, messageId, profileId, consent, acceptedAt, payload) {
      if (store.failNext !== null) {
        var reason = store.failNext;
        store.failNext = null;
        throw new Error(reason);
      }
      var existing = store.records.filter(function (r) { return r.messageId === messageId; })[0];
      if (existing) return existing.sequence;
      var record = { sequence: store.nextSequence++, queue: queue, messageId: messageId, profileId: profileId, consent: consent, acceptedAt: acceptedAt, payload: payload };
      store.records.push(record);
      return record.sequence;
    };
    store.load = function (queue, after, limit) {
      var found = store.records.filter(function (r) { return r.queue === queue && r.sequence > after; }).slice(0, limit);
      return '[' + found.map(function (r) { return '{"sequence":' + r.sequence + ',"payload":' + r.payload + '}'; }).join(',') + ']';
    };
    store.acknowledge = function (ids) {
      store.records = store.records.filter(function (r) { return ids.indexOf(r.messageId) === -1; });
    };
    store.pending = function (queue) {
      return store.records.filter(function (r) { return queue === undefined || r.queue === queue; });
    };
    return store;
  }

  // Starts the bridge with consent, a scripted API (per API: FIFO of replies, else 200/204) and
  // a recording outbox (`rec.store`, optionally pre-filled by `prefill(store)`).
  function withOutbox(config, body, prefill) {
    return function () {
      var rec = { appended: [], removed: [], loads: 0, purges: 0, queueEvents: [], script: { experience: [], insights: [] }, store: createStore() };
      if (prefill) prefill(rec.store);
      globalThis.__nativeOutboxAppend = function (queue, messageId, profileId, consent, acceptedAt, payload) {
        var sequence = rec.store.append(queue, messageId, profileId, consent, acceptedAt, payload);
        rec.appended.push({ queue: queue, messageId: messageId, profileId: profileId, consent: consent, acceptedAt: acceptedAt, payload: JSON.parse(payload) });
        return sequence;
      };
      globalThis.__nativeOutboxLoad = function (queue, after, limit) {
        rec.loads++;
        return rec.store.load(queue, after, limit);
      };
      globalThis.__nativeOutboxRemoved = function (queue, ids, reason) {
        rec.removed.push({ queue: queue, ids: JSON.parse(ids), reason: reason });
        rec.store.acknowledge(JSON.parse(ids));
      };
      globalThis.__nativeOutboxPurge = function () { rec.purges++; rec.store.records = []; };
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
        ['__nativeOutboxAppend', '__nativeOutboxLoad', '__nativeOutboxRemoved', '__nativeOutboxPurge', '__nativeOnQueueEvent'].forEach(function (name) {
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

  function storedTrack(sequence, name) {
    return JSON.stringify({ type: 'track', event: name, messageId: 'm-' + name, context: { gdpr: { isConsentGiven: true } }, timestamp: '2026-01-01T00:00:00.000Z' });
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

  jsTest('outbox: a full window drops nothing; newer events wait on disk and are sent in order as it drains', withOutbox({
    online: false, queuePolicy: { offlineMaxEvents: 2 },
  }, function (rec) {
    ['a', 'b', 'c', 'd', 'e'].forEach(function (name, i) { __bridge.track({ event: name }, 't' + i); });
    assert.equal(rec.appended.length, 5, 'every event is stored');
    assert.equal(sizes().experience, 2, 'the window holds two');
    assert.deepEqual(rec.removed, [], 'nothing capped, nothing acknowledged');
    assert.equal(rec.queueEvents.filter(function (e) { return e.type === 'offlineDrop'; }).length, 0);
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = requests('experience').map(function (r) { return eventsOf(r).map(function (e) { return e.event; }); });
      assert.deepEqual(sent, [['a', 'b'], ['c', 'd'], ['e']], 'in order, one window per request');
      assert.deepEqual(rec.removedIds('delivered', 'experience').length, 5);
      assert.equal(rec.store.pending().length, 0);
    });
  }));

  jsTest('outbox: an event accepted while older ones wait on disk waits behind them, even when the window has room', withOutbox({
    online: false, queuePolicy: { offlineMaxEvents: 2 },
  }, function (rec) {
    ['a', 'b', 'c'].forEach(function (name, i) { __bridge.track({ event: name }, 't' + i); });
    assert.equal(__bridge.removeQueuedEvents('experience', [rec.appended[0].messageId], 'expired'), 1);
    rec.store.acknowledge([rec.appended[0].messageId]);
    assert.equal(sizes().experience, 2, 'the drained window loaded c from disk');
    __bridge.track({ event: 'd' }, 't4');
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = requests('experience').reduce(function (all, r) { return all.concat(eventsOf(r).map(function (e) { return e.event; })); }, []);
      assert.deepEqual(sent, ['b', 'c', 'd']);
    });
  }));

  jsTest('outbox: a failed store fails the call; the event is neither queued, published nor acknowledged', withOutbox({ online: false }, function (rec) {
    var published = [];
    globalThis.__nativeOnEventEmitted = function (json) { published.push(JSON.parse(json)); };
    rec.store.failNext = 'no space left on device';
    __bridge.track({ event: 'lost' }, 't1');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c0');
    return drain().then(function () {
      delete globalThis.__nativeOnEventEmitted;
      var settled = __testHost.settled.filter(function (s) { return s.requestId === 't1'; })[0];
      assert.equal(settled.ok, false, 'the call fails');
      assert.ok(settled.json.indexOf('no space left on device') !== -1, settled.json);
      assert.deepEqual(sizes(), { experience: 0, insights: 1 }, 'the next event is unaffected');
      assert.equal(published.length, 1, 'only the click is published');
      assert.ok(published[0].type !== 'track', 'the refused track is not published');
      assert.deepEqual(rec.removed, []);
    });
  }));

  jsTest('outbox: disabled delivery acknowledges the events waiting on disk too', withOutbox({
    online: false, queuePolicy: { offlineMaxEvents: 1 },
  }, function (rec) {
    ['a', 'b', 'c'].forEach(function (name, i) { __bridge.track({ event: name }, 't' + i); });
    rec.script.experience.push({ status: 401 });
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.deepEqual(rec.removedIds('disabled', 'experience').sort(), rec.appended.map(function (a) { return a.messageId; }).sort());
      assert.equal(rec.store.pending().length, 0);
    });
  }));

  jsTest('outbox: consent withdrawal purges the outbox in the same call; blocked calls append nothing', withOutbox({ online: false }, function (rec) {
    __bridge.track({ event: 'a' }, 't1');
    __bridge.consent(false);
    assert.equal(rec.purges, 1);
    assert.deepEqual(sizes(), { experience: 0, insights: 0 });
    __bridge.track({ event: 'b' }, 't2');
    assert.equal(rec.appended.length, 1, 'a blocked call is never written');
  }));

  jsTest('resumeBacklog: stored events fill the windows ahead of new ones with their bytes, are sent, never re-stored', withOutbox({ online: false }, function (rec) {
    var old = { type: 'track', event: 'old', messageId: 'm-old', context: { gdpr: { isConsentGiven: false } }, timestamp: '2026-01-01T00:00:00.000Z' };
    var click = { type: 'component', componentType: 'Entry', componentId: 'x', messageId: 'm-click' };
    assert.equal(__bridge.resumeBacklog(), 2);
    assert.equal(rec.appended.length, 0, 'stored events are not stored again');
    assert.deepEqual(sizes(), { experience: 1, insights: 1 });
    __bridge.track({ event: 'new' }, 't1');
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = eventsOf(requests('experience')[0]);
      assert.deepEqual(sent.map(function (e) { return e.messageId; }), ['m-old', rec.appended[0].messageId], 'stored first');
      assert.deepEqual(sent[0], old, 'byte for byte (consent flag and timestamp kept)');
      var batches = JSON.parse(requests('insights')[0].body);
      assert.equal(batches[0].profile.id, 'p-old', 'sent for the profile it was accepted for');
      assert.equal(batches[0].events[0].messageId, 'm-click');
      assert.deepEqual(rec.removedIds('delivered').sort(), ['m-click', 'm-old', rec.appended[0].messageId].sort());
    });
  }, function (store) {
    store.append('experience', 'm-old', null, false, 0, JSON.stringify({ type: 'track', event: 'old', messageId: 'm-old', context: { gdpr: { isConsentGiven: false } }, timestamp: '2026-01-01T00:00:00.000Z' }));
    store.append('insights', 'm-click', 'p-old', false, 0, JSON.stringify({ profile: { id: 'p-old' }, event: { type: 'component', componentType: 'Entry', componentId: 'x', messageId: 'm-click' } }));
  }));

  jsTest('resumeBacklog: a backlog fifty times the window is delivered whole, in order, a window at a time', withOutbox({
    queuePolicy: { offlineMaxEvents: 4 },
  }, function (rec) {
    assert.equal(__bridge.resumeBacklog(), 4, 'one window loaded');
    function drainAll(rounds) {
      return drain().then(function () { return rounds > 0 && rec.store.pending().length > 0 ? drainAll(rounds - 1) : undefined; });
    }
    return drainAll(20).then(function () {
      var sent = requests('experience').reduce(function (all, r) { return all.concat(eventsOf(r).map(function (e) { return e.event; })); }, []);
      var expected = [];
      for (var i = 0; i < 200; i++) expected.push('e' + i);
      assert.equal(sent.length, expected.length, 'count: ' + sent.length);
      assert.deepEqual(sent, expected);
      assert.equal(requests('experience').length, 50);
      assert.equal(rec.store.pending().length, 0, 'all acknowledged');
    });
  }, function (store) {
    for (var i = 0; i < 200; i++) store.append('experience', 'm-e' + i, null, true, 0, storedTrack(i, 'e' + i));
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

  jsTest('insights queue hooks: the store gets the bucket profile, removeMessages finds held and bucketed events', function () {
    var appended = [];
    var removed = [];
    var profile;
    var sequence = 0;
    var queue = ns.createInsightsQueue({
      getProfile: function () { return profile; },
      maxEvents: 3,
      outbox: {
        append: function (event, p) { appended.push([event.messageId, p && p.id]); return ++sequence; },
        load: function () { return []; },
      },
      onRemoved: function (events, reason) { removed.push([events.map(function (e) { return e.messageId; }), reason]); },
    });
    queue.resume();
    queue.send({ messageId: 'h1' });
    profile = { id: 'p' };
    queue.send({ messageId: 'b1' });
    queue.send({ messageId: 'b2' }, { id: 'other' });
    assert.deepEqual(appended, [['h1', undefined], ['b1', 'p'], ['b2', 'other']]);
    queue.send({ messageId: 'b3' });
    assert.deepEqual(removed, [], 'a full window drops nothing');
    assert.equal(queue.size(), 3);
    assert.equal(queue.backlogOnDisk(), true);
    assert.deepEqual(queue.removeMessages(['b2', 'nope']).map(function (e) { return e.messageId; }), ['b2']);
    assert.deepEqual(removed[0], [['b2'], 'removed']);
  });

  jsTest('queues without an outbox: the cap drops the oldest events, never one in flight', function () {
    var removed = [];
    var pending = [];
    var queue = ns.createExperienceQueue({
      maxEvents: 2,
      api: { upsertProfile: function () { return new Promise(function (resolve) { pending.push(resolve); }); } },
      onRemoved: function (events, reason) { removed.push([events.map(function (e) { return e.messageId; }), reason]); },
    });
    queue.send({ messageId: 'a' });
    assert.equal(pending.length, 1, 'a is in flight');
    queue.send({ messageId: 'b' });
    queue.send({ messageId: 'c' });
    assert.deepEqual(removed, [[['b'], 'capped']], 'b (not in flight) goes, a (in flight) stays');
    assert.deepEqual(queue.peek().map(function (e) { return e.messageId; }), ['a', 'c']);
    pending[0]({ ok: false, kind: 'retry', status: 503, reason: 'unavailable' });
    return drain().then(function () {
      assert.deepEqual(queue.peek().map(function (e) { return e.messageId; }), ['a', 'c'], 'a failed request keeps a for the retry');
      queue.close();
    });
  });

  jsTest('insights queue without an outbox: the cap passes over events in flight', function () {
    var removed = [];
    var pending = [];
    var queue = ns.createInsightsQueue({
      maxEvents: 2,
      flushThreshold: 1000,
      api: { sendBatches: function () { return new Promise(function (resolve) { pending.push(resolve); }); } },
      onRemoved: function (events, reason) { removed.push([events.map(function (e) { return e.messageId; }), reason]); },
    });
    queue.send({ messageId: 'a' }, { id: 'p' });
    queue.flush();
    assert.equal(pending.length, 1, 'a is in flight');
    queue.send({ messageId: 'b' }, { id: 'p' });
    queue.send({ messageId: 'c' }, { id: 'p' });
    assert.deepEqual(removed, [[['b'], 'capped']]);
    pending[0]({ ok: false, kind: 'retry', status: 503, reason: 'unavailable' });
    return drain().then(function () {
      assert.deepEqual(queue.peek()[0].events.map(function (e) { return e.messageId; }), ['a', 'c']);
      queue.close();
    });
  });

})();
