// core/settle.js
// Contract: how an async call of either face (`__bridge`, `__service`) reports its outcome to the
// host (JSRuntime/README.md, "Async methods"):
//   __optimization.settle(requestId, promiseOrValue): reports the outcome through
//     `__nativeSettle(requestId, ok, json)` exactly once (see its comment).
//   __optimization.settleReturning(requestId, promiseOrValue, emitted, onUnsent) → string |
//     undefined: the same, except that an outcome known now is RETURNED as the text
//     `[ok, value, emitted]` (the async method returns it to the host: no second crossing)
//     together with the events the call emitted; a thenable settles later through
//     `__nativeSettle` (see its comment).
//   __optimization.messageOf(error) → string: the message an error settles with (an Error's
//     message, a string as is, anything else as JSON or String()).
//   __optimization.codedError(code, message) → Error   an Error whose `code` (one of
//     __optimization.ERROR_CODES) the host reads as a typed failure: a failure settles with the
//     code of an Error that carries a non-empty string `code`, beside its message.
//   __optimization.ERROR_CODES = {experienceEventNotStored, profileIdRequired}   the codes a
//     failure carries:
//     experienceEventNotStored   the host could not take an Experience event (its durable store
//                                failed): the event method rejects with it.
//     profileIdRequired          a service call of an Insights method on a request without a
//                                profile id (service/request-events.js).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/settle.js', {
    provides: ['ERROR_CODES', 'codedError', 'messageOf', 'settle', 'settleReturning'],
    uses: ['host'],
  });
  var host = ns.host;

  var ERROR_CODES = Object.freeze({ experienceEventNotStored: 'experienceEventNotStored', profileIdRequired: 'profileIdRequired' });

  function codedError(code, message) {
    var error = new Error(message);
    error.code = code;
    return error;
  }

  // The code a failure settles with: an Error's non-empty string `code`, else undefined.
  function codeOf(error) {
    var code = error instanceof Error ? error.code : undefined;
    return typeof code === 'string' && code.length > 0 ? code : undefined;
  }

  function messageOf(error) {
    if (error instanceof Error) return error.message;
    if (typeof error === 'string') return error;
    try {
      return JSON.stringify(error) || String(error);
    } catch (stringifyError) {
      return String(error);
    }
  }

  // settle(requestId, promiseOrValue): reports the outcome of an async bridge call through
  // `__nativeSettle(requestId, ok, json, code)` exactly once. A thenable settles when it does
  // (fulfilled: ok true with JSON of the value, undefined as "null"; rejected: ok false with the
  // error message, and the error's code or undefined). An Error instance settles synchronously with ok false (validation errors); any other
  // value settles synchronously with ok true. A value that cannot be serialized settles ok false.
  // A throwing `__nativeSettle` is logged, never retried.
  function settle(requestId, promiseOrValue) {
    var settled = false;
    function finish(ok, text, code) {
      if (settled) return;
      settled = true;
      var fn = globalThis.__nativeSettle;
      if (typeof fn !== 'function') {
        host.log('error', 'Cannot settle request ' + requestId + ': __nativeSettle is not installed.');
        return;
      }
      try {
        fn(requestId, ok, text, code);
      } catch (error) {
        host.log('error', '__nativeSettle threw: ' + messageOf(error));
      }
    }
    function fulfil(value) {
      var text;
      try {
        text = JSON.stringify(value === undefined ? null : value);
      } catch (error) {
        finish(false, messageOf(error));
        return;
      }
      finish(true, text === undefined ? 'null' : text);
    }
    function reject(error) {
      finish(false, messageOf(error), codeOf(error));
    }
    if (promiseOrValue !== null && (typeof promiseOrValue === 'object' || typeof promiseOrValue === 'function') &&
      typeof promiseOrValue.then === 'function') {
      try {
        promiseOrValue.then(fulfil, reject);
      } catch (error) {
        reject(error);
      }
    } else if (promiseOrValue instanceof Error) {
      reject(promiseOrValue);
    } else {
      fulfil(promiseOrValue);
    }
  }

  // settleReturning(requestId, promiseOrValue, emitted): the outcome of an async call that is
  // known now (a plain value or an Error) comes back as the JSON text `[true, value, emitted]` or
  // `[false, message, emitted]` (`[false, message, emitted or null, code]` for an Error with a
  // code), which the async method returns to the host (one crossing, one
  // serialization for the outcome and the events it emitted); `emitted` is the array of events
  // the call published, or undefined. A thenable is handed to settle() and undefined is returned
  // (the caller publishes `emitted` itself). When the combined text cannot be serialized (an
  // emitted event carries a cyclic context) the events are left to the caller: the return value
  // is then `[ok, value]` and `onUnsent(emitted)` publishes them.
  function settleReturning(requestId, promiseOrValue, emitted, onUnsent) {
    if (promiseOrValue !== null && (typeof promiseOrValue === 'object' || typeof promiseOrValue === 'function') &&
      typeof promiseOrValue.then === 'function') {
      if (emitted !== undefined && emitted.length > 0 && onUnsent) onUnsent(emitted);
      settle(requestId, promiseOrValue);
      return undefined;
    }
    var ok = !(promiseOrValue instanceof Error);
    var value = ok ? (promiseOrValue === undefined ? null : promiseOrValue) : messageOf(promiseOrValue);
    var code = ok ? undefined : codeOf(promiseOrValue);
    var events = emitted !== undefined && emitted.length > 0 ? emitted : undefined;
    try {
      if (code !== undefined) return JSON.stringify([ok, value, events === undefined ? null : events, code]);
      return JSON.stringify(events === undefined ? [ok, value] : [ok, value, events]);
    } catch (error) {
      if (events !== undefined && onUnsent) onUnsent(events);
    }
    try {
      return JSON.stringify(code === undefined ? [ok, value] : [ok, value, null, code]);
    } catch (error) {
      return JSON.stringify([false, messageOf(error)]);
    }
  }

  ns.ERROR_CODES = ERROR_CODES;
  ns.codedError = codedError;
  ns.messageOf = messageOf;
  ns.settle = settle;
  ns.settleReturning = settleReturning;
})();
