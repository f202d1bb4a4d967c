// tests/bridge.spec.js — the __bridge contract.
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var ids = fx.ids;
  var UUID_1 = '00000000-0000-4000-8000-000000000001';
  var UUID_2 = '00000000-0000-4000-8000-000000000002';

  function init(extra) {
    __bridge.initialize(Object.assign({ clientId: 'test-client', environment: 'main' }, extra || {}));
  }

  jsTest('every own key of __bridge is a function', function () {
    var keys = Object.keys(__bridge);
    assert.ok(keys.length >= 7);
    keys.forEach(function (key) {
      assert.equal(typeof __bridge[key], 'function', key);
    });
    assert.equal(globalThis.__bridge, __bridge);
  });

  jsTest('resolveOptimizedEntry before initialize returns {entry: baseline}', function () {
    var oe = fx.optimizedEntry();
    var json = __bridge.resolveOptimizedEntry(oe, fx.selectedOptimizations());
    assert.deepEqual(JSON.parse(json), { entry: JSON.parse(JSON.stringify(oe)) });
    var collection = fx.optimizedCollection();
    assert.equal(JSON.parse(__bridge.resolveOptimizedEntry(collection, fx.selectedOptimizations())).entry.sys.id, ids.OE);
  });

  jsTest('resolveOptimizedEntry returns the variant, the selection and a context id', function () {
    init();
    var so = fx.selectedOptimizations();
    var result = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), so));
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    assert.deepEqual(result.selectedOptimization, so[4]);
    assert.equal(result.optimizationContextId, UUID_1);
    assert.equal('isEmptyVariant' in result, false);
    var again = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), so));
    assert.equal(again.optimizationContextId, UUID_2, 'every call registers a new context');
    var none = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), [fx.selection('unknown', 1)]));
    assert.deepEqual(Object.keys(none), ['entry'], 'no selection, no context id');
  });

  jsTest('omitted selections use the state; explicit [] and null do not', function () {
    init({ defaults: { selectedOptimizations: fx.selectedOptimizations() } });
    var omitted = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry()));
    assert.equal(omitted.entry.sys.id, ids.EU_VARIANT);
    assert.equal(typeof omitted.optimizationContextId, 'string');
    assert.equal(omitted.selectedOptimization.experienceId, ids.EU);
    assert.equal(omitted.selectedOptimization.variantIndex, 1);
    var explicitEmpty = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), []));
    assert.deepEqual(Object.keys(explicitEmpty), ['entry']);
    assert.equal(explicitEmpty.entry.sys.id, ids.OE);
    var explicitNull = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), null));
    assert.equal(explicitNull.entry.sys.id, ids.OE);
  });

  jsTest('resolveOptimizedEntry reports isEmptyVariant only when true', function () {
    init();
    var experience = fx.experience({
      id: ids.EMPTY_EXPERIENCE,
      components: [{ baseline: { id: ids.OE }, variants: [{ id: '', hidden: false }] }],
      variants: [],
    });
    var baseline = fx.entry(ids.OE, 'content', { nt_experiences: [experience] });
    var result = JSON.parse(__bridge.resolveOptimizedEntry(baseline, [fx.selection(ids.EMPTY_EXPERIENCE, 1)]));
    assert.equal(result.isEmptyVariant, true);
    assert.equal(result.entry.sys.id, ids.OE);
    assert.equal(typeof result.optimizationContextId, 'string');
  });

  jsTest('resolveOptimizedEntry accepts a CDA collection and keeps links unresolved in the output', function () {
    init();
    var collection = fx.optimizedCollection();
    collection.includes.Entry[2].fields.parent = fx.link(ids.OE);
    var result = JSON.parse(__bridge.resolveOptimizedEntry(collection, fx.selectedOptimizations()));
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    assert.deepEqual(result.entry.fields.parent, fx.link(ids.OE));
  });

  jsTest('resolveOptimizedEntry names the problem when the result cannot be serialized', function () {
    init();
    var oe = fx.optimizedEntry();
    oe.fields.self = oe;
    assert.throws(function () { __bridge.resolveOptimizedEntry(oe, []); }, /^resolveOptimizedEntry: the result cannot be serialized to JSON/);
  });

  jsTest('prepareEntry / prepareSelections / resolvePrepared give the compact result', function () {
    init();
    var so = fx.selectedOptimizations();
    __bridge.prepareEntry('oe@1', fx.optimizedEntry());
    __bridge.prepareSelections('visitor-1', so);
    assert.equal(__bridge.resolvePrepared('oe@1', 'visitor-1'), '4|0|0|0|' + UUID_1);
    assert.equal(__bridge.resolvePrepared('oe@1', 'visitor-1'), '4|0|0|0|' + UUID_2);
    assert.equal(__bridge.resolvePrepared('oe@1', null), '-1|-1|-1|0|');
    assert.equal(__bridge.resolvePrepared('oe@1', undefined), '-1|-1|-1|0|');
    __bridge.prepareSelections('baseline-visitor', [fx.selection(ids.NA, 0)]);
    assert.equal(__bridge.resolvePrepared('oe@1', 'baseline-visitor'), '0|1|-1|0|00000000-0000-4000-8000-000000000003');
    __bridge.prepareSelections('nobody', []);
    assert.equal(__bridge.resolvePrepared('oe@1', 'nobody'), '-1|-1|-1|0|');
    __bridge.prepareSelections('null-selections', null);
    assert.equal(__bridge.resolvePrepared('oe@1', 'null-selections'), '-1|-1|-1|0|');
  });

  jsTest('resolvePrepared answers "?e" / "?s" for unknown keys', function () {
    init();
    __bridge.prepareEntry('known', fx.optimizedEntry());
    assert.equal(__bridge.resolvePrepared('unknown', null), '?e');
    assert.equal(__bridge.resolvePrepared('unknown', 'also-unknown'), '?e');
    assert.equal(__bridge.resolvePrepared('known', 'unknown'), '?s');
  });

  jsTest('resolvePrepared: empty variant, variant position in nt_variants, CDA collection with entryId', function () {
    init();
    var experience = fx.experience({
      id: ids.EMPTY_EXPERIENCE,
      components: [fx.replacement(ids.OE, ['', 'v2'])],
      variants: [fx.entry('other', 'content', {}), fx.entry('v2', 'content', {})],
    });
    __bridge.prepareEntry('empty', fx.entry(ids.OE, 'content', { nt_experiences: [fx.link('x'), experience] }));
    __bridge.prepareSelections('s1', [fx.selection('zzz', 1), fx.selection(ids.EMPTY_EXPERIENCE, 1)]);
    __bridge.prepareSelections('s2', [fx.selection(ids.EMPTY_EXPERIENCE, 2)]);
    assert.equal(__bridge.resolvePrepared('empty', 's1'), '1|1|-1|1|' + UUID_1);
    assert.equal(__bridge.resolvePrepared('empty', 's2'), '0|1|1|0|' + UUID_2);

    var collection = fx.optimizedCollection();
    collection.items.unshift(fx.entry('first', 'content', {}));
    __bridge.prepareEntry('cda', collection, ids.OE);
    __bridge.prepareEntry('cda-first', collection);
    __bridge.prepareSelections('so', fx.selectedOptimizations());
    assert.equal(__bridge.resolvePrepared('cda', 'so'), '4|0|0|0|00000000-0000-4000-8000-000000000003');
    assert.equal(__bridge.resolvePrepared('cda-first', 'so'), '-1|-1|-1|0|');
    assert.throws(function () { __bridge.prepareEntry('bad', collection, 'nope'); }, /entry "nope" is not among the collection items/);
    assert.throws(function () { __bridge.prepareEntry('bad', { sys: { type: 'Array' }, items: [] }); }, /no items/);
  });

  jsTest('resolvePrepared before initialize: unknown keys still answered, known ones give the baseline', function () {
    assert.equal(__bridge.resolvePrepared('e', null), '?e');
    __bridge.prepareEntry('e', fx.optimizedEntry());
    __bridge.prepareSelections('s', fx.selectedOptimizations());
    assert.equal(__bridge.resolvePrepared('e', 'x'), '?s');
    assert.equal(__bridge.resolvePrepared('e', 's'), '-1|-1|-1|0|');
  });

  jsTest('prepared caches are bounded LRUs sized by entryCacheSize and cleared by destroy', function () {
    init({ entryCacheSize: 2 });
    __bridge.prepareEntry('a', fx.optimizedEntry());
    __bridge.prepareEntry('b', fx.optimizedEntry());
    __bridge.prepareSelections('s1', []);
    __bridge.prepareSelections('s2', []);
    assert.equal(__bridge.resolvePrepared('a', 's1'), '-1|-1|-1|0|'); // a and s1 become most recent
    __bridge.prepareEntry('c', fx.optimizedEntry());
    __bridge.prepareSelections('s3', []);
    assert.equal(__bridge.resolvePrepared('b', null), '?e', 'b was evicted');
    assert.equal(__bridge.resolvePrepared('a', 's2'), '?s', 's2 was evicted');
    assert.equal(__bridge.resolvePrepared('c', 's3'), '-1|-1|-1|0|');
    __bridge.destroy();
    assert.equal(__bridge.resolvePrepared('a', null), '?e');
    __bridge.destroy();
  });

  jsTest('prepare methods validate their arguments', function () {
    assert.throws(function () { __bridge.prepareEntry({}, {}); }, /prepareEntry key must be a string or a finite number/);
    assert.throws(function () { __bridge.prepareEntry(NaN, {}); }, /prepareEntry key must be a string or a finite number/);
    assert.throws(function () { __bridge.prepareSelections('k', {}); }, /array or null/);
    assert.throws(function () { __bridge.prepareSelections(null, []); }, /prepareSelections key must be a string or a finite number/);
  });

  jsTest('numeric handles adopt documents prepared under the same content key', function () {
    init();
    var entry = fixtures.entry('adopt-baseline', 'page', { title: 'x' });
    assert.equal(__bridge.adoptEntry(1, 'content-a'), false);
    __bridge.prepareEntry(1, entry, undefined, 'content-a');
    __bridge.prepareSelections(10, [], 'sel-a');
    assert.equal(__bridge.resolvePrepared(2, 10), '?e', 'handle 2 is unknown until adopted');
    assert.equal(__bridge.adoptEntry(2, 'content-a'), true);
    assert.equal(__bridge.adoptSelections(11, 'sel-a'), true);
    assert.equal(__bridge.adoptSelections(12, 'sel-b'), false);
    assert.equal(__bridge.resolvePrepared(2, 11), '-1|-1|-1|0|');
    __bridge.destroy();
    assert.equal(__bridge.adoptEntry(3, 'content-a'), false, 'destroy forgets content keys');
  });

  jsTest('getState reports the bridge state before and after initialize', function () {
    var before = JSON.parse(__bridge.getState());
    assert.deepEqual(before, {
      profile: null, canOptimize: false, optimizationPossible: true,
      experienceRequestState: { status: 'idle' }, changes: null, locale: null, selectedOptimizations: null,
    });
    init({ locale: 'en-US', allowedEventTypes: [], defaults: { consent: true, profile: { id: 'p-1' }, selectedOptimizations: [] } });
    var after = JSON.parse(__bridge.getState());
    assert.deepEqual(after, {
      profile: { id: 'p-1' }, consent: true, persistenceConsent: true, canOptimize: true,
      optimizationPossible: true, experienceRequestState: { status: 'idle' }, changes: null,
      locale: 'en-US', selectedOptimizations: [],
    });
    init({ allowedEventTypes: [], defaults: { consent: false, persistenceConsent: true } });
    var strict = JSON.parse(__bridge.getState());
    assert.equal(strict.optimizationPossible, false);
    assert.equal(strict.consent, false);
    assert.equal(strict.persistenceConsent, true);
    assert.equal(strict.profile, null, 'a new instance does not keep the old profile');
  });

  jsTest('initialize pushes the state to __nativeOnStateChange once', function () {
    var pushed = [];
    globalThis.__nativeOnStateChange = function (json) { pushed.push(JSON.parse(json)); };
    init({ defaults: { selectedOptimizations: [] } });
    assert.equal(pushed.length, 1);
    assert.equal(pushed[0].canOptimize, true);
    globalThis.__nativeOnStateChange = function () { throw new Error('host callback failed'); };
    init();
    assert.ok(__testHost.logs.some(function (l) { return l.message.indexOf('host callback failed') !== -1; }));
  });

  jsTest('initialize validates the config and names the offending key', function () {
    var cases = [
      [null, /^initialize config must be an object\.$/],
      [[], /must be an object/],
      [{ environment: 'main' }, /must include a string "spaceId" \(or the deprecated "clientId"\)/],
      [{ clientId: 'c', environment: 5 }, /"environment" must be a string when provided/],
      [{ spaceId: 's', clientId: 'c' }, /"spaceId" and "clientId" name different tenants/],
      [{ spaceId: 's', apiVersion: 'v3' }, /"apiVersion" must be "v1" or "v2" when provided/],
      [{ clientId: 'c', environment: 'main', logLevel: 'verbose' }, /"logLevel" must be one of fatal, error, warn, info, debug, log when provided/],
      [{ clientId: 'c', environment: 'main', allowedEventTypes: 'identify' }, /"allowedEventTypes" must be an array of strings/],
      [{ clientId: 'c', environment: 'main', entryCacheSize: 0 }, /"entryCacheSize" must be a positive integer/],
      [{ clientId: 'c', environment: 'main', library: { name: 'x' } }, /"library" must be an object with string "name" and "version"/],
      [{ clientId: 'c', environment: 'main', channel: 5 }, /"channel" must be a string/],
      [{ clientId: 'c', environment: 'main', api: 'x' }, /"api" must be an object/],
      [{ clientId: 'c', environment: 'main', defaults: { consent: 'yes' } }, /"defaults.consent" must be a boolean/],
      [{ clientId: 'c', environment: 'main', queuePolicy: { flushIntervalMs: 1000 } }, /^initialize config "queuePolicy" is not a known key\.$/],
      [{ clientId: 'c', environment: 'main', api: { experienceBaseURL: 'http://x' } }, /"api\.experienceBaseURL" is not a known key/],
      [{ clientId: 'c', environment: 'main', defaults: { profileId: 'p' } }, /"defaults\.profileId" is not a known key/],
      [{ clientId: 'c', environment: 'main', persisted: { consent: true, extra: 1 } }, /"persisted\.extra" is not a known key/],
      [{ clientId: 'c', environment: 'main', defaults: { selectedOptimizations: {} } }, /"defaults.selectedOptimizations" must be an array/],
    ];
    cases.forEach(function (testCase) {
      assert.throws(function () { __bridge.initialize(testCase[0]); }, testCase[1], JSON.stringify(testCase[0]));
    });
    init({ locale: null, logLevel: null, defaults: null, library: { name: 'optimization-linux', version: '0.1.0' } });
    assert.equal(JSON.parse(__bridge.getState()).locale, null, 'null optional keys count as absent');
  });

  jsTest('initialize sets the log threshold; destroy restores the default; both are idempotent', function () {
    init({ logLevel: 'debug' });
    __bridge.resolveOptimizedEntry(fx.optimizedEntry(), []);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'debug'; }));
    __bridge.destroy();
    __bridge.destroy();
    assert.equal(globalThis.__optimization.host.getLogLevel(), 'error');
    assert.deepEqual(Object.keys(JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), fx.selectedOptimizations()))), ['entry']);
  });

  jsTest('settle reports fulfilled promises, rejections and plain values exactly once', function () {
    var settle = globalThis.__optimization.settle;
    settle('r1', Promise.resolve({ accepted: true }));
    settle('r2', Promise.reject(new Error('SDK not initialized. Call initialize() first.')));
    settle('r3', new Error('identify payload must include a string "userId".'));
    settle('r4', undefined);
    assert.deepEqual(__testHost.settled, [
      { requestId: 'r3', ok: false, json: 'identify payload must include a string "userId".' },
      { requestId: 'r4', ok: true, json: 'null' },
    ], 'errors and values settle synchronously');
    var cyclic = {};
    cyclic.self = cyclic;
    settle('r5', Promise.resolve(cyclic));
    var thenable = { then: function (ok, fail) { ok(1); ok(2); fail(new Error('late')); } };
    settle('r6', thenable);
    return Promise.resolve().then(function () {}).then(function () {}).then(function () {
      var byId = {};
      __testHost.settled.forEach(function (s) { byId[s.requestId] = (byId[s.requestId] || []).concat([s]); });
      assert.deepEqual(byId.r1, [{ requestId: 'r1', ok: true, json: '{"accepted":true}' }]);
      assert.deepEqual(byId.r2, [{ requestId: 'r2', ok: false, json: 'SDK not initialized. Call initialize() first.' }]);
      assert.equal(byId.r5.length, 1);
      assert.equal(byId.r5[0].ok, false);
      assert.deepEqual(byId.r6, [{ requestId: 'r6', ok: true, json: '1' }]);
    });
  });

  jsTest('settle survives a throwing or missing __nativeSettle', function () {
    var calls = 0;
    globalThis.__nativeSettle = function () { calls++; throw new Error('host refused'); };
    globalThis.__optimization.settle('r1', 'value');
    assert.equal(calls, 1);
    assert.ok(__testHost.logs.some(function (l) { return l.message.indexOf('host refused') !== -1; }));
    delete globalThis.__nativeSettle;
    globalThis.__optimization.settle('r2', 'value');
    assert.ok(__testHost.logs.some(function (l) { return l.message.indexOf('__nativeSettle is not installed') !== -1; }));
  });
  jsTest('parseExperienceAnswer reads an answer as the delivery path does, before initialize too', function () {
    __bridge.destroy();
    var answer = {
      data: {
        profile: { id: 'p-1', traits: {} },
        experiences: [
          { experienceId: 'e-1', variantIndex: 1, variants: { a: 'b' }, extra: 'dropped' },
          { experienceId: 'e-2', variantIndex: 0, variants: {}, sticky: true },
        ],
        changes: [
          { key: 'flag', type: 'Variable', value: 3, meta: { experienceId: 'e-1', variantIndex: 1 } },
          { type: 'Unknown' },
        ],
      },
      error: null,
    };
    var parsed = JSON.parse(__bridge.parseExperienceAnswer(JSON.stringify(answer), 'v2'));
    assert.deepEqual(parsed.selectedOptimizations, [
      { experienceId: 'e-1', variantIndex: 1, variants: { a: 'b' }, sticky: false },
      { experienceId: 'e-2', variantIndex: 0, variants: {}, sticky: true },
    ]);
    assert.deepEqual(parsed.profile, { id: 'p-1', traits: {} });
    assert.equal(parsed.changes.length, 1);
    assert.equal(parsed.ignoredChanges, 1);
    // The version decides the envelope's `error` shape, as on the delivery path.
    answer.error = false;
    assert.equal(JSON.parse(__bridge.parseExperienceAnswer(JSON.stringify(answer), 'v1')).profile.id, 'p-1');
    assert.throws(function () { __bridge.parseExperienceAnswer(JSON.stringify(answer), 'v2'); }, /"error"/);
    assert.throws(function () { __bridge.parseExperienceAnswer('{"data":{}}', 'v2'); }, /data\.profile/);
    assert.throws(function () { __bridge.parseExperienceAnswer('not json', 'v2'); }, /not JSON/);
    assert.throws(function () { __bridge.parseExperienceAnswer('{}', 'v3'); }, /apiVersion/);
    assert.throws(function () { __bridge.parseExperienceAnswer(42, 'v2'); }, /text must be a string/);
  });
})();
