// tests/host.spec.js — the core's host facade (__optimization.host).
(function () {
  'use strict';
  var host = globalThis.__optimization.host;

  jsTest('host.now follows the injected clock; bindings are read at call time', function () {
    assert.equal(host.now(), Date.UTC(2026, 0, 1));
    __testHost.advance(1234);
    assert.equal(host.now(), Date.UTC(2026, 0, 1) + 1234);
    globalThis.__nativeNow = function () { return 42; };
    assert.equal(host.now(), 42);
    globalThis.__nativeRandomUUID = function () { return 'swapped'; };
    assert.equal(host.randomUUID(), 'swapped');
    delete globalThis.__nativeNow;
    assert.throws(function () { host.now(); }, /__nativeNow is not installed/);
  });

  jsTest('host.randomUUID draws 32 ids per binding call and hands them out in order', function () {
    var calls = [];
    var ids = [];
    for (var i = 0; i < 64; i++) ids.push('00000000-0000-4000-8000-' + ('000000000000' + i.toString(16)).slice(-12));
    globalThis.__nativeRandomUUID = function (count) {
      calls.push(count);
      return ids.splice(0, count).join('');
    };
    var drawn = [];
    for (var n = 0; n < 40; n++) drawn.push(host.randomUUID());
    assert.deepEqual(calls, [32, 32]);
    assert.equal(drawn[0], '00000000-0000-4000-8000-000000000000');
    assert.equal(drawn[39], '00000000-0000-4000-8000-000000000027');
    assert.equal(new Set(drawn).size, 40);
    // Hand out the pooled rest, then a binding that answers one id per call is used as it is.
    for (var rest = 0; rest < 24; rest++) host.randomUUID();
    globalThis.__nativeRandomUUID = function () { return 'one-at-a-time'; };
    assert.equal(host.randomUUID(), 'one-at-a-time');
    assert.equal(host.randomUUID(), 'one-at-a-time');
  });

  jsTest('host.log respects the threshold (default error) and maps fatal to error', function () {
    assert.equal(host.getLogLevel(), 'error');
    host.log('warn', 'hidden');
    host.log('error', 'shown');
    host.log('fatal', 'fatal shown');
    assert.deepEqual(__testHost.logs, [{ level: 'error', message: 'shown' }, { level: 'error', message: 'fatal shown' }]);
    host.setLogLevel('info');
    assert.equal(host.isLogEnabled('debug'), false);
    assert.equal(host.isLogEnabled('info'), true);
    host.log('info', 'now shown');
    host.log('debug', 'still hidden');
    assert.equal(__testHost.logs.length, 3);
    assert.throws(function () { host.setLogLevel('verbose'); }, /logLevel must be one of/);
    globalThis.__nativeLog = function () { throw new Error('sink down'); };
    host.log('error', 'does not throw');
  });

  jsTest('host timers fire through __timerFired in time order and can be cleared', function () {
    var fired = [];
    host.setTimeout(function () { fired.push('b'); }, 200);
    var cancelled = host.setTimeout(function () { fired.push('x'); }, 100);
    host.setTimeout(function () { fired.push('a'); }, 50);
    host.setTimeout(function () { fired.push('c'); }, 200);
    host.clearTimeout(cancelled);
    host.clearTimeout(99999);
    __testHost.advance(199);
    assert.deepEqual(fired, ['a']);
    __testHost.advance(1);
    assert.deepEqual(fired, ['a', 'b', 'c']);
    assert.equal(__testHost.pendingTimers().length, 0);
  });

  jsTest('host intervals re-arm the same id until cleared, also from inside the callback', function () {
    var ticks = [];
    var id = host.setInterval(function () {
      ticks.push(host.now() - __testHost.START_TIME);
      if (ticks.length === 3) host.clearTimeout(id);
    }, 100);
    __testHost.advance(1000);
    assert.deepEqual(ticks, [100, 200, 300]);
    assert.equal(__testHost.pendingTimers().length, 0);
  });

  jsTest('a throwing timer callback is logged and later timers still fire', function () {
    var fired = false;
    host.setTimeout(function () { throw new Error('timer boom'); }, 10);
    host.setTimeout(function () { fired = true; }, 20);
    __testHost.advance(20);
    assert.equal(fired, true);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && l.message.indexOf('timer boom') !== -1; }));
    globalThis.__timerFired(12345);
  });

  jsTest('host.fetch sends through __nativeFetch and resolves on __fetchComplete', function () {
    var promise = host.fetch('https://experience.example.test/v2/profiles', {
      method: 'post', headers: { 'Content-Type': 'text/plain' }, body: '{"events":[]}',
    });
    assert.equal(__testHost.fetches.length, 1);
    var request = __testHost.fetches[0];
    assert.equal(request.method, 'POST');
    assert.deepEqual(request.headers, { 'Content-Type': 'text/plain' });
    assert.equal(request.body, '{"events":[]}');
    __testHost.respondToFetch(request.requestId, { status: 201, headers: { 'X-Trace': 'abc' }, body: { ok: 1 } });
    __testHost.respondToFetch(request.requestId, { status: 500 });
    return promise.then(function (response) {
      assert.equal(response.status, 201);
      assert.equal(response.statusText, 'Created');
      assert.equal(response.headers.get('x-trace'), 'abc');
      return response.json();
    }).then(function (body) {
      assert.deepEqual(body, { ok: 1 });
    });
  });
  jsTest('host.fetch: aborting cancels that request through __nativeCancelFetch and ignores its late completion', function () {
    var kept = host.fetch('https://api.example.test/kept', {});
    var controller = new AbortController();
    var aborted = host.fetch('https://api.example.test/slow', { signal: controller.signal });
    assert.equal(__testHost.fetches.length, 2);
    var keptId = __testHost.fetches[0].requestId;
    var abortedId = __testHost.fetches[1].requestId;
    assert.notEqual(keptId, abortedId);
    assert.deepEqual(__testHost.cancelledFetches, []);
    controller.abort();
    assert.deepEqual(__testHost.cancelledFetches, [abortedId], 'the host is told at once, with the id it was given');
    controller.abort();
    assert.deepEqual(__testHost.cancelledFetches, [abortedId], 'a second abort cancels nothing more');
    var late = false;
    aborted.then(function () { late = true; }, function () {});
    __testHost.respondToFetch(abortedId, { status: 200, body: 'late' });
    __testHost.respondToFetch(keptId, { status: 204 });
    return assert.rejects(aborted, /aborted/).then(function (error) {
      assert.equal(error.name, 'AbortError');
      return kept;
    }).then(function (response) {
      assert.equal(response.status, 204, 'the other request is untouched');
      assert.equal(late, false, 'the late completion is ignored');
      assert.deepEqual(__testHost.cancelledFetches, [abortedId]);
    });
  });

  jsTest('host.fetch: aborting after completion, or with an already aborted signal, cancels nothing', function () {
    var controller = new AbortController();
    var done = host.fetch('https://api.example.test/fast', { signal: controller.signal });
    __testHost.respondToFetch(__testHost.fetches[0].requestId, { status: 200 });
    return done.then(function (response) {
      assert.equal(response.status, 200);
      controller.abort();
      assert.deepEqual(__testHost.cancelledFetches, []);
      var already = new AbortController();
      already.abort();
      return assert.rejects(host.fetch('https://api.example.test/never', { signal: already.signal }), /aborted/);
    }).then(function () {
      assert.equal(__testHost.fetches.length, 1, 'nothing was sent');
      assert.deepEqual(__testHost.cancelledFetches, []);
    });
  });

  jsTest('host.fetch: a throwing or missing __nativeCancelFetch still rejects the aborted fetch', function () {
    host.setLogLevel('warn');
    globalThis.__nativeCancelFetch = function () { throw new Error('cancel refused'); };
    var first = new AbortController();
    var failing = host.fetch('https://api.example.test/a', { signal: first.signal });
    first.abort();
    delete globalThis.__nativeCancelFetch;
    var second = new AbortController();
    var missing = host.fetch('https://api.example.test/b', { signal: second.signal });
    second.abort();
    host.setLogLevel('error');
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && l.message.indexOf('cancel refused') !== -1; }));
    return assert.rejects(failing, /aborted/).then(function () {
      return assert.rejects(missing, /aborted/);
    });
  });
})();
