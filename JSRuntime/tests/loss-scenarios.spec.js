// tests/loss-scenarios.spec.js — the event-loss scenarios reported against the upstream SDK's
// queues, reproduced on the Experience queue (the Swift host's Insights queue is tested in Swift):
// events queued while a successful flush is in flight are kept (and sent next); a forced flush is
// not skipped while a normal flush is in flight; handing a request to the transport is not
// treated as the server's acknowledgement.
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
    return api;
  }

  function experienceQueue(api, removed) {
    return ns.createExperienceQueue({
      api: api,
      flushPolicy: { baseBackoffMs: 60000, maxBackoffMs: 60000, jitterRatio: 0 },
      onRemoved: function (events, reason) { removed.push([ids(events), reason]); },
    });
  }

  function queued(queue) {
    return ids(queue.peek());
  }

  jsTest('Experience queue: events queued while a successful flush is in flight are kept and sent next', function () {
    var api = manualApi();
    var removed = [];
    var queue = experienceQueue(api, removed);
    queue.send({ messageId: 'a' });
    assert.equal(api.calls.length, 1);
    queue.send({ messageId: 'b' });
    api.calls[0].answer(OK);
    return drain().then(function () {
      assert.deepEqual(removed[0], [['a'], 'delivered'], 'only the sent event is removed');
      assert.equal(api.calls.length, 2, 'b goes out in the next request, without another flush call');
      assert.deepEqual(api.calls[1].events.map(function (e) { return e.messageId; }), ['b']);
      api.calls[1].answer(OK);
      return drain();
    }).then(function () {
      assert.deepEqual(queued(queue), []);
      queue.close();
    });
  });

  jsTest('Experience queue: a forced flush is not skipped while a normal flush is in flight', function () {
    var api = manualApi();
    var removed = [];
    var queue = experienceQueue(api, removed);
    queue.send({ messageId: 'a' });
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

  jsTest('Experience queue: handing a request to the transport is not an acknowledgement', function () {
    var api = manualApi();
    var removed = [];
    var queue = experienceQueue(api, removed);
    queue.send({ messageId: 'a' });
    assert.equal(api.calls.length, 1, 'handed to the transport');
    return drain().then(function () {
      assert.deepEqual(removed, [], 'nothing removed before the answer');
      assert.deepEqual(queued(queue), ['a']);
      api.calls[0].answer({ ok: false, kind: 'retry', status: 0, reason: 'connection reset' });
      return drain();
    }).then(function () {
      assert.deepEqual(removed, [], 'a transport failure acknowledges nothing');
      assert.deepEqual(queued(queue), ['a'], 'kept for the retry');
      queue.close();
    });
  });
})();
