// core/host.js
// Contract: `__optimization.host`, the only way core code reaches the host. Every binding
// (`globalThis.__native*`) is read at call time, never cached, so a test can swap it.
//   now() → number                 ms since the epoch from `__nativeNow()` (the injectable clock).
//                                  Core code never calls Date.now() or new Date() without an argument.
//   setTimeout(fn, ms) → id        one-shot timer; ids are positive integers from one counter shared
//   setInterval(fn, ms) → id       with setInterval (an interval re-arms the same id after each fire).
//   clearTimeout(id)               cancels either kind; unknown ids are ignored.
//   randomUUID() → string          from `__nativeRandomUUID(count)`, which answers `count` UUIDs
//                                  (36 characters each) in one string; they are drawn 32 at a
//                                  time and handed out in order (a binding that answers one UUID
//                                  per call works too).
//   log(level, message)            level ∈ fatal 60, error 50, warn 40, info 30, debug 20, log 10
//                                  (unknown levels count as "log"); dropped below the threshold,
//                                  otherwise sent to `__nativeLog` ("fatal" is sent as "error").
//                                  Never throws.
//   isLogEnabled(level) → boolean  lets hot paths skip building messages.
//   setLogLevel(level) / getLogLevel()   threshold, default "error"; an unknown name throws.
// It also installs (unconditionally) the global the host calls back, `__timerFired` (object
// `globalThis` of JSRuntime/bridge-contract.json, with `isLogEnabled`, the function of `host` the
// Swift host calls). JavaScript sends no HTTP request: the host delivers every one.
// A missing binding makes now()/randomUUID()/setTimeout() throw an Error naming it.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/host.js', {
    provides: ['host'],
    globals: ['__timerFired'],
  });

  var LOG_LEVELS = Object.freeze({ fatal: 60, error: 50, warn: 40, info: 30, debug: 20, log: 10 });
  var DEFAULT_LOG_LEVEL = 'error';
  var MAX_DELAY_MS = 2147483647;

  var logLevel = DEFAULT_LOG_LEVEL;
  var logThreshold = LOG_LEVELS[DEFAULT_LOG_LEVEL];

  function missingBinding(name) {
    return new Error('The host binding ' + name + ' is not installed.');
  }

  // V8 stacks start with "Name: message", JavaScriptCore stacks hold only the frames.
  function describeError(error) {
    if (!(error instanceof Error)) return String(error);
    var head = error.name + ': ' + error.message;
    var stack = typeof error.stack === 'string' ? error.stack : '';
    if (stack.length === 0) return head;
    return stack.indexOf(head) === 0 ? stack : head + '\n' + stack;
  }

  // ---- clock, ids -------------------------------------------------------------------------------

  // Bindings are read as plain global properties on every call (fast, and swappable by tests).
  function now() {
    var fn = globalThis.__nativeNow;
    if (typeof fn !== 'function') throw missingBinding('__nativeNow');
    return Number(fn());
  }

  // UUIDs drawn from the host but not handed out yet, in order (one crossing per 32 ids).
  var UUID_BATCH = 32;
  var UUID_LENGTH = 36;
  var pooledUUIDs = '';
  var pooledOffset = 0;

  function randomUUID() {
    if (pooledOffset >= pooledUUIDs.length) {
      var fn = globalThis.__nativeRandomUUID;
      if (typeof fn !== 'function') throw missingBinding('__nativeRandomUUID');
      var drawn = String(fn(UUID_BATCH));
      if (drawn.length <= UUID_LENGTH || drawn.length % UUID_LENGTH !== 0) return drawn;
      pooledUUIDs = drawn;
      pooledOffset = 0;
    }
    var id = pooledUUIDs.substr(pooledOffset, UUID_LENGTH);
    pooledOffset += UUID_LENGTH;
    return id;
  }

  function armTimer(id, delay) {
    var fn = globalThis.__nativeSetTimeout;
    if (typeof fn !== 'function') throw missingBinding('__nativeSetTimeout');
    fn(id, delay);
  }

  // ---- logging ----------------------------------------------------------------------------------

  function levelValue(level) {
    return Object.prototype.hasOwnProperty.call(LOG_LEVELS, level) ? LOG_LEVELS[level] : LOG_LEVELS.log;
  }

  function isLogEnabled(level) {
    return levelValue(level) >= logThreshold;
  }

  function log(level, message) {
    if (levelValue(level) < logThreshold) return;
    var sink = globalThis.__nativeLog;
    if (typeof sink !== 'function') return;
    var nativeLevel = level === 'fatal' ? 'error' : Object.prototype.hasOwnProperty.call(LOG_LEVELS, level) ? level : 'log';
    try {
      sink(nativeLevel, typeof message === 'string' ? message : String(message));
    } catch (error) {
      // Logging never throws.
    }
  }

  function setLogLevel(level) {
    if (typeof level !== 'string' || !Object.prototype.hasOwnProperty.call(LOG_LEVELS, level)) {
      throw new Error('logLevel must be one of fatal, error, warn, info, debug, log, received "' + String(level) + '".');
    }
    logLevel = level;
    logThreshold = LOG_LEVELS[level];
  }

  function getLogLevel() {
    return logLevel;
  }

  // ---- timers -----------------------------------------------------------------------------------

  var timers = new Map();
  var nextTimerId = 1;

  function normalizeDelay(ms) {
    var delay = Number(ms);
    if (!(delay > 0)) return 0;
    return delay > MAX_DELAY_MS ? MAX_DELAY_MS : Math.floor(delay);
  }

  function schedule(fn, ms, repeat) {
    if (typeof fn !== 'function') throw new TypeError('Timer callback must be a function.');
    var id = nextTimerId++;
    var delay = normalizeDelay(ms);
    timers.set(id, { fn: fn, delay: delay, repeat: repeat });
    try {
      armTimer(id, delay);
    } catch (error) {
      timers.delete(id);
      throw error;
    }
    return id;
  }

  function setTimeout(fn, ms) {
    return schedule(fn, ms, false);
  }

  function setInterval(fn, ms) {
    return schedule(fn, ms, true);
  }

  function clearTimeout(id) {
    var key = Number(id);
    if (!timers.delete(key)) return;
    var cancel = globalThis.__nativeClearTimeout;
    if (typeof cancel === 'function') cancel(key);
  }

  function timerFired(id) {
    var key = Number(id);
    var timer = timers.get(key);
    if (timer === undefined) return;
    if (timer.repeat) {
      // Re-arm first so the callback can cancel its own interval.
      try {
        armTimer(key, timer.delay);
      } catch (error) {
        timers.delete(key);
        log('error', 'Could not re-arm interval ' + key + ': ' + describeError(error));
      }
    } else {
      timers.delete(key);
    }
    try {
      timer.fn();
    } catch (error) {
      log('error', 'Timer callback threw: ' + describeError(error));
    }
  }

  ns.host = {
    now: now,
    randomUUID: randomUUID,
    log: log,
    isLogEnabled: isLogEnabled,
    setLogLevel: setLogLevel,
    getLogLevel: getLogLevel,
    LOG_LEVELS: LOG_LEVELS,
    DEFAULT_LOG_LEVEL: DEFAULT_LOG_LEVEL,
    setTimeout: setTimeout,
    setInterval: setInterval,
    clearTimeout: clearTimeout,
  };

  globalThis.__timerFired = timerFired;
})();
