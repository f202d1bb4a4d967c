// polyfills/fetch.js
// Contract: browser-style `fetch(input, init?)` over the core's host facade
// (`__optimization.host.fetch`, looked up at call time), which sends through the host binding
// `__nativeFetch(url, method, headersJSON, body, requestId)` and settles when the host calls the
// global `__fetchComplete(requestId, status, headersJSON, bodyText, errorMessage)` (installed by
// core/host.js). `input` is a URL string, a URL object or a Request-like `{url, method?, headers?,
// body?}`; `init` may carry `method`, `headers` (plain object, [name, value] pairs or anything with
// `forEach(value, name)`), `body` (string; null/undefined = none; other values are stringified)
// and `signal` (AbortSignal: aborting rejects with the signal's reason, an "AbortError" by
// default, cancels the host's request through `__nativeCancelFetch(requestId)` and ignores any
// later completion).
// Resolves with the Response-like object of core/http-response.js (ok, status, statusText, url,
// headers.get/has/forEach, text(), json(), clone()); rejects with a TypeError on transport
// failure. Installed only when `fetch` is missing (Node keeps its own); the implementation is also
// published as `__optimization.polyfills.fetch`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/fetch.js', {
    provides: ['polyfills.fetch'],
    uses: ['host'],
    globals: ['fetch'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  function fetchImpl(input, init) {
    var options = init !== null && typeof init === 'object' ? init : {};
    var request = input !== null && typeof input === 'object' && typeof input.href !== 'string' &&
      typeof input.url === 'string' ? input : null;
    var url;
    if (typeof input === 'string') url = input;
    else if (input !== null && typeof input === 'object' && typeof input.href === 'string') url = input.href;
    else if (request !== null) url = request.url;
    else url = String(input);

    var body = options.body !== undefined ? options.body : request !== null ? request.body : undefined;
    return globalThis.__optimization.host.fetch(url, {
      method: options.method || (request !== null && request.method) || 'GET',
      headers: options.headers !== undefined ? options.headers : request !== null ? request.headers : undefined,
      body: body === undefined || body === null ? null : String(body),
      signal: options.signal,
    });
  }

  polyfills.fetch = fetchImpl;
  if (typeof globalThis.fetch !== 'function') globalThis.fetch = fetchImpl;
})();
