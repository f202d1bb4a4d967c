// core/api-response.js
// Contract: `__optimization.apiResponse`, what the Experience and Insights clients share:
// URL joining and the classification of every HTTP answer into a delivery
// outcome. Pure functions; nothing here sends or logs.
//   joinUrl(base, path) → string      trailing slashes of `base` and leading slashes of `path` are
//                                     trimmed and exactly one "/" is put between them, so a base
//                                     works with or without a trailing slash.
//   classifyStatus(status) → "success" (2xx) | "disable" (401, 403, 404: wrong client id,
//                                     environment or base URL — retrying cannot help) | "drop"
//                                     (any other 4xx: the batch itself is refused) | "retry" (408,
//                                     429, 5xx and anything else, e.g. an unfollowed 3xx).
//   parseRetryAfter(value, now) → ms | undefined   a `Retry-After` header: delay-seconds ("120")
//                                     or an HTTP date (relative to `now`, never negative).
//   isTimeout(error) → boolean        an AbortError, or a transport error whose message starts
//                                     with "request timed out" (the native transport's
//                                     timeout).
//   outcomeOfStatus(apiName, response, now) → outcome for a non-2xx response (see below).
//   outcomeOfError(apiName, error) → {ok: false, kind: "retry", status: 0, timeout, reason}
// Outcomes: {ok: true, status, …} | {ok: false, kind: "retry"|"drop"|"disable"|"invalid", status,
// reason, timeout?: boolean, retryAfterMs?: number}. `retryAfterMs` is set only for 429/503 with a
// parsable Retry-After. Reasons name the API and the status, never the URL (paths carry profile
// ids, and visitor data is logged at debug only).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/api-response.js', { provides: ['apiResponse'] });

  function joinUrl(base, path) {
    var left = String(base);
    var right = String(path);
    while (left.length > 0 && left.charAt(left.length - 1) === '/') left = left.slice(0, -1);
    while (right.length > 0 && right.charAt(0) === '/') right = right.slice(1);
    return left + '/' + right;
  }

  function classifyStatus(status) {
    if (status >= 200 && status <= 299) return 'success';
    if (status === 401 || status === 403 || status === 404) return 'disable';
    if (status === 408 || status === 429) return 'retry';
    if (status >= 400 && status <= 499) return 'drop';
    return 'retry';
  }

  function parseRetryAfter(value, now) {
    if (typeof value !== 'string') return undefined;
    var text = value.trim();
    if (text.length === 0) return undefined;
    if (/^\d+$/.test(text)) return Number(text) * 1000;
    var date = Date.parse(text);
    if (!isFinite(date)) return undefined;
    var delay = date - now;
    return delay > 0 ? delay : 0;
  }

  function messageOf(error) {
    if (error instanceof Error) return error.message;
    return String(error);
  }

  function isTimeout(error) {
    if (error !== null && typeof error === 'object' && error.name === 'AbortError') return true;
    return /^request timed out/i.test(messageOf(error));
  }

  function statusLabel(response) {
    return response.statusText ? response.status + ' ' + response.statusText : String(response.status);
  }

  function outcomeOfStatus(apiName, response, now) {
    var status = response.status;
    var kind = classifyStatus(status);
    var outcome = { ok: false, kind: kind, status: status, reason: apiName + ' API answered ' + statusLabel(response) };
    if (kind === 'success') return { ok: true, status: status };
    if (status === 429 || status === 503) {
      var header = response.headers && typeof response.headers.get === 'function' ? response.headers.get('retry-after') : null;
      var retryAfterMs = parseRetryAfter(header === null ? undefined : header, now);
      if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
    }
    return outcome;
  }

  function outcomeOfError(apiName, error) {
    var timeout = isTimeout(error);
    return {
      ok: false,
      kind: 'retry',
      status: 0,
      timeout: timeout,
      reason: apiName + ' API request failed: ' + messageOf(error),
    };
  }

  ns.apiResponse = Object.freeze({
    joinUrl: joinUrl,
    classifyStatus: classifyStatus,
    parseRetryAfter: parseRetryAfter,
    isTimeout: isTimeout,
    outcomeOfStatus: outcomeOfStatus,
    outcomeOfError: outcomeOfError,
  });
})();
