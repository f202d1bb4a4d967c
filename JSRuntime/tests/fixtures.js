// tests/fixtures.js
// Contract: `globalThis.fixtures`, factories of Contentful-shaped test data (composed for this
// project in the shapes Contentful and the Experience API use; every call returns a fresh,
// unshared graph, so tests may mutate what they get). No Node APIs.
//   ids                          the ids used below (OE, EU, NA, their audiences and variants, …)
//   entry(id, contentType, fields)   the spec's T(id, fields, ct): a resolved CDA entry
//   link(id)                     an unresolved entry link
//   audience(id, name)           an nt_audience entry
//   experience({id, name?, type?, audience?, components?, variants?, config?})  an nt_experience
//   replacement(baselineId, variantIds, {type?, hiddenBaseline?})   an EntryReplacement component
//   inlineVariable(key, valueType, baselineValue, variantValues)    an InlineVariable component
//   richText(targets)            a rich-text document embedding each target (entry or link)
//   optimizedEntry()             OE: baseline 4ib0hs… with nt_experiences [EU 2qVK…, NA 6KfL…]
//   selectedOptimizations()      SO: 20 selections incl. {2qVK…, variantIndex 1}, without 6KfL…
//   selection(experienceId, variantIndex, variants?)   one selection (sticky false)
//   optimizedCollection()        OE as a raw CDA collection response (links + includes.Entry)
(function () {
  'use strict';

  var ids = {
    OE: '4ib0hsHWoSOnCVdDkizE8d',
    EU: '2qVK4T5lnScbswoyBuGipd',
    EU_AUDIENCE: '2WzXDaWtDmstHl9p8Wufpp',
    EU_VARIANT: '4k6ZyFQnR2POY5IJLLlJRb',
    NA: '6KfLDCdA75BGwr5HfSeXac',
    NA_AUDIENCE: '5P8sJgSXhjNUlUfk7ee88u',
    NA_VARIANT: '7Ae0ke0e3YqRLutG35d4Ve',
    HERO_EXPERIENCE: '6IueRX1pS3iMJncbhUQTba',
    EMPTY_EXPERIENCE: '5jT8mNPxQ2rVuY4wZaB6Cd',
    MISSING_VARIANT_EXPERIENCE: '7LcA9DeF2GhI4JkL6MnOpQ',
    MISSING_VARIANT: '3Z2hP4vR8sT1nY6mK9qL0a',
  };

  function sysLink(linkType, id) {
    return { sys: { type: 'Link', linkType: linkType, id: id } };
  }

  function entry(id, contentType, fields) {
    return {
      metadata: { tags: [], concepts: [] },
      sys: {
        space: sysLink('Space', 'uelxcuo7v97l'),
        id: id,
        type: 'Entry',
        createdAt: '2025-10-13T11:59:56.556Z',
        updatedAt: '2025-10-14T08:28:15.913Z',
        environment: sysLink('Environment', 'master'),
        publishedVersion: 7,
        revision: 2,
        contentType: sysLink('ContentType', contentType),
        locale: 'en-US',
      },
      fields: fields || {},
    };
  }

  function link(id) {
    return sysLink('Entry', id);
  }

  function audience(id, name) {
    return entry(id, 'nt_audience', {
      nt_name: name,
      nt_description: 'Visitors located in ' + name,
      nt_rules: { any: [{ all: [{ type: 'location', key: 'continent', operator: 'equal', value: name, count: '1', conditions: [] }] }] },
      nt_audience_id: id,
      nt_metadata: { type: 'origin' },
    });
  }

  function replacement(baselineId, variantIds, options) {
    var settings = options || {};
    var component = {
      baseline: settings.hiddenBaseline ? { id: baselineId, hidden: true } : { id: baselineId },
      variants: variantIds.map(function (id) {
        return { id: id, hidden: false };
      }),
    };
    if (settings.type !== undefined) component.type = settings.type;
    return component;
  }

  function inlineVariable(key, valueType, baselineValue, variantValues) {
    return {
      type: 'InlineVariable',
      key: key,
      valueType: valueType,
      baseline: { value: baselineValue },
      variants: variantValues.map(function (value) { return { value: value }; }),
    };
  }

  function experience(spec) {
    var fields = {
      nt_name: spec.name || '[Personalization] ' + spec.id,
      nt_type: spec.type || 'nt_personalization',
      nt_config: spec.config || {
        traffic: 1,
        distribution: [0, 1],
        components: spec.components || [],
        primaryMetric: '',
      },
      nt_experience_id: spec.id,
      nt_metadata: { type: 'origin' },
    };
    if (spec.audience !== undefined) fields.nt_audience = spec.audience;
    if (spec.variants !== undefined) fields.nt_variants = spec.variants;
    return entry(spec.id, 'nt_experience', fields);
  }

  function richText(targets) {
    return {
      nodeType: 'document',
      data: {},
      content: [
        { nodeType: 'paragraph', data: {}, content: [{ nodeType: 'text', value: 'Hello ', marks: [], data: {} }] },
      ].concat(targets.map(function (target) {
        return { nodeType: 'embedded-entry-block', data: { target: target }, content: [] };
      })),
    };
  }

  function contentFields(title, text) {
    return { internalTitle: title, text: text };
  }

  function optimizedEntry() {
    var eu = experience({
      id: ids.EU,
      name: '[Personalization] Visitors from Europe',
      audience: audience(ids.EU_AUDIENCE, 'Europe'),
      components: [replacement(ids.OE, [ids.EU_VARIANT])],
      variants: [entry(ids.EU_VARIANT, 'content', contentFields('[Variant] Visitors from Europe', 'Hello Europe'))],
    });
    var na = experience({
      id: ids.NA,
      name: '[Personalization] Visitors from North America',
      audience: audience(ids.NA_AUDIENCE, 'North America'),
      components: [replacement(ids.OE, [ids.NA_VARIANT])],
      variants: [entry(ids.NA_VARIANT, 'content', contentFields('[Variant] Visitors from North America', 'Hello North America'))],
    });
    var fields = contentFields('[Baseline] All Visitors from a Continent', 'Hello visitor');
    fields.nt_experiences = [eu, na];
    return entry(ids.OE, 'content', fields);
  }

  function selection(experienceId, variantIndex, variants) {
    return { experienceId: experienceId, variantIndex: variantIndex, variants: variants || {}, sticky: false };
  }

  function selectedOptimizations() {
    var list = [
      selection('1lNQ9YUJfDBQLMR6O0jjP8', 1, { '5Rn1R8HqsbcdxMx46qLilf': '5irIOMxcTxfhfteBKTOduP' }),
      selection('2cSY1TX0nDfYe4fuIrGQ1K', 0, { '2Z2WLOx07InSewC3LUB3eX': '2Z2WLOx07InSewC3LUB3eX' }),
      selection('2kT7B3F1GH3sDBo2glpywy', 1, { '4WFNEIlY8bzmZcjmjCCUOm': '6v6IuRsAR2AZoAnISXH8oP' }),
      selection('2O4ZmYjJFSn0E8ti8tonut', 0, { qEfH7mk21RnqzUHlL6cIC: 'qEfH7mk21RnqzUHlL6cIC' }),
      selection(ids.EU, 1, { '4ib0hsHWoSOnCVdDkizE8d': ids.EU_VARIANT }),
      selection('44jIanEK8sjH9SoJ5AOa7m', 1, { '4LIbcbuqUx6wtfJIvHnyON': '' }),
      selection('4aSQ6HYCrSQP2UktnEGq3X', 0, { '3n4FIM0bQNZKQwomidlmZ8': '3n4FIM0bQNZKQwomidlmZ8' }),
      selection('5kuc9KgA9q9RXnlbDxDlY', 1, { '5XHssysWUDECHzKLzoIsg1': '4bmHsNUaEibELHwWCon3dt' }),
      selection('6df0DI1BG9GTb9qIcjfkmh', 1, { '74PjP6eFEOxD66R88LrL76': '5OYKPG3KHGgKczGtZ5itv9' }),
      selection('6ZbWjihD33P0ZQDi1NBPNj', 1, { '74PjP6eFEOxD66R88LrL76': '2ow3EkPI5jKevWoTT2BVG8' }),
      selection('BBvRD6Uv03k69wPwB9Ou6', 1, { xFwgG3oNaOcjzWiGe4vXo: '6iyPl6vfDH5AoClf3MtYlh' }),
      selection('603SW4mLeYB4AkPhdU2Jvj', 1, { '2Z2WLOx07InSewC3LUB3eX': '3VBvwg9ysjjmnJRTQtIYK4' }),
      selection(ids.HERO_EXPERIENCE, 0, {}),
      selection('1aBcD3eFgH5iJkL7mNoPqR', 2, { '1xYzA2bCdE3fGhI4jKlMnO': '7pQrS8tUvW9xYzA0bCdEfG' }),
      selection('2bCdE4fGhI6jKlM8nOpQrS', 1, { '2yZaB3cDeF4gHiJ5kLmNoP': '8qRsT9uVwX0yZaB1cDeFgH' }),
      selection('3cDeF5gHiJ7kLmN9oPqRsT', 0, {}),
      selection('4dEfG6hIjK8lMnO0pQrStU', 1, {}),
      selection('5eFgH7iJkL9mNoP1qRsTuV', 1, { '3zAbC4dEfG5hIjK6lMnOpQ': '9rStU0vWxY1zAbC2dEfGhI' }),
      selection('6fGhI8jKlM0nOpQ2rStUvW', 3, { '4aBcD5eFgH6iJkL7mNoPqR': '0sTuV1wXyZ2aBcD3eFgHiJ' }),
      selection('7gHiJ9kLmN1oPqR3sTuVwX', 1, { '5bCdE6fGhI7jKlM8nOpQrS': '1tUvW2xYzA3bCdE4fGhIjK' }),
    ];
    return list;
  }

  // OE as the Contentful Delivery API returns it with include=10: links everywhere, the linked
  // entries once each in includes.Entry.
  function optimizedCollection() {
    var baselineFields = contentFields('[Baseline] All Visitors from a Continent', 'Hello visitor');
    baselineFields.nt_experiences = [link(ids.EU), link(ids.NA)];
    var eu = experience({
      id: ids.EU,
      audience: link(ids.EU_AUDIENCE),
      components: [replacement(ids.OE, [ids.EU_VARIANT])],
      variants: [link(ids.EU_VARIANT)],
    });
    var na = experience({
      id: ids.NA,
      audience: link(ids.NA_AUDIENCE),
      components: [replacement(ids.OE, [ids.NA_VARIANT])],
      variants: [link(ids.NA_VARIANT)],
    });
    return {
      sys: { type: 'Array' },
      total: 1,
      skip: 0,
      limit: 100,
      items: [entry(ids.OE, 'content', baselineFields)],
      includes: {
        Entry: [
          audience(ids.EU_AUDIENCE, 'Europe'),
          eu,
          entry(ids.EU_VARIANT, 'content', contentFields('[Variant] Visitors from Europe', 'Hello Europe')),
          audience(ids.NA_AUDIENCE, 'North America'),
          na,
          entry(ids.NA_VARIANT, 'content', contentFields('[Variant] Visitors from North America', 'Hello North America')),
        ],
      },
    };
  }

  globalThis.fixtures = {
    ids: ids,
    entry: entry,
    link: link,
    audience: audience,
    experience: experience,
    replacement: replacement,
    inlineVariable: inlineVariable,
    richText: richText,
    optimizedEntry: optimizedEntry,
    selectedOptimizations: selectedOptimizations,
    selection: selection,
    optimizedCollection: optimizedCollection,
  };
})();
