// tests/screen-tracker.spec.js — trackCurrentScreen de-duplication.
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  function counter(resultFor) {
    var calls = [];
    return {
      calls: calls,
      emit: function (key) {
        return function () {
          calls.push(key);
          return resultFor ? resultFor(key, calls.length) : { accepted: true };
        };
      },
    };
  }

  jsTest('the current-screen tracker does not emit an accepted key again', function () {
    var tracker = ns.createCurrentStateTracker();
    var c = counter();
    assert.deepEqual(tracker.track('home', c.emit('home')), { accepted: true });
    assert.deepEqual(tracker.track('home', c.emit('home')), { accepted: false, attempted: false });
    assert.equal(c.calls.length, 1);
    assert.equal(tracker.hasAccepted('home'), true);
  });

  jsTest('the current-screen tracker does not emit a key while its first emission is in flight', function () {
    var tracker = ns.createCurrentStateTracker();
    var release;
    var calls = 0;
    var first = tracker.track('home', function () {
      calls++;
      return new Promise(function (resolve) { release = resolve; });
    });
    assert.deepEqual(tracker.track('home', function () { calls++; return { accepted: true }; }), { accepted: false, attempted: false });
    assert.equal(calls, 1);
    release({ accepted: true });
    return first.then(function (value) {
      assert.deepEqual(value, { accepted: true });
      assert.deepEqual(tracker.track('home', function () { calls++; return { accepted: true }; }), { accepted: false, attempted: false });
      assert.equal(calls, 1);
    });
  });

  jsTest('the current-screen tracker retries a not-accepted or rejected emission next time', function () {
    var tracker = ns.createCurrentStateTracker();
    var c = counter(function (key, n) { return { accepted: n > 1 }; });
    assert.deepEqual(tracker.track('home', c.emit('home')), { accepted: false });
    assert.deepEqual(tracker.track('home', c.emit('home')), { accepted: true });
    assert.equal(c.calls.length, 2);
    var failing = 0;
    return assert.rejects(tracker.track('details', function () { failing++; return Promise.reject(new Error('down')); }), /down/)
      .then(function () {
        return tracker.track('details', function () { failing++; return Promise.resolve({ accepted: true }); });
      })
      .then(function (value) {
        assert.deepEqual(value, { accepted: true });
        assert.equal(failing, 2);
      });
  });

  jsTest('the current-screen tracker emits "home", "details", reset, "details" three times; isAllowed false never emits', function () {
    var tracker = ns.createCurrentStateTracker();
    var c = counter();
    tracker.track('home', c.emit('home'));
    tracker.track('details', c.emit('details'));
    tracker.reset();
    tracker.track('details', c.emit('details'));
    assert.deepEqual(c.calls, ['home', 'details', 'details']);
    var skipped = tracker.track('other', c.emit('other'), function () { return false; });
    assert.deepEqual(skipped, { accepted: false, attempted: false });
    assert.equal(c.calls.length, 3);
  });

  jsTest('the current-screen tracker accepts undefined as a key', function () {
    var tracker = ns.createCurrentStateTracker();
    var c = counter();
    tracker.track(undefined, c.emit(undefined));
    tracker.track(undefined, c.emit(undefined));
    assert.equal(c.calls.length, 1);
    tracker.track('x', c.emit('x'));
    assert.equal(c.calls.length, 2);
  });
})();
