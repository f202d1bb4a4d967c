// polyfills/abort-controller.js
// Contract: minimal `AbortController` / `AbortSignal`. `controller.signal` has `aborted`, `reason`,
// `onabort`, `addEventListener("abort", fn, {once}?)`, `removeEventListener`, `throwIfAborted()`.
// `controller.abort(reason?)` is idempotent; the default reason is an Error named "AbortError"
// ("This operation was aborted"); listeners run synchronously, in registration order, each once,
// and a throwing listener does not stop the others. `AbortSignal.abort(reason?)` returns an
// aborted signal; `AbortSignal.timeout(ms)` aborts with a "TimeoutError" on the host facade's
// clock (`__optimization.host.setTimeout`). Installed only when missing (Node keeps its own);
// also published as `__optimization.polyfills.{AbortController, AbortSignal}`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/abort-controller.js', {
    provides: ['polyfills.AbortController', 'polyfills.AbortSignal'],
    uses: ['host'],
    globals: ['AbortController', 'AbortSignal'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  function namedError(name, message) {
    var error = new Error(message);
    error.name = name;
    return error;
  }

  function AbortSignal() {
    this.aborted = false;
    this.reason = undefined;
    this.onabort = null;
    this._listeners = [];
  }

  AbortSignal.prototype.addEventListener = function (type, listener, options) {
    if (type !== 'abort' || typeof listener !== 'function') return;
    for (var i = 0; i < this._listeners.length; i++) if (this._listeners[i].fn === listener) return;
    var once = options !== null && typeof options === 'object' && options.once === true;
    this._listeners.push({ fn: listener, once: once });
  };

  AbortSignal.prototype.removeEventListener = function (type, listener) {
    if (type !== 'abort') return;
    this._listeners = this._listeners.filter(function (l) { return l.fn !== listener; });
  };

  AbortSignal.prototype.throwIfAborted = function () {
    if (this.aborted) throw this.reason;
  };

  AbortSignal.prototype._abort = function (reason) {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? namedError('AbortError', 'This operation was aborted') : reason;
    var event = { type: 'abort', target: this };
    var listeners = this._listeners;
    this._listeners = [];
    var all = typeof this.onabort === 'function' ? [{ fn: this.onabort }].concat(listeners) : listeners;
    for (var i = 0; i < all.length; i++) {
      try {
        all[i].fn.call(this, event);
      } catch (error) {
        // One failing listener must not keep the others from running.
      }
    }
  };

  AbortSignal.abort = function (reason) {
    var signal = new AbortSignal();
    signal._abort(reason);
    return signal;
  };

  AbortSignal.timeout = function (ms) {
    var signal = new AbortSignal();
    globalThis.__optimization.host.setTimeout(function () {
      signal._abort(namedError('TimeoutError', 'The operation timed out.'));
    }, ms);
    return signal;
  };

  function AbortController() {
    this.signal = new AbortSignal();
  }

  AbortController.prototype.abort = function (reason) {
    this.signal._abort(reason);
  };

  polyfills.AbortController = AbortController;
  polyfills.AbortSignal = AbortSignal;
  if (typeof globalThis.AbortController !== 'function') globalThis.AbortController = AbortController;
  if (typeof globalThis.AbortSignal !== 'function') globalThis.AbortSignal = AbortSignal;
})();
