// tests/harness.js
// Contract: a tiny test harness that runs in Node and JavaScriptCore alike (no Node APIs).
//   jsTest(name, fn)       registers a test; fn may return a Promise. Names must be unique.
//   assert.ok(v, msg?), assert.equal(a, b, msg?) (===), assert.notEqual, assert.deepEqual(a, b,
//   msg?) (structural, key-order-insensitive, same own enumerable keys, cycle-safe),
//   assert.throws(fn, regex?, msg?) (regex tested against error.message), assert.rejects(
//   promiseOrFn, regex?, msg?) → Promise, assert.fail(msg).
//   __jsTests              the registered tests, [{name, fn}], in registration order.
//   __jsTestCleanup()      what runs after every test: __bridge.destroy(), __testHost.reset() and
//                          __bridge.setOnline(false) (every test starts offline; also at load).
//   At load, the bridge's and the service's async event functions are wrapped with
//   __testHost.receiveReturnedOutcomes (fake-host.js), so outcomes they return reach
//   __testHost.settled like those settled through __nativeSettle.
//   __runJsTests(onDone)   runs every test sequentially (awaiting returned promises), cleans up
//                          after each, then calls onDone(JSON.stringify([{name, ok, message}])).
(function () {
  'use strict';

  var tests = [];

  globalThis.jsTest = function (name, fn) {
    if (typeof name !== 'string' || typeof fn !== 'function') throw new TypeError('jsTest(name, fn)');
    for (var i = 0; i < tests.length; i++) {
      if (tests[i].name === name) throw new Error('Duplicate test name: ' + name);
    }
    tests.push({ name: name, fn: fn });
  };
  globalThis.__jsTests = tests;

  function preview(value) {
    if (typeof value === 'string') return JSON.stringify(value);
    if (value === undefined) return 'undefined';
    if (typeof value === 'function') return '[Function ' + (value.name || 'anonymous') + ']';
    var seen = [];
    try {
      var text = JSON.stringify(value, function (key, v) {
        if (v === undefined) return '<undefined>';
        if (typeof v === 'object' && v !== null) {
          if (seen.indexOf(v) !== -1) return '[Circular]';
          seen.push(v);
        }
        return v;
      });
      return text.length > 400 ? text.slice(0, 400) + '…' : text;
    } catch (error) {
      return String(value);
    }
  }

  function AssertionError(message) {
    var error = new Error(message);
    error.name = 'AssertionError';
    return error;
  }

  function fail(message, fallback) {
    throw AssertionError(message ? message + ' (' + fallback + ')' : fallback);
  }

  function deepEqual(a, b, pairs) {
    if (Object.is(a, b)) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    for (var p = 0; p < pairs.length; p++) {
      if (pairs[p][0] === a && pairs[p][1] === b) return true;
    }
    pairs.push([a, b]);
    var keysA = Object.keys(a);
    var keysB = Object.keys(b);
    if (keysA.length !== keysB.length) return false;
    for (var i = 0; i < keysA.length; i++) {
      var key = keysA[i];
      if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
      if (!deepEqual(a[key], b[key], pairs)) return false;
    }
    return true;
  }

  function matches(error, pattern) {
    if (pattern === undefined) return true;
    var text = error instanceof Error ? error.message : String(error);
    return pattern.test(text);
  }

  globalThis.assert = {
    ok: function (value, message) {
      if (!value) fail(message, 'expected a truthy value, got ' + preview(value));
    },
    equal: function (actual, expected, message) {
      if (actual !== expected) fail(message, 'expected ' + preview(expected) + ', got ' + preview(actual));
    },
    notEqual: function (actual, unexpected, message) {
      if (actual === unexpected) fail(message, 'expected a value other than ' + preview(unexpected));
    },
    deepEqual: function (actual, expected, message) {
      if (!deepEqual(actual, expected, [])) {
        fail(message, 'expected ' + preview(expected) + ', got ' + preview(actual));
      }
    },
    throws: function (fn, pattern, message) {
      try {
        fn();
      } catch (error) {
        if (!matches(error, pattern)) {
          fail(message, 'error ' + preview(error instanceof Error ? error.message : error) + ' does not match ' + String(pattern));
        }
        return error;
      }
      fail(message, 'expected the function to throw');
    },
    rejects: function (promiseOrFn, pattern, message) {
      var promise;
      try {
        promise = typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn;
      } catch (error) {
        promise = Promise.reject(error);
      }
      return Promise.resolve(promise).then(function () {
        fail(message, 'expected the promise to reject');
      }, function (error) {
        if (!matches(error, pattern)) {
          fail(message, 'rejection ' + preview(error instanceof Error ? error.message : error) + ' does not match ' + String(pattern));
        }
        return error;
      });
    },
    fail: function (message) {
      fail(message, 'explicit failure');
    },
  };

  // Every test starts OFFLINE (the bridge's carried `online`; the fake host's Experience queue,
  // reset with __testHost, starts offline too), so no Experience request leaves unless a test
  // goes online itself (delivery tests set __testHost.experience.online, with
  // __testHost.fetchHandler set).
  function startOffline() {
    if (globalThis.__bridge && typeof globalThis.__bridge.setOnline === 'function') globalThis.__bridge.setOnline(false);
  }

  function cleanup() {
    if (globalThis.__bridge && typeof globalThis.__bridge.destroy === 'function') globalThis.__bridge.destroy();
    if (globalThis.__testHost && typeof globalThis.__testHost.reset === 'function') globalThis.__testHost.reset();
    startOffline();
  }
  globalThis.__jsTestCleanup = cleanup;
  startOffline();

  // The async functions that return an outcome known at once reach the fake host's settle and
  // event recorders as they reach the Swift host's.
  if (globalThis.__testHost && globalThis.__bridge) {
    globalThis.__testHost.receiveReturnedOutcomes(
      globalThis.__bridge, Object.keys(globalThis.__optimization.payloadRules.EVENT_METHODS).concat(['trackCurrentScreen']));
  }
  if (globalThis.__testHost && globalThis.__service) globalThis.__testHost.receiveReturnedOutcomes(globalThis.__service, ['call', 'prepareHandoff', 'commitReplay']);

  function describe(error) {
    if (error instanceof Error) return error.name + ': ' + error.message;
    return String(error);
  }

  function runOne(test) {
    var outcome;
    try {
      outcome = Promise.resolve(test.fn());
    } catch (error) {
      outcome = Promise.reject(error);
    }
    return outcome.then(function () {
      return { name: test.name, ok: true, message: '' };
    }, function (error) {
      return { name: test.name, ok: false, message: describe(error) };
    }).then(function (result) {
      try {
        cleanup();
      } catch (error) {
        result = { name: test.name, ok: false, message: 'cleanup failed: ' + describe(error) };
      }
      return result;
    });
  }

  globalThis.__runJsTests = function (onDone) {
    var results = [];
    var chain = Promise.resolve();
    tests.forEach(function (test) {
      chain = chain.then(function () {
        return runOne(test);
      }).then(function (result) {
        results.push(result);
      });
    });
    chain.then(function () {
      onDone(JSON.stringify(results));
    });
  };
})();
