// tests/event-queues.spec.js — the Experience and Insights queue interfaces as far as this layer goes: enqueue, cap, purge, size, drain.
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  jsTest('Experience queue: send enqueues and answers {accepted:true} synchronously', function () {
    var queue = ns.createExperienceQueue();
    assert.equal(queue.maxEvents, 100);
    assert.deepEqual(queue.send({ n: 1 }), { accepted: true });
    queue.enqueue({ n: 2 });
    assert.equal(queue.size(), 2);
    assert.deepEqual(queue.peek(), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(queue.drain(), [{ n: 1 }, { n: 2 }]);
    assert.equal(queue.size(), 0);
    queue.enqueue({ n: 3 });
    queue.purge();
    assert.equal(queue.size(), 0);
  });

  jsTest('Experience queue: beyond maxEvents the oldest events are dropped and reported', function () {
    var drops = [];
    var queue = ns.createExperienceQueue({ maxEvents: 2.9, onDrop: function (context) { drops.push(context); } });
    assert.equal(queue.maxEvents, 2);
    queue.enqueue({ n: 1 });
    queue.enqueue({ n: 2 });
    queue.enqueue({ n: 3 });
    assert.deepEqual(queue.peek(), [{ n: 2 }, { n: 3 }]);
    assert.deepEqual(drops, [{ droppedCount: 1, droppedEvents: [{ n: 1 }], maxEvents: 2, queuedEvents: 2 }]);
    assert.equal(ns.createExperienceQueue({ maxEvents: 0 }).maxEvents, 100, 'invalid ⇒ 100');
    assert.equal(ns.createExperienceQueue({ maxEvents: NaN }).maxEvents, 100);
  });

  jsTest('Insights queue: per-profile buckets, held events adopted by the first profile', function () {
    var profile;
    var queue = ns.createInsightsQueue({ getProfile: function () { return profile; } });
    queue.send({ n: 1 });
    assert.equal(queue.size(), 1);
    assert.equal(queue.heldCount(), 1);
    assert.deepEqual(queue.drain(), [], 'held events are not drained');
    assert.equal(queue.size(), 1);
    profile = { id: 'a', v: 1 };
    assert.equal(queue.adoptHeld(), 1);
    queue.send({ n: 2 });
    profile = { id: 'b' };
    queue.send({ n: 3 });
    profile = { id: 'a', v: 2 };
    queue.send({ n: 4 });
    assert.deepEqual(queue.peek(), [
      { profile: { id: 'a', v: 2 }, events: [{ n: 1 }, { n: 2 }, { n: 4 }] },
      { profile: { id: 'b' }, events: [{ n: 3 }] },
    ]);
    assert.equal(queue.size(), 4);
    queue.purge();
    assert.equal(queue.size(), 0);
    assert.deepEqual(queue.peek(), []);
  });

  jsTest('Insights queue: a total cap drops held events first, then the oldest bucketed ones', function () {
    var profile;
    var queue = ns.createInsightsQueue({ getProfile: function () { return profile; }, maxEvents: 2 });
    queue.send({ n: 1 });
    queue.send({ n: 2 });
    queue.send({ n: 3 });
    assert.equal(queue.size(), 2);
    assert.equal(queue.heldCount(), 2);
    profile = { id: '' };
    queue.send({ n: 4 });
    assert.deepEqual(queue.peek(), [{ profile: { id: '' }, events: [{ n: 3 }, { n: 4 }] }]);
    queue.send({ n: 5 });
    assert.deepEqual(queue.peek()[0].events, [{ n: 4 }, { n: 5 }]);
    assert.equal(ns.createInsightsQueue().maxEvents, 1000);
  });
})();
