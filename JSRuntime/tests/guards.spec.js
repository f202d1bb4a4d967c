// tests/guards.spec.js — type guards and nt_config handling.
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var guards = globalThis.__optimization.guards;

  jsTest('isRecord accepts plain and null-prototype objects only', function () {
    [[], null, 'value', 1, true, undefined].forEach(function (value) {
      assert.equal(guards.isRecord(value), false, 'isRecord(' + String(value) + ')');
    });
    assert.equal(guards.isRecord({}), true);
    assert.equal(guards.isRecord(Object.create(null)), true);
  });

  jsTest('isEntryLink accepts only entry links with a string id, and isResolvedEntry refuses a link', function () {
    var link = { sys: { type: 'Link', linkType: 'Entry', id: 'abc' } };
    assert.equal(guards.isEntryLink(link), true);
    assert.equal(guards.isResolvedEntry(link), false);
    assert.equal(guards.isEntryLink({ sys: { type: 'Link', linkType: 'Asset', id: 'abc' } }), false);
    assert.equal(guards.isEntryLink({ sys: { type: 'Entry', id: 'abc' } }), false);
    assert.equal(guards.isEntryLink({ sys: { type: 'Link', linkType: 'Entry', id: 5 } }), false);
  });

  jsTest('isResolvedEntry requires sys.type, ids, metadata and fields', function () {
    var entry = fx.entry('e1', 'content', {});
    assert.equal(guards.isResolvedEntry(entry), true);
    var noMetadata = fx.entry('e1', 'content', {});
    delete noMetadata.metadata;
    assert.equal(guards.isResolvedEntry(noMetadata), false);
    var arrayFields = fx.entry('e1', 'content', {});
    arrayFields.fields = [];
    assert.equal(guards.isResolvedEntry(arrayFields), false);
    var noContentType = fx.entry('e1', 'content', {});
    delete noContentType.sys.contentType;
    assert.equal(guards.isResolvedEntry(noContentType), false);
    var numericId = fx.entry('e1', 'content', {});
    numericId.sys.id = 1;
    assert.equal(guards.isResolvedEntry(numericId), false);
  });

  jsTest('normalizeOptimizationConfig fills only missing keys and copies arrays', function () {
    var empty = { distribution: [], traffic: 0, components: [], sticky: false };
    assert.deepEqual(guards.normalizeOptimizationConfig(undefined), empty);
    assert.deepEqual(guards.normalizeOptimizationConfig(null), empty);
    var input = { distribution: [0.25, 0.75], components: [] };
    var normalized = guards.normalizeOptimizationConfig(input);
    assert.deepEqual(normalized, { distribution: [0.25, 0.75], traffic: 0, components: [], sticky: false });
    assert.notEqual(normalized.distribution, input.distribution);
    assert.deepEqual(guards.normalizeOptimizationConfig({ traffic: 1, sticky: true, primaryMetric: 'x' }),
      { distribution: [], traffic: 1, components: [], sticky: true });
  });

  jsTest('a component with a non-string baseline id invalidates the experience', function () {
    var experience = fx.experience({ id: 'exp1', components: [] });
    experience.fields.nt_config = { components: [{ type: 'EntryReplacement', baseline: { id: 123 }, variants: [] }] };
    assert.equal(guards.isOptimizationEntry(experience), false);
    delete experience.fields.nt_config;
    assert.equal(guards.isOptimizationEntry(experience), true);
    assert.equal('nt_config' in experience.fields, false, 'nt_config stays absent');
    experience.fields.nt_config = null;
    assert.equal(guards.isOptimizationEntry(experience), true);
  });

  jsTest('nt_config component union', function () {
    var valid = [
      { baseline: { id: 'b' }, variants: [{ id: 'v' }] },
      { type: 'EntryReplacement', baseline: { id: 'b', hidden: true }, variants: [{ id: '', hidden: true }] },
      fx.inlineVariable('flag', 'Boolean', false, [true]),
      fx.inlineVariable('count', 'Number', 0, [42]),
      fx.inlineVariable('theme', 'Object', { color: 'blue' }, [{ color: 'red' }, null]),
      fx.inlineVariable('label', 'String', 'a', ['b']),
    ];
    valid.forEach(function (component, i) {
      assert.equal(guards.isOptimizationComponent(component), true, 'valid #' + i);
    });
    var invalid = [
      { type: 'Mystery', baseline: { id: 'b' }, variants: [] },
      { baseline: { id: 'b' } },
      { baseline: { id: 'b', hidden: 'yes' }, variants: [] },
      { baseline: { id: 'b' }, variants: [{ id: 1 }] },
      { baseline: 'b', variants: [] },
      { type: 'InlineVariable', key: 'k', valueType: 'Date', baseline: { value: 1 }, variants: [] },
      { type: 'InlineVariable', key: 1, valueType: 'Number', baseline: { value: 1 }, variants: [] },
      { type: 'InlineVariable', key: 'k', valueType: 'Number', baseline: {}, variants: [] },
      { type: 'InlineVariable', key: 'k', valueType: 'Number', baseline: { value: 1 }, variants: [{}] },
      null,
      [],
    ];
    invalid.forEach(function (component, i) {
      assert.equal(guards.isOptimizationComponent(component), false, 'invalid #' + i);
    });
    assert.equal(guards.isOptimizationConfig({ distribution: [0.5, 'x'] }), false);
    assert.equal(guards.isOptimizationConfig({ traffic: '1' }), false);
    assert.equal(guards.isOptimizationConfig({ sticky: 1 }), false);
    assert.equal(guards.isOptimizationConfig({ components: {} }), false);
    assert.equal(guards.isOptimizationConfig({ primaryMetric: '', distributionType: 'x' }), true);
  });

  jsTest('isOptimizationEntry checks the nt_experience field schema', function () {
    function valid() {
      return fx.experience({
        id: 'exp1',
        audience: fx.audience('aud1', 'Somewhere'),
        components: [fx.replacement('b', ['v'])],
        variants: [fx.entry('v', 'content', {}), fx.link('v2')],
      });
    }
    assert.equal(guards.isOptimizationEntry(valid()), true);
    var mutations = [
      function (e) { e.sys.contentType.sys.id = 'content'; },
      function (e) { e.fields.nt_experience_id = 5; },
      function (e) { e.fields.nt_description = 5; },
      function (e) { e.fields.nt_variants = {}; },
      function (e) { e.fields.nt_variants = [{ sys: { id: 'v' } }]; },
      function (e) { e.fields.nt_audience = { sys: { type: 'Link', linkType: 'Asset', id: 'a' } }; },
      function (e) { e.fields.nt_audience.fields.nt_name = 7; },
    ];
    mutations.forEach(function (mutate, i) {
      var experience = valid();
      mutate(experience);
      assert.equal(guards.isOptimizationEntry(experience), false, 'mutation #' + i);
    });
    var optional = valid();
    optional.fields.nt_description = null;
    optional.fields.nt_audience = null;
    delete optional.fields.nt_variants;
    assert.equal(guards.isOptimizationEntry(optional), true);
    var linkedAudience = valid();
    linkedAudience.fields.nt_audience = fx.link('aud1');
    assert.equal(guards.isOptimizationEntry(linkedAudience), true, 'an audience link is tolerated');
    assert.equal(guards.isAudienceEntry(fx.audience('aud1', 'Somewhere')), true);
  });

  jsTest('followEntryLink resolves links through an index only', function () {
    var target = fx.entry('t', 'content', {});
    var index = new Map([['t', target]]);
    assert.equal(guards.followEntryLink(index, fx.link('t')), target);
    var missing = fx.link('missing');
    assert.equal(guards.followEntryLink(index, missing), missing);
    assert.equal(guards.followEntryLink(null, fx.link('t')).sys.type, 'Link');
    assert.equal(guards.followEntryLink(index, target), target);
    assert.equal(guards.followEntryLink(index, 'x'), 'x');
  });
})();
