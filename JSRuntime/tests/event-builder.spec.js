// tests/event-builder.spec.js — event builders.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var UUID_1 = '00000000-0000-4000-8000-000000000001';
  var START_ISO = '2026-01-01T00:00:00.000Z';
  var DEFAULT_PAGE = { path: '', query: {}, referrer: '', search: '', title: '', url: '' };

  // A builder (channel "mobile", library ios 0.0.1) unless overridden.
  function builder(extra) {
    return ns.createEventBuilder(Object.assign({
      channel: 'mobile',
      library: { name: '@contentful/optimization-ios', version: '0.0.1' },
      getConsent: function () { return undefined; },
    }, extra || {}));
  }

  var UTM_URL = 'https://example.test/?utm_campaign=Spring%20Sale&utm_source=newsletter&utm_medium=email&utm_term=shoes&utm_content=hero';

  jsTest('campaign comes from the UTM parameters of the page URL, never the referrer', function () {
    var event = builder().buildTrack({
      event: 'cta_clicked',
      page: { path: '/', query: {}, referrer: 'https://referrer.test/?utm_campaign=Ignored', search: '', url: UTM_URL },
    });
    assert.deepEqual(event.context.campaign, { name: 'Spring Sale', source: 'newsletter', medium: 'email', term: 'shoes', content: 'hero' });
  });

  jsTest('an explicit campaign wins over UTM parameters', function () {
    var event = builder().buildTrack({
      event: 'cta_clicked', campaign: { name: 'Explicit campaign' },
      page: { path: '/', query: {}, referrer: '', search: '', url: UTM_URL },
    });
    assert.deepEqual(event.context.campaign, { name: 'Explicit campaign' });
  });

  jsTest('an empty page URL gives the campaign {} even with UTM parameters in the referrer', function () {
    var event = builder().buildTrack({
      event: 'x', page: { path: '', query: {}, referrer: 'https://r.test/?utm_source=ref', search: '', url: '' },
    });
    assert.deepEqual(event.context.campaign, {});
  });

  jsTest('campaign: present-but-empty parameters give "", unparseable URLs give {}', function () {
    var campaignFromUrl = ns.eventBuilder.campaignFromUrl;
    assert.deepEqual(campaignFromUrl('https://a.test/?utm_source=&utm_medium=cpc'), { source: '', medium: 'cpc' });
    assert.deepEqual(campaignFromUrl('not a url'), {});
    assert.deepEqual(campaignFromUrl('/relative?utm_source=x'), {});
    assert.deepEqual(campaignFromUrl(undefined), {});
    assert.deepEqual(campaignFromUrl('https://a.test/?utm_campaign=a+b'), { name: 'a b' });
  });

  jsTest('campaign: a URL without a query gives {} however it reads, a fragment included', function () {
    var campaignFromUrl = ns.eventBuilder.campaignFromUrl;
    assert.deepEqual(campaignFromUrl('https://a.test/utm_source=x#utm_medium=y'), {});
    assert.deepEqual(campaignFromUrl('https://a.test/#?utm_source=x'), {}, 'a "?" in the fragment starts no query');
    assert.deepEqual(campaignFromUrl('https://a.test/p?x=1#?utm_source=y'), {});
    assert.deepEqual(campaignFromUrl('https://a.test/p?%75tm_source=encoded'), { source: 'encoded' }, 'encoded names still count');
  });

  jsTest('a copied page and properties mean what their JSON means: no key the JSON would drop, no shared object', function () {
    var odd = JSON.parse('{"__proto__": {"polluted": true}, "title": "t"}');
    var page = { url: 'https://a.test/', nested: { list: [1, 'two', null, { deep: true }] }, when: new Date(Date.UTC(2026, 0, 1)),
      skipped: undefined, fn: function () {}, infinite: Infinity, holes: [undefined, 1], odd: odd };
    var event = builder().buildTrack({ event: 'e', page: page, properties: { page: page } });
    var expected = JSON.parse(JSON.stringify(page));
    assert.deepEqual(event.context.page, expected);
    assert.deepEqual(event.properties.page, expected);
    assert.equal(event.context.page.when, '2026-01-01T00:00:00.000Z');
    assert.equal(event.context.page.infinite, null);
    assert.deepEqual(event.context.page.holes, [null, 1]);
    assert.equal(Object.prototype.hasOwnProperty.call(event.context.page.odd, '__proto__'), true, 'an own key, as JSON.parse made it');
    assert.equal({}.polluted, undefined);
    assert.equal(Object.getPrototypeOf(event.context.page.odd), Object.prototype);
    var plain = { url: 'https://a.test/', nested: { list: [1, { deep: true }] } };
    var copied = builder().buildTrack({ event: 'e', page: plain }).context.page;
    assert.deepEqual(copied, plain);
    assert.notEqual(copied.nested, plain.nested, 'a copy, not the caller\'s object');
    assert.notEqual(copied.nested.list[1], plain.nested.list[1]);
  });

  jsTest('a screen event has its name in context.screen and properties, no context.page, and isConsentGiven false before consent', function () {
    var event = builder().buildScreenView({ name: 'Home', properties: {} });
    assert.equal(event.type, 'screen');
    assert.equal(event.name, 'Home');
    assert.equal(event.context.screen.name, 'Home');
    assert.equal(event.properties.name, 'Home');
    assert.equal(event.context.gdpr.isConsentGiven, false);
    assert.equal('page' in event.context, false);
    var custom = builder().buildScreenView({ name: 'Home', properties: { name: 'Override', tab: 2 }, screen: { name: 'S', x: 1 } });
    assert.deepEqual(custom.properties, { name: 'Override', tab: 2 }, 'caller keys override name');
    assert.deepEqual(custom.context.screen, { name: 'S', x: 1 });
  });

  var PROVIDER_PAGE = { path: '/', query: {}, referrer: '', search: '', title: 'Home', url: 'https://example.test/' };

  jsTest('page properties deep-merge the provider page; context.page equals the properties', function () {
    var b = builder({ getPageProperties: function () { return PROVIDER_PAGE; } });
    var event = b.buildPageView({
      properties: { path: '/products', query: { audience: 'beta' }, search: '?audience=beta', url: 'https://example.test/products?audience=beta' },
    });
    assert.deepEqual(event.properties, {
      path: '/products', query: { audience: 'beta' }, referrer: '', search: '?audience=beta', title: 'Home',
      url: 'https://example.test/products?audience=beta',
    });
    assert.deepEqual(event.context.page, event.properties);
    assert.equal(event.type, 'page');
    assert.equal('screen' in event.context, false);
  });

  jsTest('an explicit page becomes context.page; properties are still merged', function () {
    var b = builder({ getPageProperties: function () { return PROVIDER_PAGE; } });
    var explicit = { path: '/p', query: {}, referrer: '', search: '', title: 'P', url: 'https://example.test/p' };
    var event = b.buildPageView({ page: explicit, properties: { path: '/q' } });
    assert.deepEqual(event.context.page, explicit);
    assert.equal(event.properties.path, '/q');
    assert.equal(event.properties.title, 'Home');
  });

  jsTest('the page campaign comes from properties.url before context.page.url', function () {
    var event = builder().buildPageView({
      page: { path: '/', query: {}, referrer: '', search: '', url: 'https://example.test/?utm_source=context&utm_medium=page' },
      properties: { url: 'https://example.test/?utm_campaign=Properties%20campaign' },
    });
    assert.deepEqual(event.context.campaign, { name: 'Properties campaign' });
  });

  jsTest('the page campaign comes from the provider page URL; an override URL without UTM parameters gives {}', function () {
    var b = builder({
      getPageProperties: function () {
        return { path: '/', query: {}, referrer: '', search: '', title: '', url: 'https://example.test/?utm_campaign=Default%20campaign' };
      },
    });
    assert.deepEqual(b.buildPageView().context.campaign, { name: 'Default campaign' });
    assert.deepEqual(b.buildPageView({ properties: { url: 'https://example.test/override' } }).context.campaign, {});
  });

  jsTest('unknown input keys (optimizationContextId, sticky, profile) never reach payloads', function () {
    var b = builder();
    var view = b.buildView({
      componentId: 'c', viewId: 'v', viewDurationMs: 1, optimizationContextId: 'ctx-1', sticky: true,
      stickyTrackingKey: 'k', profile: { id: 'p' },
    });
    var click = b.buildClick({ componentId: 'c', optimizationContextId: 'ctx-1' });
    [view, click].forEach(function (event) {
      assert.equal('optimizationContextId' in event, false);
      assert.equal('sticky' in event, false);
      assert.equal('stickyTrackingKey' in event, false);
      assert.equal('profile' in event, false);
    });
  });

  jsTest('universal properties: channel, library, locale, gdpr, page default, messageId, host-clock timestamps', function () {
    var consent;
    var b = ns.createEventBuilder({
      library: { name: 'swift-optimization-linux', version: '0.1.0' },
      getConsent: function () { return consent; },
    });
    __testHost.advance(1234);
    var event = b.buildIdentify({ userId: 'user-1' });
    assert.deepEqual(event, {
      type: 'identify', traits: {}, channel: 'server',
      context: {
        campaign: {}, gdpr: { isConsentGiven: false },
        library: { name: 'swift-optimization-linux', version: '0.1.0' }, locale: 'en-US', page: DEFAULT_PAGE,
      },
      messageId: UUID_1, originalTimestamp: '2026-01-01T00:00:01.234Z', sentAt: '2026-01-01T00:00:01.234Z',
      timestamp: '2026-01-01T00:00:01.234Z', userId: 'user-1',
    });
    consent = true;
    var second = b.buildTrack({ event: 'e', locale: 'fr-FR' });
    assert.equal(second.context.gdpr.isConsentGiven, true, 'evaluated at build time');
    assert.equal(second.context.locale, 'fr-FR', 'the caller locale wins');
    assert.notEqual(second.messageId, event.messageId);
    consent = false;
    assert.equal(b.buildTrack({ event: 'e' }).context.gdpr.isConsentGiven, false);
  });

  jsTest('optional context keys appear only when given; app from config', function () {
    var b = builder({ app: { name: 'kiosk', version: '2' } });
    var event = b.buildTrack({ event: 'e', location: { city: 'Berlin' }, userAgent: 'ua/1', properties: { a: 1 } });
    assert.deepEqual(event.context.app, { name: 'kiosk', version: '2' });
    assert.deepEqual(event.context.location, { city: 'Berlin' });
    assert.equal(event.context.userAgent, 'ua/1');
    assert.deepEqual(event.properties, { a: 1 });
    var plain = builder().buildTrack({ event: 'e' });
    ['app', 'location', 'userAgent', 'screen'].forEach(function (key) {
      assert.equal(key in plain.context, false, key);
    });
    assert.deepEqual(plain.properties, {});
  });

  jsTest('interaction events: entry view, flag view, click, hover', function () {
    var b = builder();
    var view = b.buildView({ componentId: 'c1', experienceId: 'x1', variantIndex: 2, viewId: 'v1', viewDurationMs: 2000 });
    assert.equal(view.type, 'component');
    assert.equal(view.componentType, 'Entry');
    assert.equal(view.componentId, 'c1');
    assert.equal(view.experienceId, 'x1');
    assert.equal(view.variantIndex, 2);
    assert.equal(view.viewId, 'v1');
    assert.equal(view.viewDurationMs, 2000);
    assert.deepEqual(view.context.page, DEFAULT_PAGE);
    var flag = b.buildFlagView({ componentId: 'dark-mode' });
    assert.equal(flag.componentType, 'Variable');
    assert.equal(flag.variantIndex, 0, 'variantIndex defaults to 0');
    assert.equal('viewId' in flag, false);
    assert.equal('experienceId' in flag, false);
    var click = b.buildClick({ componentId: 'c1', variantIndex: 1 });
    assert.equal(click.type, 'component_click');
    assert.equal(click.componentType, 'Entry');
    var hover = b.buildHover({ componentId: 'c1', hoverId: 'h', hoverDurationMs: 5 });
    assert.equal(hover.type, 'component_hover');
    assert.equal(hover.hoverId, 'h');
    assert.equal(hover.hoverDurationMs, 5);
  });

  jsTest('builders reject wrongly typed known keys and never mutate their input', function () {
    var b = builder();
    assert.throws(function () { b.buildIdentify({}); }, /Invalid identify event: "userId" must be a string/);
    assert.throws(function () { b.buildTrack({ event: 'e', page: 'x' }); }, /"page" must be an object/);
    assert.throws(function () { b.buildView({ componentId: 'c', viewId: 'v' }); }, /"viewDurationMs" must be a number/);
    assert.throws(function () { b.buildScreenView([]); }, /the input must be an object/);
    var input = { event: 'e', properties: { nested: { a: 1 } } };
    var event = b.buildTrack(input);
    event.properties.nested.a = 2;
    assert.equal(input.properties.nested.a, 1);
    assert.deepEqual(Object.keys(input), ['event', 'properties']);
  });

  jsTest('the normalized SDK locale is the default context.locale of events', function () {
    __bridge.initialize({ clientId: 'c', environment: 'main', locale: ' de_DE ', defaults: { consent: true } });
    assert.equal(JSON.parse(__bridge.getState()).locale, 'de-DE');
    var emitted = [];
    globalThis.__nativeOnEventEmitted = function (json) { emitted.push(JSON.parse(json)); };
    try {
      __bridge.page({}, 'r1');
      assert.equal(emitted.length, 1);
      assert.equal(emitted[0].context.locale, 'de-DE');
      assert.throws(function () { __bridge.initialize({ clientId: 'c', environment: 'main', locale: '*' }); }, /valid locale/);
    } finally {
      delete globalThis.__nativeOnEventEmitted;
    }
  });

  jsTest('normalizeLocale gives "de-DE" for " de_DE " and undefined for "*", "und" or ""; normalizeExplicitLocale throws for null', function () {
    var locale = ns.locale;
    assert.equal(locale.normalizeLocale(' de_DE '), 'de-DE');
    ['*', 'und', 'UND', '', 'not a locale'].forEach(function (value) {
      assert.equal(locale.normalizeLocale(value), undefined, JSON.stringify(value));
    });
    assert.throws(function () { locale.normalizeExplicitLocale(null); }, /locale string/);
  });
})();
