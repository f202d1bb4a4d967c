// core/http-response.js
// Contract: `__optimization.createResponse({url, status, headers, statusText?})` builds a
// Response-like view of the status line and headers of an answer the host delivered
// (core/experience-api.js reads its status, reason phrase and headers; it reads the body text
// itself). `headers` is a plain object or [name, value] pairs; names are matched
// case-insensitively. The object has `ok` (2xx), `status`, `statusText` (from the argument, else
// the standard reason phrase for common codes, else ""), `url`, `headers.get(name)` (value or
// null), `headers.has`, `headers.forEach(fn(value, name, headers))` (lower-case names, in
// insertion order) and `headers.entries()`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/http-response.js', { provides: ['createResponse'] });

  var REASON_PHRASES = {
    200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 301: 'Moved Permanently',
    302: 'Found', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
    404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout', 409: 'Conflict',
    413: 'Payload Too Large', 422: 'Unprocessable Entity', 429: 'Too Many Requests',
    500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway',
    503: 'Service Unavailable', 504: 'Gateway Timeout',
  };

  function ResponseHeaders(source) {
    this._map = new Map();
    var map = this._map;
    if (Array.isArray(source)) {
      source.forEach(function (pair) {
        if (Array.isArray(pair) && pair.length === 2) map.set(String(pair[0]).toLowerCase(), String(pair[1]));
      });
    } else if (source !== null && typeof source === 'object') {
      Object.keys(source).forEach(function (name) {
        map.set(name.toLowerCase(), String(source[name]));
      });
    }
  }
  ResponseHeaders.prototype.get = function (name) {
    var value = this._map.get(String(name).toLowerCase());
    return value === undefined ? null : value;
  };
  ResponseHeaders.prototype.has = function (name) {
    return this._map.has(String(name).toLowerCase());
  };
  ResponseHeaders.prototype.forEach = function (callback, thisArg) {
    var self = this;
    this._map.forEach(function (value, name) {
      callback.call(thisArg, value, name, self);
    });
  };
  ResponseHeaders.prototype.entries = function () {
    return this._map.entries();
  };
  ResponseHeaders.prototype[Symbol.iterator] = ResponseHeaders.prototype.entries;

  function HttpResponse(init, headers) {
    this.url = init.url === undefined ? '' : String(init.url);
    this.status = init.status;
    this.statusText = typeof init.statusText === 'string' ? init.statusText : REASON_PHRASES[init.status] || '';
    this.ok = init.status >= 200 && init.status <= 299;
    this.headers = headers;
  }

  ns.createResponse = function createResponse(init) {
    var status = Number(init.status) || 0;
    return new HttpResponse({
      url: init.url,
      status: status,
      statusText: init.statusText,
    }, new ResponseHeaders(init.headers));
  };
})();
