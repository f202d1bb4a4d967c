// tests/event-queues.spec.js — the Experience queue interface as far as this layer goes: enqueue, cap, purge, size, drain.
// (The Swift host queues the client's Insights events.)
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
})();
