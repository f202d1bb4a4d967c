// polyfills/url.js
// Contract: minimal WHATWG-style `URL` and `URLSearchParams`, enough for the core (UTM parameters
// of page URLs, joining API base URLs). `new URL(input, base?)` parses absolute
// `scheme://[user[:password]@]host[:port][/path][?query][#fragment]` URLs (http and https need a
// host); with `base`, relative inputs ("/p", "p", "?q", "#h", "//host/p") are resolved against it
// with "."/".." segments removed. Scheme and host are lower-cased, default ports (http 80,
// https 443) dropped, an empty http(s) path becomes "/". Unparseable input throws a TypeError.
// Properties: href, protocol, username, password, host, hostname, port, pathname, search, hash,
// origin, searchParams (live: changing it rewrites `search`); toString()/toJSON() give href.
// `URLSearchParams` accepts a query string (leading "?" ignored), a record, [name, value] pairs or
// another URLSearchParams; decoding turns "+" into a space and percent-decodes UTF-8 (malformed
// escapes stay as written); toString() emits application/x-www-form-urlencoded. Each global is
// installed only when missing (Node keeps its own); the classes are also published as
// `__optimization.polyfills.{URL, URLSearchParams}`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/url.js', {
    provides: ['polyfills.URL', 'polyfills.URLSearchParams'],
    globals: ['URL', 'URLSearchParams'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  var ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.\-]*):\/\/([^\/?#]*)([^?#]*)(\?[^#]*)?(#[\s\S]*)?$/;
  var SCHEME_ONLY = /^[A-Za-z][A-Za-z0-9+.\-]*:/;
  var DEFAULT_PORTS = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };
  var SPECIAL = { 'http:': true, 'https:': true, 'ws:': true, 'wss:': true, 'ftp:': true };

  function decodeComponent(text) {
    var spaced = text.replace(/\+/g, ' ');
    try {
      return decodeURIComponent(spaced);
    } catch (error) {
      return spaced.replace(/(?:%[0-9A-Fa-f]{2})+/g, function (run) {
        try {
          return decodeURIComponent(run);
        } catch (innerError) {
          return run;
        }
      });
    }
  }

  function encodeComponent(text) {
    return encodeURIComponent(text)
      .replace(/[!'()~]/g, function (c) {
        return '%' + c.charCodeAt(0).toString(16).toUpperCase();
      })
      .replace(/%20/g, '+');
  }

  function parseQuery(query) {
    var pairs = [];
    var text = query.charAt(0) === '?' ? query.slice(1) : query;
    if (text.length === 0) return pairs;
    var parts = text.split('&');
    for (var i = 0; i < parts.length; i++) {
      var part = parts[i];
      if (part.length === 0) continue;
      var eq = part.indexOf('=');
      var name = eq === -1 ? part : part.slice(0, eq);
      var value = eq === -1 ? '' : part.slice(eq + 1);
      pairs.push([decodeComponent(name), decodeComponent(value)]);
    }
    return pairs;
  }

  function URLSearchParams(init) {
    if (!(this instanceof URLSearchParams)) {
      throw new TypeError("Constructor URLSearchParams requires 'new'.");
    }
    this._pairs = [];
    this._onChange = null;
    if (init === undefined || init === null) return;
    if (init instanceof URLSearchParams) {
      this._pairs = init._pairs.map(function (p) { return [p[0], p[1]]; });
    } else if (typeof init === 'string') {
      this._pairs = parseQuery(init);
    } else if (typeof init === 'object' && typeof init[Symbol.iterator] === 'function') {
      var self = this;
      Array.from(init).forEach(function (pair) {
        if (pair === null || typeof pair !== 'object' || pair.length !== 2) {
          throw new TypeError('URLSearchParams pairs must have exactly two items.');
        }
        self._pairs.push([String(pair[0]), String(pair[1])]);
      });
    } else if (typeof init === 'object') {
      var keys = Object.keys(init);
      for (var i = 0; i < keys.length; i++) this._pairs.push([keys[i], String(init[keys[i]])]);
    } else {
      this._pairs = parseQuery(String(init));
    }
  }

  URLSearchParams.prototype._changed = function () {
    if (this._onChange !== null) this._onChange(this.toString());
  };
  URLSearchParams.prototype.append = function (name, value) {
    this._pairs.push([String(name), String(value)]);
    this._changed();
  };
  URLSearchParams.prototype.delete = function (name) {
    var key = String(name);
    this._pairs = this._pairs.filter(function (p) { return p[0] !== key; });
    this._changed();
  };
  URLSearchParams.prototype.get = function (name) {
    var key = String(name);
    for (var i = 0; i < this._pairs.length; i++) if (this._pairs[i][0] === key) return this._pairs[i][1];
    return null;
  };
  URLSearchParams.prototype.getAll = function (name) {
    var key = String(name);
    return this._pairs.filter(function (p) { return p[0] === key; }).map(function (p) { return p[1]; });
  };
  URLSearchParams.prototype.has = function (name) {
    return this.get(name) !== null;
  };
  URLSearchParams.prototype.set = function (name, value) {
    var key = String(name);
    var text = String(value);
    var found = false;
    this._pairs = this._pairs.filter(function (p) {
      if (p[0] !== key) return true;
      if (found) return false;
      found = true;
      p[1] = text;
      return true;
    });
    if (!found) this._pairs.push([key, text]);
    this._changed();
  };
  URLSearchParams.prototype.sort = function () {
    var indexed = this._pairs.map(function (p, i) { return [p, i]; });
    indexed.sort(function (a, b) {
      if (a[0][0] < b[0][0]) return -1;
      if (a[0][0] > b[0][0]) return 1;
      return a[1] - b[1];
    });
    this._pairs = indexed.map(function (x) { return x[0]; });
    this._changed();
  };
  URLSearchParams.prototype.forEach = function (callback, thisArg) {
    var snapshot = this._pairs.slice();
    for (var i = 0; i < snapshot.length; i++) callback.call(thisArg, snapshot[i][1], snapshot[i][0], this);
  };
  URLSearchParams.prototype.entries = function () {
    return this._pairs.map(function (p) { return [p[0], p[1]]; })[Symbol.iterator]();
  };
  URLSearchParams.prototype.keys = function () {
    return this._pairs.map(function (p) { return p[0]; })[Symbol.iterator]();
  };
  URLSearchParams.prototype.values = function () {
    return this._pairs.map(function (p) { return p[1]; })[Symbol.iterator]();
  };
  URLSearchParams.prototype[Symbol.iterator] = URLSearchParams.prototype.entries;
  URLSearchParams.prototype.toString = function () {
    return this._pairs.map(function (p) {
      return encodeComponent(p[0]) + '=' + encodeComponent(p[1]);
    }).join('&');
  };
  Object.defineProperty(URLSearchParams.prototype, 'size', {
    get: function () { return this._pairs.length; },
  });

  function removeDotSegments(path) {
    var input = path.split('/');
    var output = [];
    for (var i = 0; i < input.length; i++) {
      var segment = input[i];
      var last = i === input.length - 1;
      if (segment === '.') {
        if (last) output.push('');
      } else if (segment === '..') {
        if (output.length > 1) output.pop();
        if (last) output.push('');
      } else {
        output.push(segment);
      }
    }
    return output.join('/');
  }

  function parseAbsolute(text) {
    var match = ABSOLUTE.exec(text);
    if (match === null) return null;
    var protocol = match[1].toLowerCase() + ':';
    var authority = match[2];
    var username = '';
    var password = '';
    var at = authority.lastIndexOf('@');
    if (at !== -1) {
      var userinfo = authority.slice(0, at);
      authority = authority.slice(at + 1);
      var colon = userinfo.indexOf(':');
      username = colon === -1 ? userinfo : userinfo.slice(0, colon);
      password = colon === -1 ? '' : userinfo.slice(colon + 1);
    }
    var hostname = authority;
    var port = '';
    var portMatch = /^(\[[^\]]*\]|[^:]*)(?::([^:]*))?$/.exec(authority);
    if (portMatch === null) return null;
    hostname = portMatch[1].toLowerCase();
    if (portMatch[2] !== undefined && portMatch[2] !== '') {
      if (!/^[0-9]+$/.test(portMatch[2]) || Number(portMatch[2]) > 65535) return null;
      port = String(Number(portMatch[2]));
    }
    if (/[\s<>\\^|%]/.test(hostname)) return null;
    if (SPECIAL[protocol] && hostname.length === 0) return null;
    if (DEFAULT_PORTS[protocol] === port) port = '';
    var pathname = match[3];
    if (pathname.length === 0 && SPECIAL[protocol]) pathname = '/';
    if (pathname.length > 0) pathname = removeDotSegments(pathname);
    var search = match[4] !== undefined && match[4] !== '?' ? match[4] : '';
    var hash = match[5] !== undefined && match[5] !== '#' ? match[5] : '';
    return {
      protocol: protocol, username: username, password: password, hostname: hostname,
      port: port, pathname: pathname, search: search, hash: hash,
    };
  }

  function resolveRelative(text, base) {
    var origin = base.protocol + '//' + authorityOf(base);
    if (text.slice(0, 2) === '//') return parseAbsolute(base.protocol + text);
    if (text.length === 0) return parseAbsolute(origin + base.pathname + base.search);
    if (text.charAt(0) === '/') return parseAbsolute(origin + text);
    if (text.charAt(0) === '?') return parseAbsolute(origin + base.pathname + text);
    if (text.charAt(0) === '#') return parseAbsolute(origin + base.pathname + base.search + text);
    var directory = base.pathname.slice(0, base.pathname.lastIndexOf('/') + 1) || '/';
    return parseAbsolute(origin + directory + text);
  }

  function authorityOf(parts) {
    var userinfo = parts.username.length > 0 || parts.password.length > 0
      ? parts.username + (parts.password.length > 0 ? ':' + parts.password : '') + '@'
      : '';
    return userinfo + parts.hostname + (parts.port.length > 0 ? ':' + parts.port : '');
  }

  function URL(input, base) {
    if (!(this instanceof URL)) throw new TypeError("Constructor URL requires 'new'.");
    var text = String(input instanceof URL ? input.href : input).replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
    var parts = parseAbsolute(text);
    if (parts === null && base !== undefined && !SCHEME_ONLY.test(text)) {
      var baseParts = base instanceof URL ? base._parts : parseAbsolute(String(base).trim());
      if (baseParts !== null) parts = resolveRelative(text, baseParts);
    }
    if (parts === null) throw new TypeError('Invalid URL: ' + String(input));
    this._parts = parts;
    var self = this;
    this.searchParams = new URLSearchParams(parts.search);
    this.searchParams._onChange = function (query) {
      self._parts.search = query.length > 0 ? '?' + query : '';
    };
  }

  function accessor(name, getter) {
    Object.defineProperty(URL.prototype, name, { get: getter, enumerable: true });
  }
  accessor('protocol', function () { return this._parts.protocol; });
  accessor('username', function () { return this._parts.username; });
  accessor('password', function () { return this._parts.password; });
  accessor('hostname', function () { return this._parts.hostname; });
  accessor('port', function () { return this._parts.port; });
  accessor('pathname', function () { return this._parts.pathname; });
  accessor('search', function () { return this._parts.search; });
  accessor('hash', function () { return this._parts.hash; });
  accessor('host', function () {
    return this._parts.hostname + (this._parts.port.length > 0 ? ':' + this._parts.port : '');
  });
  accessor('origin', function () {
    return SPECIAL[this._parts.protocol] ? this._parts.protocol + '//' + this.host : 'null';
  });
  accessor('href', function () {
    var p = this._parts;
    return p.protocol + '//' + authorityOf(p) + p.pathname + p.search + p.hash;
  });
  URL.prototype.toString = function () { return this.href; };
  URL.prototype.toJSON = function () { return this.href; };

  polyfills.URL = URL;
  polyfills.URLSearchParams = URLSearchParams;
  if (typeof globalThis.URL !== 'function') globalThis.URL = URL;
  if (typeof globalThis.URLSearchParams !== 'function') globalThis.URLSearchParams = URLSearchParams;
})();
