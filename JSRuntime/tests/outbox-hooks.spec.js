// tests/outbox-hooks.spec.js — the durable-outbox side of the stateful bridge (Sources/EventOutbox/EventOutbox.docc/TheDurableOutbox.md,
// bridge/outbox-link.js): every accepted Experience event is stored through __nativeOutboxAppend
// before the call returns (a failed store fails the call), the Experience queue keeps a window of
// the stored backlog and loads the rest as it drains, every event that leaves it for good is
// pushed to __nativeOutboxRemoved with its reason, consent withdrawal calls __nativeOutboxPurge,
// resumeBacklog fills the window after a restart, and removeQueuedEvents drops events an outbox
// bound expired. Insights events never pass through these natives: they go to the host's
// Insights queue (fake-host.js __testHost.insights), which stores them itself. Also the queue
// hooks alone.
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

  // Starts the bridge with consent, a scripted Experience API (FIFO of replies, else 200) and a
  // recording outbox (`rec.store`, optionally pre-filled by `prefill(store)`).
  function withOutbox(config, body, prefill) {
    return function () {
      var rec = { appended: [], removed: [], loads: 0, purges: 0, queueEvents: [], script: { experience: [] }, store: createStore() };
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
        if (request.url.indexOf(EXPERIENCE) === -1) throw new Error('unexpected request to ' + request.url);
        if (rec.script.experience.length > 0) return rec.script.experience.shift();
        return { status: 200, body: envelope('p-1') };
      };
      rec.removedIds = function (reason, queue) {
        return rec.removed.filter(function (r) { return r.reason === reason && (queue === undefined || r.queue === queue); })
          .reduce(function (all, r) { return all.concat(r.ids); }, []);
      };
      // The harness's destroy() fires a forced flush after this: leaving it unanswered keeps its
      // acknowledgement out of the next test's outbox natives.
      function cleanup() {
        __testHost.fetchHandler = null;
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

  jsTest('outbox: Insights events go to the host\'s Insights queue, never through the outbox natives', withOutbox({}, function (rec) {
    __bridge.trackClick({ componentId: 'hero', variantIndex: 0 }, 'c1');
    assert.equal(rec.appended.length, 0, 'not appended by JavaScript');
    assert.equal(__testHost.insights.accepted.length, 1);
    assert.equal(__testHost.insights.accepted[0].event.componentId, 'hero');
    assert.equal(__testHost.insights.accepted[0].profile, null, 'no profile yet: the host holds it');
    __bridge.identify({ userId: 'u' }, 'i1');
    return drain().then(function () {
      __bridge.trackClick({ componentId: 'hero', variantIndex: 0 }, 'c2');
      assert.equal(__testHost.insights.accepted[1].profile.id, 'p-1');
      assert.deepEqual(rec.appended.map(function (a) { return a.queue; }), ['experience'], 'only the identify is stored');
      __bridge.flush('f1');
      return drain();
    }).then(function () {
      assert.deepEqual(rec.removed.map(function (r) { return r.queue; }), ['experience']);
      assert.equal(requests('insights').length, 0);
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

  jsTest('outbox: Experience delivery disabled acknowledges everything the queue discards', withOutbox({ online: false, defaults: { consent: true, profile: PF } }, function (rec) {
    __bridge.identify({ userId: 'u' }, 'i1');
    __bridge.track({ event: 'a' }, 't1');
    rec.script.experience.push({ status: 401 });
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.deepEqual(rec.removedIds('disabled', 'experience').sort(), rec.appended.map(function (a) { return a.messageId; }).sort());
      assert.equal(rec.appended.length, 2);
      assert.deepEqual(sizes(), { experience: 0 });
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
    __bridge.track({ event: 'kept' }, 't2');
    return drain().then(function () {
      delete globalThis.__nativeOnEventEmitted;
      var settled = __testHost.settled.filter(function (s) { return s.requestId === 't1'; })[0];
      assert.equal(settled.ok, false, 'the call fails');
      assert.ok(settled.json.indexOf('no space left on device') !== -1, settled.json);
      assert.deepEqual(sizes(), { experience: 1 }, 'the next event is unaffected');
      assert.deepEqual(published.map(function (e) { return e.event; }), ['kept'], 'the refused track is not published');
      assert.deepEqual(rec.appended.map(function (a) { return a.payload.event; }), ['kept']);
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
    assert.equal(__testHost.insights.purges, 1, 'the host\'s Insights queue in the same call');
    assert.deepEqual(sizes(), { experience: 0 });
    __bridge.track({ event: 'b' }, 't2');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c1');
    assert.equal(rec.appended.length, 1, 'a blocked call is never written');
    assert.equal(__testHost.insights.accepted.length, 0, 'nor handed to the host');
  }));

  jsTest('resumeBacklog: stored Experience events fill the window ahead of new ones with their bytes, are sent, never re-stored', withOutbox({ online: false }, function (rec) {
    var old = { type: 'track', event: 'old', messageId: 'm-old', context: { gdpr: { isConsentGiven: false } }, timestamp: '2026-01-01T00:00:00.000Z' };
    assert.equal(__bridge.resumeBacklog(), 1, 'the Experience backlog only');
    assert.equal(rec.appended.length, 0, 'stored events are not stored again');
    assert.deepEqual(sizes(), { experience: 1 });
    assert.equal(__testHost.insights.accepted.length, 0, 'the stored Insights event is the host\'s to resume');
    __bridge.track({ event: 'new' }, 't1');
    __bridge.setOnline(true);
    return drain().then(function () {
      var sent = eventsOf(requests('experience')[0]);
      assert.deepEqual(sent.map(function (e) { return e.messageId; }), ['m-old', rec.appended[0].messageId], 'stored first');
      assert.deepEqual(sent[0], old, 'byte for byte (consent flag and timestamp kept)');
      assert.equal(requests('insights').length, 0);
      assert.deepEqual(rec.removedIds('delivered').sort(), ['m-old', rec.appended[0].messageId].sort());
      assert.deepEqual(rec.store.pending('insights').map(function (r) { return r.messageId; }), ['m-click'], 'left untouched');
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
    __bridge.track({ event: 'b' }, 't2');
    var experienceId = rec.appended[0].messageId;
    assert.equal(__bridge.removeQueuedEvents('experience', [experienceId, 'gone-already'], 'expired'), 1);
    assert.deepEqual(sizes(), { experience: 1 });
    var drop = rec.queueEvents.filter(function (e) { return e.type === 'offlineDrop'; })[0];
    assert.equal(drop.queue, 'experience');
    assert.equal(drop.context.droppedCount, 2, 'every id the outbox dropped is counted');
    assert.equal(drop.context.reason, 'expired');
    assert.equal(drop.context.droppedEvents[0].messageId, experienceId);
    assert.deepEqual(drop.context.droppedEvents.map(function (e) { return e.event; }), ['a']);
    var reports = rec.queueEvents.length;
    assert.equal(__bridge.removeQueuedEvents('insights', [rec.appended[1].messageId], 'maxBytes'), 0, 'not a JavaScript queue');
    assert.equal(rec.queueEvents.length, reports, 'and nothing reported');
    assert.deepEqual(sizes(), { experience: 1 });
  }));

  jsTest('without __nativeOutboxAppend the Experience queue gets no hooks', function () {
    var fetched = 0;
    __testHost.fetchHandler = function () { fetched++; return { status: 200, body: envelope('p-1') }; };
    __bridge.setOnline(false);
    __bridge.initialize({ clientId: 'org-1', environment: 'main', defaults: { consent: true, profile: PF } });
    __bridge.track({ event: 'a' }, 't1');
    assert.equal(sizes().experience, 1, 'queued in memory only');
    assert.equal(__testHost.settled.filter(function (s) { return s.requestId === 't1'; })[0].ok, true);
    __bridge.setOnline(true);
    return drain().then(function () {
      assert.equal(fetched, 1);
      assert.equal(sizes().experience, 0);
    });
  });

  jsTest('the Experience queue without an outbox: the cap drops the oldest events, never one in flight', function () {
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
})();
