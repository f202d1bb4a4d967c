// polyfills/timers.js
// Contract: browser-style `setTimeout(fn, ms, ...args)`, `clearTimeout(id)`,
// `setInterval(fn, ms, ...args)`, `clearInterval(id)` over the core's host facade
// (`__optimization.host`, looked up at call time), which owns the one timer-id space and drives
// `__nativeSetTimeout`/`__nativeClearTimeout`; the host fires timers through the global
// `__timerFired(id)` that core/host.js installs. Ids are positive integers; clearTimeout and
// clearInterval are interchangeable; unknown ids are ignored; a non-function callback throws a
// TypeError. Installed per global only when missing (Node keeps its own timers); the
// implementations are also published as `__optimization.polyfills.{setTimeout, …}`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/timers.js', {
    provides: [
      'polyfills.clearInterval', 'polyfills.clearTimeout', 'polyfills.setInterval',
      'polyfills.setTimeout',
    ],
    uses: ['host'],
    globals: ['clearInterval', 'clearTimeout', 'setInterval', 'setTimeout'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  function host() {
    return globalThis.__optimization.host;
  }

  function bind(name, fn, extraArgs) {
    if (typeof fn !== 'function') throw new TypeError(name + ' callback must be a function.');
    if (extraArgs.length === 0) return fn;
    return function () {
      fn.apply(undefined, extraArgs);
    };
  }

  function setTimeoutImpl(fn, ms) {
    var extra = Array.prototype.slice.call(arguments, 2);
    return host().setTimeout(bind('setTimeout', fn, extra), ms);
  }

  function setIntervalImpl(fn, ms) {
    var extra = Array.prototype.slice.call(arguments, 2);
    return host().setInterval(bind('setInterval', fn, extra), ms);
  }

  function clearTimerImpl(id) {
    if (id === undefined || id === null) return;
    host().clearTimeout(id);
  }

  polyfills.setTimeout = setTimeoutImpl;
  polyfills.setInterval = setIntervalImpl;
  polyfills.clearTimeout = clearTimerImpl;
  polyfills.clearInterval = clearTimerImpl;

  if (typeof globalThis.setTimeout !== 'function') globalThis.setTimeout = setTimeoutImpl;
  if (typeof globalThis.clearTimeout !== 'function') globalThis.clearTimeout = clearTimerImpl;
  if (typeof globalThis.setInterval !== 'function') globalThis.setInterval = setIntervalImpl;
  if (typeof globalThis.clearInterval !== 'function') globalThis.clearInterval = clearTimerImpl;
})();
