// tests/polyfills.spec.js — the browser-style polyfills. They are tested through
// __optimization.polyfills, because under Node the platform's own globals stay installed.
(function () {
  'use strict';
  var polyfills = globalThis.__optimization.polyfills;

  jsTest('polyfill timers fire via __timerFired in order, pass extra arguments, and clear', function () {
    var fired = [];
    polyfills.setTimeout(function (label) { fired.push(label); }, 30, 'third');
    polyfills.setTimeout(function (label) { fired.push(label); }, 10, 'first');
    var cancelled = polyfills.setTimeout(function () { fired.push('never'); }, 20);
    polyfills.setTimeout(function () { fired.push('second'); }, 20);
    polyfills.clearTimeout(cancelled);
    polyfills.clearTimeout(undefined);
    var ids = __testHost.pendingTimers().map(function (t) { return t.id; });
    assert.ok(ids.every(function (id) { return Number.isInteger(id) && id > 0; }), 'ids are positive integers');
    __testHost.advance(30);
    assert.deepEqual(fired, ['first', 'second', 'third']);
    assert.throws(function () { polyfills.setTimeout('code()', 1); }, /callback must be a function/);
  });

  jsTest('polyfill setInterval repeats until clearInterval; a zero delay fires on advance(0)', function () {
    var count = 0;
    var id = polyfills.setInterval(function () { count++; }, 50);
    __testHost.advance(175);
    assert.equal(count, 3);
    polyfills.clearInterval(id);
    __testHost.advance(500);
    assert.equal(count, 3);
    var zero = false;
    polyfills.setTimeout(function () { zero = true; }, -5);
    assert.equal(__testHost.pendingTimers()[0].due, __testHost.now(), 'negative delays become 0');
    __testHost.advance(0);
    assert.equal(zero, true);
  });

  jsTest('polyfill URL parses absolute http(s) URLs and UTM parameters', function () {
    var url = new polyfills.URL('HTTPS://Example.TEST:443/landing/page?utm_campaign=Spring%20Sale&utm_source=news+letter&utm_medium=email&utm_term=shoes&utm_content=hero&empty=&flag#top');
    assert.equal(url.protocol, 'https:');
    assert.equal(url.hostname, 'example.test');
    assert.equal(url.port, '');
    assert.equal(url.host, 'example.test');
    assert.equal(url.origin, 'https://example.test');
    assert.equal(url.pathname, '/landing/page');
    assert.equal(url.hash, '#top');
    assert.equal(url.searchParams.get('utm_campaign'), 'Spring Sale');
    assert.equal(url.searchParams.get('utm_source'), 'news letter');
    assert.equal(url.searchParams.get('utm_medium'), 'email');
    assert.equal(url.searchParams.get('utm_term'), 'shoes');
    assert.equal(url.searchParams.get('utm_content'), 'hero');
    assert.equal(url.searchParams.get('empty'), '');
    assert.equal(url.searchParams.get('flag'), '');
    assert.equal(url.searchParams.get('missing'), null);
    assert.equal(url.href, 'https://example.test/landing/page?utm_campaign=Spring%20Sale&utm_source=news+letter&utm_medium=email&utm_term=shoes&utm_content=hero&empty=&flag#top');
    var withPort = new polyfills.URL('http://user:pw@localhost:8080');
    assert.equal(withPort.port, '8080');
    assert.equal(withPort.pathname, '/');
    assert.equal(withPort.username, 'user');
    assert.equal(String(withPort), 'http://user:pw@localhost:8080/');
    ['', 'not a url', 'https://', 'http://exa mple.test/', 'https://host:99999/', '/relative/only'].forEach(function (text) {
      assert.throws(function () { return new polyfills.URL(text); }, /Invalid URL/, JSON.stringify(text));
    });
  });

  jsTest('polyfill URL resolves relative inputs against a base, with or without a trailing slash', function () {
    var URL = polyfills.URL;
    assert.equal(new URL('/v2/organizations/o', 'https://experience.example.test/base').href, 'https://experience.example.test/v2/organizations/o');
    assert.equal(new URL('v2/profiles', 'https://experience.example.test/experience/').href, 'https://experience.example.test/experience/v2/profiles');
    assert.equal(new URL('v2/profiles', 'https://experience.example.test/experience').href, 'https://experience.example.test/v2/profiles');
    assert.equal(new URL('../up?q=1', 'https://h.test/a/b/c').href, 'https://h.test/a/up?q=1');
    assert.equal(new URL('?x=1', 'https://h.test/a/b').href, 'https://h.test/a/b?x=1');
    assert.equal(new URL('//other.test/p', 'https://h.test/a').href, 'https://other.test/p');
    assert.equal(new URL('https://absolute.test/', 'https://h.test/a').href, 'https://absolute.test/');
  });

  jsTest('polyfill URLSearchParams: decoding, encoding, mutation and live search', function () {
    var params = new polyfills.URLSearchParams('?a=1&b=x+y&a=2&c=%E2%9C%93&bad=%E0%A4%A');
    assert.equal(params.get('a'), '1');
    assert.deepEqual(params.getAll('a'), ['1', '2']);
    assert.equal(params.get('b'), 'x y');
    assert.equal(params.get('c'), '✓');
    assert.equal(params.get('bad'), '%E0%A4%A', 'malformed escapes stay as written');
    params.set('a', 'one & two');
    params.delete('bad');
    params.append('d', "it's (ok)~");
    assert.equal(params.toString(), 'a=one+%26+two&b=x+y&c=%E2%9C%93&d=it%27s+%28ok%29%7E');
    assert.deepEqual(Array.from(params.keys()), ['a', 'b', 'c', 'd']);
    assert.equal(new polyfills.URLSearchParams({ x: 1, y: 'z' }).toString(), 'x=1&y=z');
    assert.equal(new polyfills.URLSearchParams([['k', 'v']]).get('k'), 'v');
    var url = new polyfills.URL('https://h.test/p?utm_source=a');
    url.searchParams.set('utm_medium', 'b c');
    assert.equal(url.search, '?utm_source=a&utm_medium=b+c');
    assert.equal(url.href, 'https://h.test/p?utm_source=a&utm_medium=b+c');
  });

  jsTest('polyfill console forwards to __nativeLog with safe formatting', function () {
    var cyclic = { name: 'loop' };
    cyclic.self = cyclic;
    var shared = { v: 1 };
    polyfills.console.log('hello', 42, { a: [1, 2] }, null, undefined);
    polyfills.console.warn(cyclic);
    polyfills.console.info({ left: shared, right: shared });
    polyfills.console.error(new TypeError('bad'));
    polyfills.console.debug(function namedFn() {}, 10n);
    var logs = __testHost.logs;
    assert.deepEqual(logs[0], { level: 'log', message: 'hello 42 {"a":[1,2]} null undefined' });
    assert.deepEqual(logs[1], { level: 'warn', message: '{"name":"loop","self":"[Circular]"}' });
    assert.deepEqual(logs[2], { level: 'info', message: '{"left":{"v":1},"right":{"v":1}}' });
    assert.equal(logs[3].level, 'error');
    assert.ok(logs[3].message.indexOf('TypeError: bad') === 0);
    assert.deepEqual(logs[4], { level: 'debug', message: '[Function namedFn] 10n' });
    delete globalThis.__nativeLog;
    polyfills.console.log('no sink, no throw');
  });

  jsTest('polyfill crypto: randomUUID from the host, getRandomValues fills typed arrays', function () {
    assert.equal(polyfills.crypto.randomUUID(), '00000000-0000-4000-8000-000000000001');
    var bytes = new Uint8Array(64);
    assert.equal(polyfills.crypto.getRandomValues(bytes), bytes);
    assert.ok(bytes.some(function (b) { return b !== 0; }));
    var words = polyfills.crypto.getRandomValues(new Uint32Array(4));
    assert.equal(words.length, 4);
    assert.throws(function () { polyfills.crypto.getRandomValues([1, 2]); }, /typed array/);
    assert.throws(function () { polyfills.crypto.getRandomValues(new Float32Array(2)); }, /typed array/);
    assert.throws(function () { polyfills.crypto.getRandomValues(new Uint8Array(65537)); }, /65536/);
  });

  jsTest('polyfills install their globals only when missing, except where noted', function () {
    var isNode = typeof process === 'object' && process !== null && typeof process.versions === 'object' &&
      process.versions !== null && typeof process.versions.node === 'string';
    if (isNode) {
      assert.notEqual(globalThis.console, polyfills.console, 'Node keeps its console');
      assert.notEqual(globalThis.setTimeout, polyfills.setTimeout, 'Node keeps its timers');
      assert.notEqual(globalThis.URL, polyfills.URL, 'Node keeps its URL');
    } else {
      assert.equal(globalThis.console, polyfills.console, 'the engine console is replaced outside Node');
      assert.equal(globalThis.setTimeout, polyfills.setTimeout);
      assert.equal(globalThis.clearInterval, polyfills.clearInterval);
      assert.equal(globalThis.URL, polyfills.URL);
      assert.equal(globalThis.URLSearchParams, polyfills.URLSearchParams);
      assert.equal(globalThis.crypto.randomUUID, polyfills.crypto.randomUUID);
    }
    assert.equal(typeof globalThis.__timerFired, 'function');
    assert.equal(typeof globalThis.__fetchComplete, 'undefined', 'JavaScript sends no HTTP request: no fetch completion');
    assert.equal(typeof globalThis.setTimeout, 'function');
    assert.equal(typeof globalThis.URL, 'function');
    assert.equal(typeof globalThis.crypto.randomUUID, 'function');
  });
})();
