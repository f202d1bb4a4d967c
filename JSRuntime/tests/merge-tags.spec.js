// tests/merge-tags.spec.js — merge tags and the bridge's
// getMergeTagValue.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var fx = globalThis.fixtures;
  var mergeTags = ns.mergeTags;

  // A full, schema-valid profile.
  function profile() {
    return {
      id: '',
      stableId: '',
      random: 0.42,
      audiences: ['2WzXDaWtDmstHl9p8Wufpp'],
      traits: { firstname: 'John', nested: { foo: 'bar', baz: { qux: 'grml' }, baz_qux: 'quux' }, non_nested: 123 },
      location: { continent: 'EU' },
      session: {
        id: 'session-1',
        isReturningVisitor: false,
        landingPage: { path: '/', query: {}, referrer: '', search: '', title: 'Home', url: 'https://example.test/' },
        count: 1,
        activeSessionLength: 0,
        averageSessionLength: 0,
      },
    };
  }

  // A merge-tag entry.
  function mergeTag(id, fallback) {
    var fields = { nt_name: 'Continent', nt_mergetag_id: id === undefined ? 'location.continent' : id };
    if (fallback !== null) fields.nt_fallback = fallback === undefined ? 'Nowhere' : fallback;
    return fx.entry('nM127uVevlpDWytfZRyum', 'nt_mergetag', fields);
  }

  jsTest('normalizeSelectors gives the selector, then each form with one more "_" read as "." from the left', function () {
    assert.deepEqual(mergeTags.normalizeSelectors('a_b_c'), ['a_b_c', 'a.b_c', 'a.b.c']);
    assert.deepEqual(mergeTags.normalizeSelectors('a.b_c'), ['a.b_c', 'a.b.c']);
    assert.deepEqual(mergeTags.normalizeSelectors('a.b_c.d'), ['a.b_c.d', 'a.b.c.d']);
    assert.deepEqual(mergeTags.normalizeSelectors('a_b_c.d'), ['a_b_c.d', 'a.b_c.d', 'a.b.c.d']);
    assert.deepEqual(mergeTags.normalizeSelectors('plain'), ['plain']);
  });

  jsTest('getValueFromProfile finds values by dotted or underscored selectors; objects, inherited keys and string properties give undefined', function () {
    var pf = profile();
    var cases = [
      ['traits.firstname', 'John'], ['traits_firstname', 'John'], ['traits.nested.foo', 'bar'],
      ['traits_nested.baz_qux', 'quux'], ['traits_nested.baz.qux', 'grml'], ['traits.non_nested', '123'],
      ['a.b.c', undefined], ['traits..firstname', 'John'], ['traits.nested', undefined], ['audiences.0', '2WzXDaWtDmstHl9p8Wufpp'],
      ['traits.constructor', undefined], ['traits.firstname.length', undefined],
    ];
    cases.forEach(function (c) {
      assert.equal(mergeTags.getValueFromProfile(c[0], pf), c[1], c[0]);
    });
  });

  jsTest('resolve gives the profile value, else the fallback, else undefined; an entry that is no merge tag is warned about', function () {
    ns.host.setLogLevel('warn');
    var pf = profile();
    assert.equal(mergeTags.resolve({}, pf), undefined);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && /not a valid nt_mergetag entry/.test(l.message); }));
    assert.equal(mergeTags.resolve(mergeTag(), {}), 'Nowhere');
    var noContinent = profile();
    delete noContinent.location.continent;
    assert.equal(mergeTags.resolve(mergeTag(), noContinent), 'Nowhere');
    assert.equal(mergeTags.resolve(mergeTag(), pf), 'EU');
    assert.equal(mergeTags.resolve(mergeTag('traits.missing', null), pf), undefined, 'no fallback: undefined');
    assert.equal(mergeTags.resolve(mergeTag('location.continent', null), {}), undefined);
  });

  jsTest('0 and false are returned as strings; missing, null and "" fall back', function () {
    var pf = profile();
    pf.traits.zero = 0;
    pf.traits.no = false;
    pf.traits.empty = '';
    pf.traits.nothing = null;
    pf.traits.list = [1, 2];
    assert.equal(mergeTags.resolve(mergeTag('traits.zero'), pf), '0');
    assert.equal(mergeTags.resolve(mergeTag('traits.no'), pf), 'false');
    assert.equal(mergeTags.resolve(mergeTag('traits.empty'), pf), 'Nowhere');
    assert.equal(mergeTags.resolve(mergeTag('traits.nothing'), pf), 'Nowhere');
    assert.equal(mergeTags.resolve(mergeTag('traits.missing'), pf), 'Nowhere');
    assert.equal(mergeTags.resolve(mergeTag('traits.list'), pf), 'Nowhere', 'arrays and objects fall back');
    assert.equal(mergeTags.resolve(mergeTag('random'), pf), '0.42');
  });

  jsTest('merge tags: entry and profile schema checks', function () {
    assert.ok(mergeTags.isMergeTagEntry(mergeTag()));
    assert.ok(mergeTags.isMergeTagEntry(mergeTag(undefined, null)), 'nt_fallback is optional');
    assert.ok(!mergeTags.isMergeTagEntry(fx.link('nM127uVevlpDWytfZRyum')), 'a link is not resolved');
    assert.ok(!mergeTags.isMergeTagEntry(fx.entry('x', 'content', { nt_name: 'n', nt_mergetag_id: 'a' })));
    assert.ok(!mergeTags.isMergeTagEntry(fx.entry('x', 'nt_mergetag', { nt_mergetag_id: 'a' })), 'nt_name required');
    assert.ok(!mergeTags.isMergeTagEntry(fx.entry('x', 'nt_mergetag', { nt_name: 'n', nt_mergetag_id: 5 })));
    assert.ok(!mergeTags.isMergeTagEntry(fx.entry('x', 'nt_mergetag', { nt_name: 'n', nt_mergetag_id: 'a', nt_fallback: 1 })));
    assert.ok(mergeTags.isProfile(profile()));
    var mutations = [
      function (p) { delete p.session; },
      function (p) { p.location.countryCode = 'DEU'; },
      function (p) { p.location.coordinates = { latitude: '1', longitude: 2 }; },
      function (p) { p.audiences = [1]; },
      function (p) { p.session.landingPage.query = { a: 1 }; },
      function (p) { p.random = '0.5'; },
      function (p) { p.traits = []; },
    ];
    mutations.forEach(function (mutate, i) {
      var p = profile();
      mutate(p);
      assert.ok(!mergeTags.isProfile(p), 'mutation ' + i);
    });
    var extra = profile();
    extra.location.countryCode = 'DE';
    extra.location.coordinates = { latitude: 52.5, longitude: 13.4 };
    extra.custom = { anything: true };
    assert.ok(mergeTags.isProfile(extra), 'unknown keys allowed');
  });

  jsTest('bridge getMergeTagValue: null before initialize; current profile by default; explicit profile', function () {
    assert.equal(__bridge.getMergeTagValue(mergeTag(), profile()), null);
    __bridge.initialize({ clientId: 'test-client', environment: 'main', defaults: { profile: profile() } });
    assert.equal(__bridge.getMergeTagValue(mergeTag()), 'EU');
    var other = profile();
    other.location.continent = 'NA';
    assert.equal(__bridge.getMergeTagValue(mergeTag(), other), 'NA');
    assert.equal(__bridge.getMergeTagValue(mergeTag('traits.missing', null)), null);
    assert.equal(__bridge.getMergeTagValue({}), null);
    __bridge.reset();
    assert.equal(__bridge.getMergeTagValue(mergeTag()), 'Nowhere', 'no profile after reset: fallback');
  });
})();
