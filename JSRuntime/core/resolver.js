// core/resolver.js
// Contract: `__optimization.resolver`, variant resolution.
//   resolveOptimizedEntry(input, selections, options?) → result
//   resolveInto(result, input, selections, options?) → result   (fills a caller-owned result made
//                                 by createResult(), so the hot path allocates nothing per call
//                                 except the context object when a selection matched)
//   createResult() → {entry: undefined, selectedOptimization: undefined, selectionIndex: -1,
//                     experienceIndex: -1, variantIndexInList: -1, isEmptyVariant: false,
//                     context: undefined}
// `input` is a baseline entry or a raw CDA collection (baseline = the item whose sys.id equals
// `options.entryId`, else items[0]; links are then followed by id through items + includes.Entry).
// `options.index` may carry a prebuilt entry index (entryIndex.buildEntryIndex) to skip building.
// Result fields: `entry` (the baseline or the variant entry, the very object found, links inside
// it untouched; the input itself when a collection has no such baseline), `selectedOptimization`
// (the matching element of `selections`), `selectionIndex` (its index, -1 none),
// `experienceIndex` (index in baseline.fields.nt_experiences of the matched experience, -1 none),
// `variantIndexInList` (index in that experience's fields.nt_variants of the entry returned,
// -1 = baseline), `isEmptyVariant`, and `context` ({selectedOptimization, optimizationEntry,
// audienceEntry?, baselineEntry, resolvedEntry, selectedVariant?}) whenever a selection matched.
// Decisions: a variantIndex that is not a non-negative integer, or out of range, gives the
// baseline with the selection still reported (no Array.prototype.at wrap-around); a malformed
// nt_experiences element (bad shape, bad nt_config, audience without nt_audience_id) is skipped
// like an unresolved link and other experiences still resolve. Never throws: any failure gives
// {entry: baseline}. Logs only at "debug".
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/resolver.js', {
    provides: ['resolver'],
    uses: ['entryIndex', 'guards', 'host'],
  });
  var guards = ns.guards;
  var entryIndex = ns.entryIndex;
  var host = ns.host;

  var FAILURE_PREFIX = 'Could not resolve optimized entry variant: ';

  function createResult() {
    return {
      entry: undefined,
      selectedOptimization: undefined,
      selectionIndex: -1,
      experienceIndex: -1,
      variantIndexInList: -1,
      isEmptyVariant: false,
      context: undefined,
    };
  }

  function clearResult(result, entry) {
    result.entry = entry;
    result.selectedOptimization = undefined;
    result.selectionIndex = -1;
    result.experienceIndex = -1;
    result.variantIndexInList = -1;
    result.isEmptyVariant = false;
    result.context = undefined;
  }

  function debug(message) {
    host.log('debug', message);
  }

  function debugEnabled() {
    return host.isLogEnabled('debug');
  }

  function entryId(entry) {
    return guards.isRecord(entry) && guards.isRecord(entry.sys) ? String(entry.sys.id) : String(entry);
  }

  function findSelection(selections, experienceId) {
    for (var i = 0; i < selections.length; i++) {
      var selection = selections[i];
      if (guards.isRecord(selection) && selection.experienceId === experienceId) return i;
    }
    return -1;
  }

  // First EntryReplacement component (type absent or "EntryReplacement") that is not hidden and
  // whose baseline is this entry. The config was validated with the experience.
  function findReplacement(config, baselineId) {
    if (!guards.isRecord(config) || !Array.isArray(config.components)) return undefined;
    var components = config.components;
    for (var i = 0; i < components.length; i++) {
      var component = components[i];
      if ((component.type === undefined || component.type === 'EntryReplacement') &&
        component.baseline.hidden !== true && component.baseline.id === baselineId) {
        return component;
      }
    }
    return undefined;
  }

  function run(result, input, selections, options) {
    var baseline = input;
    var index = options !== undefined && options !== null && options.index instanceof Map ? options.index : null;
    var collection = entryIndex.isCollection(input);
    if (collection) {
      baseline = entryIndex.findBaseline(input, options !== undefined && options !== null ? options.entryId : undefined);
      if (baseline === undefined) {
        if (debugEnabled()) debug(FAILURE_PREFIX + 'the collection has no baseline entry');
        return;
      }
      result.entry = baseline;
    }

    // Step 1: no selections (checked before anything else).
    if (!Array.isArray(selections) || selections.length === 0) {
      if (debugEnabled()) debug(FAILURE_PREFIX + 'no selectedOptimizations exist for the current profile');
      return;
    }

    // Step 2: the baseline must be a resolved entry with an nt_experiences array (the
    // elements are judged one by one in step 3).
    if (!guards.isResolvedEntry(baseline) || !Array.isArray(baseline.fields.nt_experiences)) {
      if (debugEnabled()) debug(FAILURE_PREFIX + 'entry ' + entryId(baseline) + ' is not optimized');
      return;
    }
    var baselineId = baseline.sys.id;
    if (collection && index === null) index = entryIndex.buildEntryIndex(input);

    // Steps 3 and 4: first valid experience (in nt_experiences order) selected by any selection;
    // the first selection with that experience id wins.
    var experiences = baseline.fields.nt_experiences;
    var experience;
    var experienceIndex = -1;
    var selectionIndex = -1;
    for (var i = 0; i < experiences.length; i++) {
      var candidate = guards.followEntryLink(index, experiences[i]);
      if (!guards.isOptimizationEntry(candidate, index)) continue;
      selectionIndex = findSelection(selections, candidate.fields.nt_experience_id);
      if (selectionIndex !== -1) {
        experience = candidate;
        experienceIndex = i;
        break;
      }
    }
    if (experienceIndex === -1) {
      if (debugEnabled()) debug(FAILURE_PREFIX + 'could not find an optimization entry for ' + baselineId);
      return;
    }

    var selection = selections[selectionIndex];
    var fields = experience.fields;
    var context = {
      selectedOptimization: selection,
      optimizationEntry: experience,
      baselineEntry: baseline,
      resolvedEntry: baseline,
    };
    var audience = guards.followEntryLink(index, fields.nt_audience);
    if (guards.isAudienceEntry(audience)) context.audienceEntry = audience;
    result.selectedOptimization = selection;
    result.selectionIndex = selectionIndex;
    result.experienceIndex = experienceIndex;
    result.context = context;

    // Step 5: variant index 0 is the baseline.
    var variantIndex = selection.variantIndex;
    if (variantIndex === 0) {
      if (debugEnabled()) debug('Resolved optimization entry for entry ' + baselineId + ' is baseline');
      return;
    }

    // Step 6: the replacement variant for this baseline (integers 1…length only).
    var component = findReplacement(fields.nt_config, baselineId);
    if (component === undefined || !Number.isInteger(variantIndex) || variantIndex < 1 ||
      variantIndex > component.variants.length) {
      if (debugEnabled()) debug(FAILURE_PREFIX + 'could not find a valid replacement variant entry for ' + baselineId);
      return;
    }
    var variant = component.variants[variantIndex - 1];
    context.selectedVariant = variant;

    // Step 7: empty variant.
    if (variant.id === '') {
      result.isEmptyVariant = true;
      if (debugEnabled()) debug('Entry ' + baselineId + ' resolved to empty variant');
      return;
    }

    // Step 8: the variant entry, by sys.id, among nt_variants (links followed through the index).
    var variantEntries = fields.nt_variants;
    var found;
    var foundIndex = -1;
    if (Array.isArray(variantEntries)) {
      for (var j = 0; j < variantEntries.length; j++) {
        var element = guards.followEntryLink(index, variantEntries[j]);
        if (element.sys.id === variant.id) {
          found = element;
          foundIndex = j;
          break;
        }
      }
    }
    if (foundIndex === -1 || !guards.isResolvedEntry(found)) {
      if (debugEnabled()) debug(FAILURE_PREFIX + 'could not find a valid replacement variant entry for ' + baselineId);
      return;
    }

    // Step 9: success.
    result.entry = found;
    result.variantIndexInList = foundIndex;
    context.resolvedEntry = found;
    if (debugEnabled()) debug('Entry ' + baselineId + ' has been resolved to variant entry ' + variant.id);
  }

  function resolveInto(result, input, selections, options) {
    clearResult(result, input);
    try {
      run(result, input, selections, options);
    } catch (error) {
      // Defensive: exotic inputs (throwing getters, proxies) fall back to the baseline.
      clearResult(result, result.entry);
      if (debugEnabled()) debug(FAILURE_PREFIX + 'unexpected input (' + (error instanceof Error ? error.message : 'non-Error thrown') + ')');
    }
    return result;
  }

  function resolveOptimizedEntry(input, selections, options) {
    return resolveInto(createResult(), input, selections, options);
  }

  ns.resolver = {
    createResult: createResult,
    resolveInto: resolveInto,
    resolveOptimizedEntry: resolveOptimizedEntry,
  };
})();
