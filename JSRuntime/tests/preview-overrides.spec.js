// tests/preview-overrides.spec.js — preview overrides, the
// state interceptor hook and the bridge's override / preview-state methods.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var fx = globalThis.fixtures;
  var HERO = fx.ids.HERO_EXPERIENCE; // 6Iue…
  var EMPTY = fx.ids.EMPTY_EXPERIENCE; // 5jT8…
  var MISSING = fx.ids.MISSING_VARIANT_EXPERIENCE; // 7LcA…
  var AUD = fx.ids.EU_AUDIENCE; // 2WzX…

  function bl() {
    return [
      { experienceId: HERO, variantIndex: 1, variants: { baseline: 'variant' }, sticky: false },
      { experienceId: EMPTY, variantIndex: 2, variants: { '4ib0hsHWoSOnCVdDkizE8d': '' } },
      { experienceId: MISSING, variantIndex: 0, variants: {} },
    ];
  }

  function indices(selections) {
    var out = {};
    selections.forEach(function (s) { out[s.experienceId] = s.variantIndex; });
    return out;
  }

  // flag-a on HERO (baseline false, variant true), flag-b on EMPTY (0, 42).
  function flagExperiences() {
    return [
      fx.experience({ id: HERO, components: [fx.inlineVariable('flag-a', 'Boolean', false, [true])] }),
      fx.experience({ id: EMPTY, components: [fx.inlineVariable('flag-b', 'Number', 0, [42])] }),
    ];
  }

  function definitionsOf(entries) {
    var definitions = ns.createExperienceDefinitions();
    entries.forEach(function (e) { assert.ok(definitions.record(e), 'recorded ' + e.sys.id); });
    return definitions;
  }

  function setup(initial, definitions) {
    var state = ns.createStateStore(initial || {});
    var registry = ns.createStateInterceptorRegistry();
    var changes = { count: 0 };
    var manager = ns.createPreviewOverrideManager({
      state: state,
      definitions: definitions,
      interceptors: registry,
      onChange: function () { changes.count++; },
    });
    return { state: state, registry: registry, manager: manager, notified: changes };
  }

  jsTest('activateAudience sets its experiences to variant 1 and records the audience', function () {
    var t = setup({ selectedOptimizations: bl(), profile: { id: 'p', audiences: [AUD] } });
    t.manager.activateAudience(AUD, [HERO, EMPTY]);
    assert.deepEqual(indices(t.state.get().selectedOptimizations), { [HERO]: 1, [EMPTY]: 1, [MISSING]: 0 });
    assert.deepEqual(t.manager.overrides().audiences[AUD], { audienceId: AUD, isActive: true, source: 'manual', experienceIds: [HERO, EMPTY] });
    assert.equal(t.notified.count, 1);
    var snap = t.manager.snapshot();
    assert.deepEqual(snap.audienceOverrides, { [AUD]: true });
    assert.deepEqual(snap.defaultAudienceQualifications, { [AUD]: true }, 'natural qualification from profile.audiences');
    assert.deepEqual(snap.variantOverrides, { [HERO]: 1, [EMPTY]: 1 });
    assert.deepEqual(snap.defaultVariantIndices, { [HERO]: 1, [EMPTY]: 2 });
    assert.equal(t.state.get().selectedOptimizations[0].sticky, false, 'other keys kept');
  });

  jsTest('overrides of experiences missing from the selections are appended', function () {
    var t = setup({ selectedOptimizations: bl() });
    t.manager.activateAudience(AUD, ['9AbC1DeF3GhI5JkL7MnOpQ', '1CdE3FgH5IjK7LmN9OpQrS']);
    var selections = t.state.get().selectedOptimizations;
    assert.deepEqual(selections.slice(0, 3), bl());
    assert.deepEqual(selections.slice(3), [
      { experienceId: '9AbC1DeF3GhI5JkL7MnOpQ', variantIndex: 1, variants: {} },
      { experienceId: '1CdE3FgH5IjK7LmN9OpQrS', variantIndex: 1, variants: {} },
    ]);
    assert.deepEqual(t.manager.snapshot().defaultAudienceQualifications, { [AUD]: false }, 'no profile ⇒ not qualified');
  });

  jsTest('setVariantOverride changes one experience; the baseline keeps the natural index', function () {
    var t = setup({ selectedOptimizations: bl() });
    t.manager.setVariantOverride(HERO, 3);
    assert.deepEqual(indices(t.state.get().selectedOptimizations), { [HERO]: 3, [EMPTY]: 2, [MISSING]: 0 });
    assert.equal(t.manager.baseline()[0].variantIndex, 1);
  });

  jsTest('every override mutation recomputes from the cached baseline, not from the signal', function () {
    var t = setup({ selectedOptimizations: bl() });
    t.manager.setVariantOverride(HERO, 3);
    t.state.set({ selectedOptimizations: [] });
    t.manager.setVariantOverride(EMPTY, 5);
    assert.deepEqual(indices(t.state.get().selectedOptimizations), { [HERO]: 3, [EMPTY]: 5, [MISSING]: 0 });
  });

  jsTest('the preview interceptor captures new API data as the baseline and re-applies active overrides', function () {
    var t = setup({ selectedOptimizations: bl() });
    t.manager.setVariantOverride(HERO, 7);
    var incoming = [
      { experienceId: HERO, variantIndex: 0, variants: {} },
      { experienceId: EMPTY, variantIndex: 1, variants: {} },
    ];
    var out = t.registry.apply({ profile: { id: 'p' }, selectedOptimizations: incoming, changes: [] });
    assert.deepEqual(indices(out.selectedOptimizations), { [HERO]: 7, [EMPTY]: 1 });
    assert.deepEqual(out.profile, { id: 'p' });
    assert.equal(incoming[0].variantIndex, 0, 'input not mutated');
    assert.deepEqual(t.manager.baseline(), incoming, 'baseline = the un-overridden data');
    assert.ok(t.manager.takeRefresh());
    assert.ok(!t.manager.takeRefresh(), 'once per response');
    t.manager.resetAll();
    assert.deepEqual(t.state.get().selectedOptimizations, incoming, 'resetAll restores the captured baseline');
    var plain = t.registry.apply({ selectedOptimizations: bl() });
    assert.deepEqual(plain.selectedOptimizations, bl(), 'no overrides: data unchanged');
  });

  jsTest('applyChangeOverrides derives InlineVariable flags of overridden experiences', function () {
    var apply = ns.previewOverrides.applyChangeOverrides;
    var definitions = definitionsOf(flagExperiences());
    var baseline = [
      { key: 'flag-a', type: 'Variable', value: false, meta: { experienceId: HERO, variantIndex: 0 } },
      { key: 'flag-b', type: 'Variable', value: 0, meta: { experienceId: EMPTY, variantIndex: 0 } },
    ];
    var one = apply(baseline, { [HERO]: { experienceId: HERO, variantIndex: 1 } }, definitions);
    assert.deepEqual(one, [
      { key: 'flag-a', type: 'Variable', value: true, meta: { experienceId: HERO, variantIndex: 1 } },
      baseline[1],
    ]);
    var outOfRange = apply(baseline, { [HERO]: { experienceId: HERO, variantIndex: 99 } }, definitions);
    assert.equal(outOfRange[0].value, false);
    var already = [Object.assign({}, baseline[0], { value: true, meta: { experienceId: HERO, variantIndex: 1 } })];
    assert.equal(apply(already, { [HERO]: { experienceId: HERO, variantIndex: 0 } }, definitions)[0].value, false);
    assert.equal(apply(baseline, {}, definitions), baseline, 'no overrides: same array');
    assert.equal(apply(baseline, { [HERO]: { experienceId: HERO, variantIndex: 1 } }, ns.createExperienceDefinitions()), baseline, 'no entries: same array');
    var appended = apply([], { [EMPTY]: { experienceId: EMPTY, variantIndex: 1 } }, definitions);
    assert.deepEqual(appended, [{ key: 'flag-b', type: 'Variable', value: 42, meta: { experienceId: EMPTY, variantIndex: 1 } }]);
  });

  jsTest('overrides rewrite selections AND changes; reset restores both', function () {
    var definitions = definitionsOf(flagExperiences());
    var natural = [{ key: 'flag-a', type: 'Variable', value: false, meta: { experienceId: HERO, variantIndex: 0 } }];
    var t = setup({ selectedOptimizations: bl(), changes: natural }, definitions);
    t.manager.setVariantOverride(HERO, 1);
    assert.equal(ns.flags.getFlag('flag-a', t.state.get().changes), true);
    t.manager.deactivateAudience(AUD, [HERO, EMPTY]);
    assert.equal(ns.flags.getFlag('flag-a', t.state.get().changes), false);
    assert.equal(ns.flags.getFlag('flag-b', t.state.get().changes), 0);
    assert.deepEqual(indices(t.state.get().selectedOptimizations), { [HERO]: 0, [EMPTY]: 0, [MISSING]: 0 });
    t.manager.resetAudienceOverride(AUD);
    assert.deepEqual(t.manager.snapshot(), { audienceOverrides: {}, variantOverrides: {}, defaultAudienceQualifications: {}, defaultVariantIndices: {} });
    assert.equal(t.state.get().changes, natural, 'no override left: the natural changes');
    assert.equal(t.state.get().selectedOptimizations, t.manager.baseline());
    t.manager.setVariantOverride(EMPTY, 1);
    t.manager.resetOptimizationOverride(EMPTY);
    t.manager.resetOptimizationOverride('unknown');
    assert.equal(t.state.get().changes, natural);
    assert.equal(t.notified.count, 5, 'unknown reset is a no-op');
    var intercepted = t.registry.apply({ changes: [] });
    assert.deepEqual(intercepted.changes, [], 'no overrides');
    t.manager.setVariantOverride(HERO, 1);
    var next = t.registry.apply({ changes: [{ key: 'other', type: 'Variable', value: 1, meta: { experienceId: 'x', variantIndex: 0 } }] });
    assert.deepEqual(next.changes.map(function (c) { return c.key; }), ['other', 'flag-a'], 'derived flags applied to new API data');
  });

  jsTest('overrides: empty expIds change only the audience record; invalid variant index throws', function () {
    var t = setup({ selectedOptimizations: bl() });
    var before = t.state.get().selectedOptimizations;
    t.manager.activateAudience(AUD, []);
    assert.equal(t.state.get().selectedOptimizations, before);
    assert.deepEqual(t.manager.snapshot().audienceOverrides, { [AUD]: true });
    assert.throws(function () { t.manager.setVariantOverride(HERO, -1); }, /non-negative integer/);
    assert.throws(function () { t.manager.setVariantOverride(HERO, 1.5); }, /non-negative integer/);
    t.manager.clear();
    assert.equal(t.state.get().selectedOptimizations, undefined);
    assert.equal(t.manager.baseline(), undefined);
    t.manager.destroy();
    assert.equal(t.registry.size(), 0);
  });

  jsTest('state interceptors: order, sparse returns, deep copies, failures', function () {
    ns.host.setLogLevel('debug');
    var registry = ns.createStateInterceptorRegistry();
    var seen = [];
    var original = { profile: { id: 'p', traits: { a: 1 } }, selectedOptimizations: [], changes: [] };
    registry.add(function (data) {
      seen.push(data);
      if (data.profile.traits) data.profile.traits.a = 2; // a copy
      return { changes: undefined };
    });
    registry.add(function () { throw new Error('bad interceptor'); });
    var removeLast = registry.add(function (data) {
      seen.push(data);
      return 'not an object';
    });
    var out = registry.apply(original);
    assert.equal(original.profile.traits.a, 1);
    assert.ok(Object.prototype.hasOwnProperty.call(out, 'changes') && out.changes === undefined, 'present undefined replaces');
    assert.deepEqual(out.selectedOptimizations, []);
    assert.ok(!Object.prototype.hasOwnProperty.call(seen[1], 'changes') || seen[1].changes === undefined);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && /bad interceptor/.test(l.message); }));
    removeLast();
    assert.equal(registry.size(), 2);
    assert.deepEqual(registry.apply({ profile: { id: 'q' } }), { profile: { id: 'q' }, changes: undefined });
    assert.equal(typeof ns.applyInterceptors, 'function');
  });

  jsTest('experience definitions: recorded from entries, collections and only when valid', function () {
    var definitions = ns.createExperienceDefinitions();
    definitions.recordDocument(fx.optimizedEntry());
    assert.equal(definitions.size(), 2);
    assert.equal(definitions.get(fx.ids.EU).fields.nt_experience_id, fx.ids.EU);
    var fromCollection = ns.createExperienceDefinitions();
    fromCollection.recordDocument(fx.optimizedCollection());
    assert.ok(fromCollection.get(fx.ids.NA) !== undefined);
    assert.ok(!definitions.record(fx.entry('x', 'nt_experience', { nt_name: 'broken' })));
    assert.ok(!definitions.record(fx.link('x')));
  });

  // ---- through the bridge ------------------------------------------------------------------------

  function withBridge(config, body) {
    return function () {
      var pushes = [];
      globalThis.__nativeOnOverridesChanged = function (json) { pushes.push(JSON.parse(json)); };
      try {
        __bridge.initialize(Object.assign({ clientId: 'test-client', environment: 'main' }, config || {}));
        return body(pushes);
      } finally {
        delete globalThis.__nativeOnOverridesChanged;
        delete globalThis.__nativeOnFlagValueChanged;
      }
    };
  }

  function baselineWithFlags() {
    var fields = { internalTitle: 'Flags page', nt_experiences: flagExperiences() };
    return fx.entry('flags-page', 'page', fields);
  }

  jsTest('bridge: overrideVariant changes selections, flags and default resolution', withBridge({
    defaults: { consent: true, selectedOptimizations: [], changes: [{ key: 'flag-a', type: 'Variable', value: false, meta: { experienceId: HERO, variantIndex: 0 } }] },
  }, function (pushes) {
    var flagPushes = [];
    globalThis.__nativeOnFlagValueChanged = function (id, json) { flagPushes.push(json); };
    __bridge.prepareEntry(1, baselineWithFlags());
    __bridge.observeFlag('a', 'flag-a');
    __bridge.overrideVariant(fx.ids.EU, 1);
    var state = JSON.parse(__bridge.getState());
    assert.deepEqual(state.selectedOptimizations, [{ experienceId: fx.ids.EU, variantIndex: 1, variants: {} }]);
    var resolved = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry()));
    assert.equal(resolved.entry.sys.id, fx.ids.EU_VARIANT, 'no explicit selections: the overridden ones');
    assert.equal(__bridge.getFlag('flag-a'), 'false');
    __bridge.overrideVariant(HERO, 1);
    assert.equal(__bridge.getFlag('flag-a'), 'true');
    assert.deepEqual(flagPushes, ['false', 'true']);
    var preview = JSON.parse(__bridge.getPreviewState());
    assert.deepEqual(preview.variantOverrides, { [fx.ids.EU]: 1, [HERO]: 1 });
    assert.deepEqual(preview.defaultVariantIndices, { [fx.ids.EU]: 0, [HERO]: 0 });
    assert.equal(preview.previewModel, null);
    assert.equal(preview.previewPanelOpen, false);
    assert.equal(pushes.length, 2, 'one preview push per mutation');
    assert.deepEqual(pushes[1].variantOverrides, preview.variantOverrides);
    __bridge.resetVariantOverride(fx.ids.EU);
    __bridge.resetAllOverrides();
    assert.equal(__bridge.getFlag('flag-a'), 'false');
    assert.deepEqual(JSON.parse(__bridge.getState()).selectedOptimizations, []);
    assert.equal(pushes.length, 4);
    assert.throws(function () { __bridge.overrideVariant(HERO, -1); }, /non-negative integer/);
    assert.throws(function () { __bridge.overrideAudience(AUD, 'yes', []); }, /boolean/);
  }));

  jsTest('bridge: overrideAudience, an intercepted API refresh pushes the preview state after the state change', withBridge({
    defaults: { selectedOptimizations: bl(), profile: { id: 'p', audiences: [] } },
  }, function (pushes) {
    __bridge.overrideAudience(AUD, true, [HERO]);
    __bridge.overrideAudience('other', false, []);
    var preview = JSON.parse(__bridge.getPreviewState());
    assert.deepEqual(preview.audienceOverrides, { [AUD]: true, other: false });
    assert.deepEqual(preview.defaultAudienceQualifications, { [AUD]: false, other: false });
    var data = ns.applyInterceptors({ selectedOptimizations: [{ experienceId: HERO, variantIndex: 0, variants: {} }] });
    assert.equal(data.selectedOptimizations[0].variantIndex, 1);
    var before = pushes.length;
    // What the delivery code does next: write the intercepted data to the state.
    __bridge.setPreviewPanelOpen(true);
    assert.equal(pushes.length, before, 'no state change yet: nothing pushed');
    __bridge.reset();
    assert.ok(pushes.length > before);
    var after = JSON.parse(__bridge.getPreviewState());
    assert.deepEqual(after.audienceOverrides, {});
    assert.equal(after.selectedOptimizations, null);
    assert.equal(after.previewPanelOpen, true, 'kept across reset');
    __bridge.resetAudienceOverride(AUD);
  }));

  jsTest('bridge: loadDefinitions builds the preview model; getPreviewState is "null" before initialize', withBridge({
    defaults: { selectedOptimizations: bl(), profile: { id: 'p', audiences: [AUD] } },
  }, function (pushes) {
    var audiences = { items: [fx.audience(AUD, 'Europe'), fx.audience('zzz', 'asia'), fx.audience('bbb', 'Brazil')] };
    var heroExperience = fx.experience({
      id: HERO,
      name: 'Hero test',
      audience: fx.link(AUD),
      config: { distribution: [0.5, 0.5], traffic: 1, components: [fx.replacement('baseline', ['variant'])] },
    });
    var experiences = {
      items: [heroExperience, fx.experience({ id: MISSING, components: [fx.inlineVariable('k', 'String', 'a', ['b'])] })],
      includes: { Entry: [fx.entry('variant', 'hero', { internalTitle: 'Hero variant' })] },
    };
    assert.deepEqual(JSON.parse(__bridge.loadDefinitions(audiences, experiences)), { audienceCount: 3, experienceCount: 2 });
    assert.ok(/error/.test(__bridge.loadDefinitions(null, experiences)));
    __bridge.overrideVariant(HERO, 0);
    var preview = JSON.parse(__bridge.getPreviewState());
    var model = preview.previewModel;
    assert.equal(model.hasData, true);
    assert.deepEqual(model.audiencesWithExperiences.map(function (g) { return g.audience.name; }), ['All Visitors', 'asia', 'Brazil', 'Europe']);
    var europe = model.audiencesWithExperiences[3];
    assert.deepEqual(europe.audience, { id: AUD, name: 'Europe', isQualified: true, overrideState: 'default', isActive: true });
    var row = europe.experiences[0];
    assert.equal(row.id, HERO);
    assert.equal(row.name, 'Hero test');
    assert.equal(row.currentVariantIndex, 0);
    assert.equal(row.isOverridden, true);
    assert.equal(row.naturalVariantIndex, 1);
    assert.deepEqual(row.distribution, [
      { index: 0, variantRef: 'baseline', percentage: 50 },
      { index: 1, variantRef: 'variant', percentage: 50, name: 'Hero variant' },
    ]);
    assert.equal(model.audiencesWithExperiences[0].experiences[0].distribution[1].variantRef, '', 'inline variables have no variant entry');
    assert.equal(model.sdkVariantIndices[HERO], 0);
    assert.deepEqual(preview.audienceNameMap, { [AUD]: 'Europe', zzz: 'asia', bbb: 'Brazil' });
    assert.equal(preview.experienceNameMap[HERO], 'Hero test');
    assert.ok(pushes.length >= 2);
    __bridge.destroy();
    assert.equal(__bridge.getPreviewState(), 'null');
    __bridge.overrideVariant(HERO, 1);
    __bridge.resetAllOverrides();
  }));
})();
