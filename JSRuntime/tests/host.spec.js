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
})();
