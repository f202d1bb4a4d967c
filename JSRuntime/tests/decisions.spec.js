// tests/decisions.spec.js — where resolution is stricter than a plain lookup: non-integer or out-of-range indexes,
// malformed experiences, raw CDA collections.
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var ids = fx.ids;
  var resolver = globalThis.__optimization.resolver;

  function resolve(entry, selections, options) {
    return resolver.resolveOptimizedEntry(entry, selections, options);
  }

  // An OE whose EU experience has two variants, so wrap-around (`at(-1)`) would be visible.
  function twoVariantOE() {
    var oe = fx.optimizedEntry();
    var experience = oe.fields.nt_experiences[0];
    experience.fields.nt_config.components = [fx.replacement(ids.OE, [ids.EU_VARIANT, 'secondVariant'])];
    experience.fields.nt_variants.push(fx.entry('secondVariant', 'content', { internalTitle: 'Second' }));
    return oe;
  }

  // ---- variant indexes ------------------------------------------------------------------------------

  jsTest('a valid integer variantIndex still picks its variant', function () {
    var oe = twoVariantOE();
    assert.equal(resolve(oe, [fx.selection(ids.EU, 1)]).entry.sys.id, ids.EU_VARIANT);
    var second = resolve(oe, [fx.selection(ids.EU, 2)]);
    assert.equal(second.entry.sys.id, 'secondVariant');
    assert.equal(second.variantIndexInList, 1);
  });

  [
    ['negative (-1, no wrap-around to the last variant)', -1],
    ['negative (-2)', -2],
    ['fractional (1.7, no truncation to 1)', 1.7],
    ['fractional (0.5)', 0.5],
    ['a numeric string ("1")', '1'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['null', null],
    ['missing', undefined],
    ['out of range (3 of 2)', 3],
  ].forEach(function (testCase) {
    jsTest('variantIndex ' + testCase[0] + ' gives the baseline and still reports the selection', function () {
      var oe = twoVariantOE();
      var selection = { experienceId: ids.EU, variantIndex: testCase[1], variants: {}, sticky: false };
      var result = resolve(oe, [selection]);
      assert.equal(result.entry, oe);
      assert.equal(result.selectedOptimization, selection);
      assert.equal(result.isEmptyVariant, false);
      assert.equal(result.variantIndexInList, -1);
      assert.ok(result.context !== undefined, 'a context is still produced');
      assert.equal('selectedVariant' in result.context, false);
    });
  });

  // ---- malformed experiences ------------------------------------------------------------------------------

  // Each case breaks something on OE; the selections name both EU and NA. Expected: the broken
  // part is skipped and the next valid experience on the same entry resolves.
  [
    ['a malformed nt_experiences element', ids.EU_VARIANT, function (oe) {
      oe.fields.nt_experiences.unshift({ sys: { id: 'broken' } });
    }],
    ['a non-object nt_experiences element', ids.EU_VARIANT, function (oe) {
      oe.fields.nt_experiences.unshift('not an entry', null, 7);
    }],
    ['an experience with a malformed nt_config', ids.NA_VARIANT, function (oe) {
      oe.fields.nt_experiences[0].fields.nt_config.components = [{ type: 'EntryReplacement', baseline: { id: 123 }, variants: [] }];
    }],
    ['an experience with an unknown component type', ids.NA_VARIANT, function (oe) {
      oe.fields.nt_experiences[0].fields.nt_config.components.push({ type: 'Mystery', baseline: { id: ids.OE }, variants: [] });
    }],
    ['an experience whose audience lacks nt_audience_id', ids.NA_VARIANT, function (oe) {
      delete oe.fields.nt_experiences[0].fields.nt_audience.fields.nt_audience_id;
    }],
    ['an experience whose audience has another content type', ids.NA_VARIANT, function (oe) {
      oe.fields.nt_experiences[0].fields.nt_audience.sys.contentType.sys.id = 'content';
    }],
    ['an experience without nt_name', ids.NA_VARIANT, function (oe) {
      delete oe.fields.nt_experiences[0].fields.nt_name;
    }],
    ['an experience with an invalid nt_type', ids.NA_VARIANT, function (oe) {
      oe.fields.nt_experiences[0].fields.nt_type = 'nt_mystery';
    }],
    ['an experience whose nt_variants holds a non-entry', ids.NA_VARIANT, function (oe) {
      oe.fields.nt_experiences[0].fields.nt_variants.push({ title: 'not an entry' });
    }],
  ].forEach(function (testCase) {
    jsTest(testCase[0] + ' disables only that experience', function () {
      var oe = fx.optimizedEntry();
      testCase[2](oe);
      var result = resolve(oe, [fx.selection(ids.EU, 1), fx.selection(ids.NA, 1)]);
      assert.equal(result.entry.sys.id, testCase[1]);
      var experience = oe.fields.nt_experiences[result.experienceIndex];
      assert.equal(experience.fields.nt_variants[result.variantIndexInList], result.entry);
      if (testCase[1] === ids.NA_VARIANT) {
        var onlyBroken = resolve(oe, [fx.selection(ids.EU, 1)]);
        assert.equal(onlyBroken.entry, oe, 'the broken experience itself never matches');
        assert.equal(onlyBroken.selectedOptimization, undefined);
      }
    });
  });

  jsTest('the baseline itself must be a resolved entry with an nt_experiences array', function () {
    var oe = fx.optimizedEntry();
    var localized = Object.assign({}, oe, { fields: { nt_experiences: { 'en-US': oe.fields.nt_experiences } } });
    assert.equal(resolve(localized, [fx.selection(ids.EU, 1)]).entry, localized);
    var noMetadata = Object.assign({}, oe);
    delete noMetadata.metadata;
    assert.equal(resolve(noMetadata, [fx.selection(ids.EU, 1)]).entry, noMetadata);
  });

  // ---- raw CDA collections ------------------------------------------------------------------------------

  jsTest('a raw CDA collection resolves through includes, output in the input form', function () {
    var collection = fx.optimizedCollection();
    var result = resolve(collection, fx.selectedOptimizations());
    var variant = collection.includes.Entry[2];
    assert.equal(variant.sys.id, ids.EU_VARIANT);
    assert.equal(result.entry, variant, 'the included entry object itself');
    assert.equal(result.experienceIndex, 0);
    assert.equal(result.variantIndexInList, 0);
    assert.equal(result.context.baselineEntry, collection.items[0]);
    assert.equal(result.context.optimizationEntry, collection.includes.Entry[1]);
    assert.equal(result.context.audienceEntry, collection.includes.Entry[0]);
    assert.equal(collection.items[0].fields.nt_experiences[0].sys.type, 'Link');
  });

  jsTest('the baseline is items[0] or the item named by options.entryId', function () {
    var collection = fx.optimizedCollection();
    var other = fx.entry('otherItem', 'content', { internalTitle: 'Other' });
    collection.items.unshift(other);
    assert.equal(resolve(collection, fx.selectedOptimizations()).entry, other);
    var named = resolve(collection, fx.selectedOptimizations(), { entryId: ids.OE });
    assert.equal(named.entry.sys.id, ids.EU_VARIANT);
    var missing = resolve(collection, fx.selectedOptimizations(), { entryId: 'not-there' });
    assert.equal(missing.entry, collection, 'no such baseline: the input comes back unchanged');
  });

  jsTest('without selections the collection resolves to its baseline item', function () {
    var collection = fx.optimizedCollection();
    assert.equal(resolve(collection, []).entry, collection.items[0]);
    assert.equal(resolve(collection).entry, collection.items[0]);
  });

  jsTest('rich-text embed and back-reference cycles in a collection are safe', function () {
    var collection = fx.optimizedCollection();
    var baseline = collection.items[0];
    var variant = collection.includes.Entry[2];
    // Baseline embeds the variant, the variant embeds the baseline (rich text), and the variant
    // and the experience point back at the baseline (reference fields).
    baseline.fields.body = fx.richText([fx.link(ids.EU_VARIANT)]);
    variant.fields.body = fx.richText([fx.link(ids.OE)]);
    variant.fields.parent = fx.link(ids.OE);
    collection.includes.Entry[1].fields.relatedPage = fx.link(ids.OE);
    var result = resolve(collection, fx.selectedOptimizations());
    assert.equal(result.entry, variant);
    assert.equal(result.entry.fields.parent.sys.type, 'Link', 'links inside the output stay unresolved');
    assert.equal(JSON.parse(JSON.stringify(result.entry)).sys.id, ids.EU_VARIANT, 'the output is still JSON-serializable');
  });

  jsTest('an object-cycle back reference in a resolved graph is safe', function () {
    var oe = fx.optimizedEntry();
    var experience = oe.fields.nt_experiences[0];
    experience.fields.nt_variants[0].fields.parent = oe;
    experience.fields.baselinePage = oe;
    oe.fields.self = oe;
    assert.equal(resolve(oe, fx.selectedOptimizations()).entry.sys.id, ids.EU_VARIANT);
  });

  jsTest('a link whose target is not included is skipped, other experiences resolve', function () {
    var collection = fx.optimizedCollection();
    collection.includes.Entry.splice(1, 1); // drop the EU experience
    var result = resolve(collection, [fx.selection(ids.EU, 1), fx.selection(ids.NA, 1)]);
    assert.equal(result.entry.sys.id, ids.NA_VARIANT);
    assert.equal(result.experienceIndex, 1);
    var onlyMissing = resolve(collection, [fx.selection(ids.EU, 1)]);
    assert.equal(onlyMissing.entry, collection.items[0]);
    assert.equal(onlyMissing.selectedOptimization, undefined);
  });

  jsTest('an unincluded variant or audience link is tolerated', function () {
    var collection = fx.optimizedCollection();
    collection.includes.Entry = collection.includes.Entry.filter(function (e) {
      return e.sys.id !== ids.EU_VARIANT && e.sys.id !== ids.EU_AUDIENCE;
    });
    var result = resolve(collection, [fx.selection(ids.EU, 1)]);
    assert.equal(result.entry, collection.items[0], 'unresolved variant link → baseline');
    assert.equal(result.selectedOptimization.experienceId, ids.EU);
    assert.equal(result.context.selectedVariant.id, ids.EU_VARIANT);
    assert.equal('audienceEntry' in result.context, false);
  });

  jsTest('an included but malformed audience disables only its experience', function () {
    var collection = fx.optimizedCollection();
    delete collection.includes.Entry[0].fields.nt_audience_id; // EU audience
    var result = resolve(collection, [fx.selection(ids.EU, 1), fx.selection(ids.NA, 1)]);
    assert.equal(result.entry.sys.id, ids.NA_VARIANT);
  });

  jsTest('a prebuilt entry index is used as given', function () {
    var collection = fx.optimizedCollection();
    var index = globalThis.__optimization.entryIndex.buildEntryIndex(collection);
    assert.equal(index.get(ids.EU_VARIANT), collection.includes.Entry[2]);
    var result = resolve(collection.items[0], fx.selectedOptimizations(), { index: index });
    assert.equal(result.entry, collection.includes.Entry[2]);
  });
})();
