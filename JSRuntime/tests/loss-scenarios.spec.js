// tests/loss-scenarios.spec.js — the event-loss scenarios reported against the upstream SDK's
// queues, each reproduced on both delivery queues: events queued while a successful flush is in
// flight are kept (and sent next); a forced flush is not skipped while a normal flush is in
// flight; handing a request to the transport is not treated as the server's acknowledgement.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var drain = __testHost.drainJobs;

  var OK = { ok: true, data: { profile: { id: 'p' }, experiences: [], changes: [] } };
  var UNAVAILABLE = { ok: false, kind: 'retry', status: 503, reason: 'unavailable' };

  function ids(events) {
    return events.map(function (e) { return e.messageId; });
  }

  // An API whose calls stay pending until the test answers them: calls[i] = {events, answer(outcome)}.
  function manualApi() {
    var api = { calls: [] };
    function call(events) {
      return new Promise(function (resolve) {
        api.calls.push({ events: events, answer: resolve });
      });
    }
    api.upsertProfile = function (request) { return call(request.events); };
    api.sendBatches = function (batches) {
      return call(batches.reduce(function (all, b) { return all.concat(b.events); }, []));
    };
    return api;
  }

  function experienceQueue(api, removed) {
    return ns.createExperienceQueue({
      api: api,
      flushPolicy: { baseBackoffMs: 60000, maxBackoffMs: 60000, jitterRatio: 0 },
      onRemoved: function (events, reason) { removed.push([ids(events), reason]); },
    });
  }

  function insightsQueue(api, removed) {
    return ns.createInsightsQueue({
      api: api,
      flushThreshold: 1000,
      flushPolicy: { baseBackoffMs: 60000, maxBackoffMs: 60000, jitterRatio: 0 },
      onRemoved: function (events, reason) { removed.push([ids(events), reason]); },
    });
  }

  var P = { id: 'p' };
  var faces = [
    { name: 'Experience', make: experienceQueue, send: function (q, id) { q.send({ messageId: id }); }, queued: function (q) { return ids(q.peek()); } },
    { name: 'Insights', make: insightsQueue, send: function (q, id) { q.send({ messageId: id }, P); q.flush(); }, queued: function (q) {
      return q.peek().reduce(function (all, b) { return all.concat(ids(b.events)); }, []);
    } },
  ];

  faces.forEach(function (face) {
    jsTest(face.name + ' queue: events queued while a successful flush is in flight are kept and sent next', function () {
      var api = manualApi();
      var removed = [];
      var queue = face.make(api, removed);
      face.send(queue, 'a');
      assert.equal(api.calls.length, 1);
      face.send(queue, 'b');
      api.calls[0].answer(OK);
      return drain().then(function () {
        assert.deepEqual(removed[0], [['a'], 'delivered'], 'only the sent event is removed');
        if (api.calls.length === 1) queue.flush();
        assert.equal(api.calls.length, 2, 'b goes out in the next request');
        assert.deepEqual(api.calls[1].events.map(function (e) { return e.messageId; }), ['b']);
        api.calls[1].answer(OK);
        return drain();
      }).then(function () {
        assert.deepEqual(face.queued(queue), []);
        queue.close();
      });
    });

    jsTest(face.name + ' queue: a forced flush is not skipped while a normal flush is in flight', function () {
      var api = manualApi();
      var removed = [];
      var queue = face.make(api, removed);
      face.send(queue, 'a');
      assert.equal(api.calls.length, 1, 'a normal flush is in flight');
      var forced = queue.flush({ force: true });
      assert.equal(api.calls.length, 1, 'one request at a time');
      api.calls[0].answer(UNAVAILABLE);
      return drain().then(function () {
        assert.equal(api.calls.length, 2, 'the forced flush ran after the failed one, despite the 60 s backoff');
        api.calls[1].answer(OK);
        return forced;
      }).then(function () {
        assert.deepEqual(removed, [[['a'], 'delivered']]);
        queue.close();
      });
    });

    jsTest(face.name + ' queue: handing a request to the transport is not an acknowledgement', function () {
      var api = manualApi();
      var removed = [];
      var queue = face.make(api, removed);
      face.send(queue, 'a');
      assert.equal(api.calls.length, 1, 'handed to the transport');
      return drain().then(function () {
        assert.deepEqual(removed, [], 'nothing removed before the answer');
        assert.deepEqual(face.queued(queue), ['a']);
        api.calls[0].answer({ ok: false, kind: 'retry', status: 0, reason: 'connection reset' });
        return drain();
      }).then(function () {
        assert.deepEqual(removed, [], 'a transport failure acknowledges nothing');
        assert.deepEqual(face.queued(queue), ['a'], 'kept for the retry');
        queue.close();
      });
    });
  });
})();
