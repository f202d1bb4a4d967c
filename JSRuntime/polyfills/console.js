// polyfills/console.js
// Contract: `console.log/info/warn/error/debug` forward to the host binding
// `__nativeLog(level, message)` (read at call time): the arguments are joined by one space, strings
// stay as they are, Errors become their stack (or "Name: message"), anything else is JSON-encoded
// safely (cycles → "[Circular]", functions → "[Function name]", bigint → "123n"). A missing or
// throwing `__nativeLog` is ignored: logging never throws.
// Installation: Node's console prints, so it is kept. JavaScriptCore hosted through its C API has a
// built-in `console` whose output goes nowhere, so everywhere except Node this console replaces it.
// The implementation is also published as `__optimization.polyfills.console`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/console.js', {
    provides: ['polyfills.console'],
    globals: ['console'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  // V8 stacks start with "Name: message", JavaScriptCore stacks hold only the frames.
  function describeError(error) {
    var head = String(error.name || 'Error') + ': ' + String(error.message);
    var stack = typeof error.stack === 'string' ? error.stack : '';
    if (stack.length === 0) return head;
    return stack.indexOf(head) === 0 ? stack : head + '\n' + stack;
  }

  function safeJSON(value) {
    var seen = [];
    try {
      var text = JSON.stringify(value, function (key, v) {
        if (typeof v === 'bigint') return v.toString() + 'n';
        if (typeof v === 'function') return '[Function ' + (v.name || 'anonymous') + ']';
        if (typeof v === 'symbol') return v.toString();
        if (v instanceof Error) return describeError(v);
        if (typeof v === 'object' && v !== null) {
          // `seen` holds the ancestors of the value being serialized, so shared (non-cyclic)
          // references print normally and only true cycles are cut.
          while (seen.length > 0 && seen[seen.length - 1] !== this) seen.pop();
          if (seen.indexOf(v) !== -1) return '[Circular]';
          seen.push(v);
        }
        return v;
      });
      return text === undefined ? String(value) : text;
    } catch (error) {
      return String(value);
    }
  }

  function describe(value) {
    if (typeof value === 'string') return value;
    if (value === undefined) return 'undefined';
    if (typeof value === 'bigint') return value.toString() + 'n';
    if (typeof value === 'symbol') return value.toString();
    if (typeof value === 'function') return '[Function ' + (value.name || 'anonymous') + ']';
    if (value instanceof Error) return describeError(value);
    return safeJSON(value);
  }

  function format(args) {
    var parts = [];
    for (var i = 0; i < args.length; i++) parts.push(describe(args[i]));
    return parts.join(' ');
  }

  function method(level) {
    return function () {
      var sink = globalThis.__nativeLog;
      if (typeof sink !== 'function') return;
      try {
        sink(level, format(arguments));
      } catch (error) {
        // A failing sink must not break the caller.
      }
    };
  }

  var consoleImpl = {
    log: method('log'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    debug: method('debug'),
    trace: method('debug'),
  };
  consoleImpl.format = format;
  polyfills.console = consoleImpl;

  var isNode = typeof process === 'object' && process !== null &&
    typeof process.versions === 'object' && process.versions !== null &&
    typeof process.versions.node === 'string';
  if (typeof globalThis.console !== 'object' || globalThis.console === null || !isNode) {
    globalThis.console = consoleImpl;
  }
})();
