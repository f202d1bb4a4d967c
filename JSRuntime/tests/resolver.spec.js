// tests/resolver.spec.js — variant resolution vectors.
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var ids = fx.ids;
  var resolver = globalThis.__optimization.resolver;
  var host = globalThis.__optimization.host;

  function resolve(entry, selections, options) {
    return resolver.resolveOptimizedEntry(entry, selections, options);
  }

  function eu(oe) {
    return oe.fields.nt_experiences[0];
  }

  function debugMessages() {
    return __testHost.logs.filter(function (l) { return l.level === 'debug'; }).map(function (l) { return l.message; });
  }

  jsTest('no selections resolve to the baseline without a selection', function () {
    var oe = fx.optimizedEntry();
    var result = resolve(oe);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, undefined);
    assert.equal(result.context, undefined);
    assert.equal(result.selectionIndex, -1);
    assert.equal(result.experienceIndex, -1);
    assert.equal(result.variantIndexInList, -1);
    assert.equal(resolve(oe, []).entry, oe);
    assert.equal(resolve(oe, null).entry, oe);
  });

  jsTest('an entry without nt_experiences is not optimized', function () {
    var oe = fx.optimizedEntry();
    var plain = Object.assign({}, oe, { fields: { internalTitle: 'Plain', text: 'No experiences' } });
    var result = resolve(plain, fx.selectedOptimizations());
    assert.equal(result.entry, plain);
    assert.equal(result.selectedOptimization, undefined);
  });

  jsTest('selections without a matching experience give the baseline', function () {
    var oe = fx.optimizedEntry();
    var selections = fx.selectedOptimizations().filter(function (s) {
      return s.experienceId !== ids.EU && s.experienceId !== ids.NA;
    });
    var result = resolve(oe, selections);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, undefined);
    assert.equal(result.context, undefined);
  });

  jsTest('variantIndex 0 gives the baseline with the selection', function () {
    var oe = fx.optimizedEntry();
    var variants = {};
    variants[ids.OE] = ids.OE;
    var selections = [fx.selection(ids.EU, 0, variants)];
    var result = resolve(oe, selections);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, selections[0]);
    assert.equal(result.selectedOptimization.variantIndex, 0);
    assert.equal(result.context.resolvedEntry, oe);
    assert.equal('selectedVariant' in result.context, false);
  });

  jsTest('an out-of-range variantIndex gives the baseline with the selection', function () {
    var oe = fx.optimizedEntry();
    var variants = {};
    variants[ids.OE] = 'non-existing';
    var result = resolve(oe, [fx.selection(ids.EU, 2, variants)]);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization.experienceId, ids.EU);
    assert.equal(result.selectedOptimization.variantIndex, 2);
    assert.equal(result.variantIndexInList, -1);
  });

  jsTest('an experience with empty nt_variants gives the baseline with the selection', function () {
    var oe = fx.optimizedEntry();
    eu(oe).fields.nt_variants = [];
    var result = resolve(oe, fx.selectedOptimizations());
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization.experienceId, ids.EU);
    assert.equal(result.selectedOptimization.variantIndex, 1);
    assert.equal(result.isEmptyVariant, false);
  });

  jsTest('the selected variant replaces the baseline', function () {
    var oe = fx.optimizedEntry();
    var so = fx.selectedOptimizations();
    var result = resolve(oe, so);
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    assert.equal(result.entry, eu(oe).fields.nt_variants[0]);
    assert.equal(result.selectedOptimization.experienceId, ids.EU);
    assert.equal(result.selectedOptimization.variantIndex, 1);
    assert.equal(result.selectionIndex, 4);
    assert.equal(so[result.selectionIndex], result.selectedOptimization);
    assert.equal(result.experienceIndex, 0);
    assert.equal(result.variantIndexInList, 0);
  });

  function heroBaseline(extraBaselineFields, extraVariantFields) {
    var variant = fx.entry('variant', 'hero', Object.assign({ headline: 'Hero' }, extraVariantFields || {}));
    var experience = fx.experience({
      id: ids.HERO_EXPERIENCE,
      components: [fx.replacement('baseline', ['variant'], { type: 'EntryReplacement' })],
      variants: [variant],
    });
    var baseline = fx.entry('baseline', 'page', Object.assign({ nt_experiences: [experience] }, extraBaselineFields || {}));
    return { baseline: baseline, variant: variant };
  }

  function heroSelections() {
    return [fx.selection(ids.HERO_EXPERIENCE, 1, { baseline: 'variant' })];
  }

  jsTest('the variant may have another content type than the baseline', function () {
    var graph = heroBaseline();
    var result = resolve(graph.baseline, heroSelections());
    assert.equal(result.entry, graph.variant);
    assert.equal(result.entry.sys.contentType.sys.id, 'hero');
  });

  jsTest('rich-text embeds forming an object cycle still resolve', function () {
    var graph = heroBaseline();
    graph.baseline.fields.body = fx.richText([graph.variant]);
    graph.variant.fields.body = fx.richText([graph.baseline]);
    var result = resolve(graph.baseline, heroSelections());
    assert.equal(result.entry, graph.variant);
    assert.equal(result.selectedOptimization.experienceId, ids.HERO_EXPERIENCE);
    assert.equal(result.selectedOptimization.variantIndex, 1);
  });

  jsTest('resolution never reads consumer fields (a throwing field getter is never touched)', function () {
    var graph = heroBaseline();
    Object.defineProperty(graph.baseline.fields, 'body', { enumerable: true, get: function () { throw new Error('walked'); } });
    Object.defineProperty(graph.variant.fields, 'body', { enumerable: true, get: function () { throw new Error('walked'); } });
    var result = resolve(graph.baseline, heroSelections());
    assert.equal(result.entry, graph.variant);
  });

  jsTest('a successful resolution reports its baseline, optimization, resolved entry, selection, variant and audience in its context', function () {
    var oe = fx.optimizedEntry();
    var result = resolve(oe, fx.selectedOptimizations());
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    var context = result.context;
    assert.equal(context.baselineEntry, oe);
    assert.equal(context.optimizationEntry, eu(oe));
    assert.equal(context.optimizationEntry.fields.nt_experience_id, ids.EU);
    assert.equal(context.resolvedEntry, result.entry);
    assert.equal(context.selectedOptimization, result.selectedOptimization);
    assert.deepEqual(context.selectedVariant, { id: ids.EU_VARIANT, hidden: false });
    assert.equal(context.audienceEntry.fields.nt_audience_id, ids.EU_AUDIENCE);
  });

  function emptyVariantCase(variantId, experienceId) {
    var experience = fx.experience({
      id: experienceId,
      components: [{ type: 'EntryReplacement', baseline: { id: ids.OE }, variants: [{ id: variantId, hidden: false }] }],
      variants: [],
    });
    var baseline = fx.entry(ids.OE, 'content', { nt_experiences: [experience] });
    var variants = {};
    variants[ids.OE] = variantId;
    return { baseline: baseline, selections: [fx.selection(experienceId, 1, variants)] };
  }

  jsTest('an empty variant gives the baseline flagged isEmptyVariant', function () {
    host.setLogLevel('debug');
    var c = emptyVariantCase('', ids.EMPTY_EXPERIENCE);
    var result = resolve(c.baseline, c.selections);
    assert.equal(result.entry, c.baseline);
    assert.equal(result.isEmptyVariant, true);
    assert.equal(result.selectedOptimization.experienceId, ids.EMPTY_EXPERIENCE);
    assert.equal(result.selectedOptimization.variantIndex, 1);
    assert.deepEqual(result.context.selectedVariant, { id: '', hidden: false });
    assert.equal(result.context.resolvedEntry, c.baseline);
    var messages = debugMessages();
    assert.ok(messages.some(function (m) { return m.indexOf('resolved to empty variant') !== -1; }), 'empty-variant debug log');
    assert.ok(!messages.some(function (m) { return m.indexOf('Could not resolve') !== -1; }), 'no failure log');
  });

  jsTest('a variant entry missing from nt_variants gives the baseline, not an empty variant', function () {
    host.setLogLevel('debug');
    var c = emptyVariantCase(ids.MISSING_VARIANT, ids.MISSING_VARIANT_EXPERIENCE);
    var result = resolve(c.baseline, c.selections);
    assert.equal(result.entry, c.baseline);
    assert.equal(result.isEmptyVariant, false);
    assert.equal(result.selectedOptimization.experienceId, ids.MISSING_VARIANT_EXPERIENCE);
    assert.deepEqual(result.context.selectedVariant, { id: ids.MISSING_VARIANT, hidden: false });
    assert.ok(debugMessages().indexOf('Could not resolve optimized entry variant: could not find a valid replacement variant entry for ' + ids.OE) !== -1);
  });

  jsTest('the resolution context names the matched optimization entry; empty selections give none', function () {
    var oe = fx.optimizedEntry();
    var result = resolve(oe, fx.selectedOptimizations());
    assert.equal(result.context.optimizationEntry.fields.nt_experience_id, ids.EU);
    assert.equal(result.experienceIndex, 0);
    var none = resolve(oe, []);
    assert.equal(none.context, undefined);
    assert.equal(none.experienceIndex, -1);
  });

  jsTest('the resolution context names the selected variant config; none for variant index 999 or an experience without components', function () {
    var oe = fx.optimizedEntry();
    var result = resolve(oe, [fx.selection(ids.EU, 1)]);
    assert.equal(result.context.selectedVariant.id, ids.EU_VARIANT);
    var far = resolve(oe, [fx.selection(ids.EU, 999)]);
    assert.equal(far.entry, oe);
    assert.equal('selectedVariant' in far.context, false);
    eu(oe).fields.nt_config.components = [];
    var bare = resolve(oe, [fx.selection(ids.EU, 1)]);
    assert.equal(bare.entry, oe);
    assert.equal('selectedVariant' in bare.context, false);
  });

  jsTest('an unknown variant id or an unresolved variant link gives the baseline', function () {
    var oe = fx.optimizedEntry();
    eu(oe).fields.nt_config.components[0].variants[0].id = 'non-existing-variant-id';
    var unknown = resolve(oe, [fx.selection(ids.EU, 1)]);
    assert.equal(unknown.entry, oe);
    assert.equal(unknown.context.selectedVariant.id, 'non-existing-variant-id');

    var linked = fx.optimizedEntry();
    eu(linked).fields.nt_variants = [fx.link(ids.EU_VARIANT)];
    var result = resolve(linked, [fx.selection(ids.EU, 1)]);
    assert.equal(result.entry, linked);
    assert.equal(result.selectedOptimization.experienceId, ids.EU);
    assert.equal(result.variantIndexInList, -1);
  });

  jsTest('variantIndex wins over a disagreeing variants map, which stays unchanged', function () {
    var oe = fx.optimizedEntry();
    var variants = {};
    variants[ids.OE] = ids.OE;
    var selections = [fx.selection(ids.EU, 1, variants)];
    var result = resolve(oe, selections);
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    assert.deepEqual(selections[0].variants, variants);
    assert.equal(selections[0].variants[ids.OE], ids.OE);
  });

  jsTest('several entries resolve independently, each with its own baseline', function () {
    var plain = fx.entry('plain-entry', 'content', { internalTitle: 'Plain' });
    var oe = fx.optimizedEntry();
    var selections = [fx.selection(ids.EU, 1)];
    var results = [plain, oe].map(function (entry) { return resolve(entry, selections); });
    assert.equal(results[0].entry, plain);
    assert.equal(results[0].selectedOptimization, undefined);
    assert.equal(results[1].entry.sys.id, ids.EU_VARIANT);
    assert.equal(results[1].context.baselineEntry, oe);
  });

  jsTest('an nt_experiences element that is neither link nor entry gives the baseline', function () {
    var oe = fx.optimizedEntry();
    oe.fields.nt_experiences = [{ sys: { id: 'missing-link-shape' } }];
    var result = resolve(oe, [fx.selection('missing-link-shape', 1)]);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, undefined);
  });

  jsTest('the first experience in nt_experiences order wins, not the first selection', function () {
    var oe = fx.optimizedEntry();
    var selections = [fx.selection(ids.NA, 1), fx.selection(ids.EU, 1)];
    var result = resolve(oe, selections);
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    assert.equal(result.selectionIndex, 1);
    var baselineFirst = resolve(oe, [fx.selection(ids.EU, 0), fx.selection(ids.NA, 1)]);
    assert.equal(baselineFirst.entry, oe, 'variantIndex 0 of the first match stops the search');
  });

  jsTest('duplicate selections: the first one wins', function () {
    var oe = fx.optimizedEntry();
    var selections = [fx.selection(ids.EU, 0), fx.selection(ids.EU, 1)];
    var result = resolve(oe, selections);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, selections[0]);
    assert.equal(result.selectionIndex, 0);
  });

  jsTest('a hidden baseline component is ignored; the next matching component is used', function () {
    var oe = fx.optimizedEntry();
    var config = eu(oe).fields.nt_config;
    config.components = [
      fx.replacement(ids.OE, ['something-else'], { hiddenBaseline: true }),
      fx.inlineVariable('cta-color', 'String', 'blue', ['green']),
      fx.replacement(ids.OE, [ids.EU_VARIANT]),
    ];
    assert.equal(resolve(oe, [fx.selection(ids.EU, 1)]).entry.sys.id, ids.EU_VARIANT);
    config.components = [fx.replacement(ids.OE, [ids.EU_VARIANT], { hiddenBaseline: true })];
    assert.equal(resolve(oe, [fx.selection(ids.EU, 1)]).entry, oe);
  });

  jsTest('a three-experience example: variant, empty variant, baseline', function () {
    var variantB = fx.entry('heroVariantB', 'hero', { headline: 'Welcome back!' });
    var experience = fx.experience({
      id: 'expReturning01',
      audience: fx.audience('audReturning', 'Returning'),
      config: {
        traffic: 1,
        distribution: [0.5, 0.25, 0.25],
        components: [
          { type: 'EntryReplacement', baseline: { id: 'heroBaseline01' }, variants: [{ id: 'heroVariantB', hidden: false }, { id: '', hidden: true }] },
          fx.inlineVariable('cta-color', 'String', 'blue', ['green', 'red']),
        ],
      },
      variants: [variantB],
    });
    var baseline = fx.entry('heroBaseline01', 'hero', {
      headline: 'Welcome, everyone',
      nt_experiences: [fx.link('expNotIncluded'), experience],
    });
    function run(index) {
      return resolve(baseline, [{ experienceId: 'expReturning01', variantIndex: index, variants: {} }]);
    }
    assert.equal(run(1).entry, variantB);
    assert.equal(run(1).experienceIndex, 1);
    assert.equal(run(2).entry, baseline);
    assert.equal(run(2).isEmptyVariant, true);
    assert.equal(run(0).entry, baseline);
    assert.equal(run(0).selectedOptimization.variantIndex, 0);
    assert.equal(run(3).entry, baseline);
    assert.equal(run(3).selectedOptimization.variantIndex, 3);
  });

  jsTest('resolution logs only at debug level, with the spec messages', function () {
    host.setLogLevel('log');
    var oe = fx.optimizedEntry();
    resolve(oe, []);
    resolve(fx.entry('plain', 'content', {}), [fx.selection(ids.EU, 1)]);
    resolve(oe, [fx.selection('unknown', 1)]);
    resolve(oe, [fx.selection(ids.EU, 0)]);
    resolve(oe, [fx.selection(ids.EU, 1)]);
    var levels = __testHost.logs.map(function (l) { return l.level; });
    assert.deepEqual(levels, ['debug', 'debug', 'debug', 'debug', 'debug']);
    assert.deepEqual(__testHost.logs.map(function (l) { return l.message; }), [
      'Could not resolve optimized entry variant: no selectedOptimizations exist for the current profile',
      'Could not resolve optimized entry variant: entry plain is not optimized',
      'Could not resolve optimized entry variant: could not find an optimization entry for ' + ids.OE,
      'Resolved optimization entry for entry ' + ids.OE + ' is baseline',
      'Entry ' + ids.OE + ' has been resolved to variant entry ' + ids.EU_VARIANT,
    ]);
  });

  jsTest('at the default log level resolution logs nothing', function () {
    resolve(fx.optimizedEntry(), []);
    assert.equal(__testHost.logs.length, 0);
  });

  jsTest('resolution never throws, whatever the input', function () {
    var inputs = [null, undefined, 'text', 42, true, [], {}, { sys: null }, { sys: { type: 'Array' } },
      { sys: { type: 'Array' }, items: [] }, { sys: { type: 'Entry' }, fields: null }];
    var selectionsList = [undefined, null, 'x', {}, [null], [1, 'two'], [{ experienceId: ids.EU, variantIndex: 1 }]];
    inputs.forEach(function (input) {
      selectionsList.forEach(function (selections) {
        var result = resolve(input, selections);
        assert.equal(result.entry, input);
        assert.equal(result.selectedOptimization, undefined);
      });
    });
    var oe = fx.optimizedEntry();
    var trap = new Proxy({}, { get: function () { throw new Error('trap'); } });
    var result = resolve(oe, [trap, fx.selection(ids.EU, 1)]);
    assert.equal(result.entry, oe);
    assert.equal(result.selectedOptimization, undefined);
  });

  jsTest('resolveInto reuses the caller result object and clears it between calls', function () {
    var oe = fx.optimizedEntry();
    var result = resolver.createResult();
    assert.equal(resolver.resolveInto(result, oe, [fx.selection(ids.EU, 1)]), result);
    assert.equal(result.entry.sys.id, ids.EU_VARIANT);
    resolver.resolveInto(result, oe, []);
    assert.deepEqual(result, {
      entry: oe, selectedOptimization: undefined, selectionIndex: -1, experienceIndex: -1,
      variantIndexInList: -1, isEmptyVariant: false, context: undefined,
    });
  });
})();
