// bridge/bridge-resolution.js
// Contract: `__optimization.bridgeResolution` — the bridge's resolution methods over prepared
// documents (JSRuntime/README.md, `resolveOptimizedEntry`, `prepareEntry`, `prepareSelections`,
// `adoptEntry`, `adoptSelections`, `resolvePrepared` and its compact result):
//   {resolveOptimizedEntry, prepareEntry, prepareSelections, adoptEntry, adoptSelections,
//    resolvePrepared, registerDeferred, resetPreparedCaches(size), experienceDefinitions() → the nt_experience
//    entries seen (preview overrides derive flags from them)}
// The caches are bounded LRUs (`entryCacheSize` each); resolution works before initialize (it
// then selects nothing). The hot path (`resolvePrepared`) allocates nothing but its result.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-resolution.js', {
    provides: ['bridgeResolution'],
    uses: [
      'bridgeConfig', 'bridgeShared', 'createExperienceDefinitions', 'createLruCache', 'entryIndex',
      'guards', 'host', 'resolver',
    ],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var messageOf = shared.messageOf;
  var resolver = ns.resolver;
  var entryIndex = ns.entryIndex;

  var DEFAULT_ENTRY_CACHE_SIZE = ns.bridgeConfig.DEFAULT_ENTRY_CACHE_SIZE;
  var NOTHING_SELECTED = '-1|-1|-1|0|';
  // Prepared documents by the host's key (a small integer handle on the hot path), and the same
  // records by content key so a second handle on equal content adopts them without a transfer.
  var preparedEntries = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var preparedSelections = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var entriesByContent = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  var selectionsByContent = ns.createLruCache(DEFAULT_ENTRY_CACHE_SIZE);
  // nt_experience entries seen through prepareEntry / resolveOptimizedEntry / loadDefinitions:
  // preview overrides derive the flags of overridden experiences from them.
  var experienceDefinitions = ns.createExperienceDefinitions(DEFAULT_ENTRY_CACHE_SIZE);
  // Reused by resolvePrepared so the hot path allocates no result object.
  var scratch = resolver.createResult();

  function toJSON(method, value) {
    try {
      return JSON.stringify(value);
    } catch (error) {
      throw new Error(method + ': the result cannot be serialized to JSON (' + messageOf(error) + ').');
    }
  }

  function resolveOptimizedEntry(baseline, selections) {
    experienceDefinitions.recordDocument(baseline);
    if (shared.current === null) {
      return toJSON('resolveOptimizedEntry', { entry: resolver.resolveOptimizedEntry(baseline, null).entry });
    }
    var chosen = selections === undefined ? shared.current.state.get().selectedOptimizations : selections;
    var result = resolver.resolveOptimizedEntry(baseline, chosen);
    var output = { entry: result.entry };
    if (result.selectedOptimization !== undefined) output.selectedOptimization = result.selectedOptimization;
    if (result.context !== undefined) output.optimizationContextId = shared.current.contexts.register(result.context);
    if (result.isEmptyVariant) output.isEmptyVariant = true;
    return toJSON('resolveOptimizedEntry', output);
  }

  function resetPreparedCaches(size) {
    preparedEntries = ns.createLruCache(size);
    preparedSelections = ns.createLruCache(size);
    entriesByContent = ns.createLruCache(size);
    selectionsByContent = ns.createLruCache(size);
    experienceDefinitions = ns.createExperienceDefinitions(size);
  }

  function assertKey(method, key) {
    if (typeof key !== 'string' && !(typeof key === 'number' && isFinite(key))) {
      throw new TypeError(method + ' key must be a string or a finite number.');
    }
  }

  // adoptEntry(key, contentKey) / adoptSelections(key, contentKey): when a document with this
  // content key was prepared before (under another key), make `key` refer to it and return true;
  // otherwise return false and the host calls prepare* with the JSON.
  function adoptEntry(key, contentKey) {
    assertKey('adoptEntry', key);
    var record = entriesByContent.get(contentKey);
    if (record === undefined) return false;
    preparedEntries.set(key, record);
    return true;
  }

  function adoptSelections(key, contentKey) {
    assertKey('adoptSelections', key);
    var selections = selectionsByContent.get(contentKey);
    if (selections === undefined) return false;
    preparedSelections.set(key, selections);
    return true;
  }

  // prepareEntry(key, document, entryId?, contentKey?)
  function prepareEntry(key, document, entryId, contentKey) {
    assertKey('prepareEntry', key);
    var baseline = document;
    var index = null;
    if (entryIndex.isCollection(document)) {
      var wanted = typeof entryId === 'string' ? entryId : undefined;
      baseline = entryIndex.findBaseline(document, wanted);
      if (baseline === undefined) {
        throw new Error(wanted === undefined
          ? 'prepareEntry: the collection has no items.'
          : 'prepareEntry: entry "' + wanted + '" is not among the collection items.');
      }
      index = entryIndex.buildEntryIndex(document);
    }
    experienceDefinitions.recordDocument(document);
    // The record doubles as the resolver's options ({index}).
    var record = { baseline: baseline, index: index };
    preparedEntries.set(key, record);
    if (typeof contentKey === 'string') entriesByContent.set(contentKey, record);
  }

  // prepareSelections(key, selections, contentKey?)
  function prepareSelections(key, selections, contentKey) {
    assertKey('prepareSelections', key);
    if (selections !== null && !Array.isArray(selections)) {
      throw new TypeError('prepareSelections selections must be an array or null.');
    }
    preparedSelections.set(key, selections);
    if (typeof contentKey === 'string') selectionsByContent.set(contentKey, selections);
  }

  function resolvePrepared(entryKey, selectionsKey) {
    var prepared = preparedEntries.get(entryKey);
    if (prepared === undefined) return '?e';
    var selections = null;
    if (selectionsKey !== null && selectionsKey !== undefined) {
      selections = preparedSelections.get(selectionsKey);
      if (selections === undefined) return '?s';
    }
    if (shared.current === null) return NOTHING_SELECTED;
    resolver.resolveInto(scratch, prepared.baseline, selections, prepared);
    var contextId = scratch.context === undefined ? '' : shared.current.contexts.register(scratch.context);
    var text = scratch.selectionIndex + '|' + scratch.experienceIndex + '|' + scratch.variantIndexInList +
      '|' + (scratch.isEmptyVariant ? '1|' : '0|') + contextId;
    // Drop references so the scratch result does not keep entries alive.
    scratch.entry = undefined;
    scratch.selectedOptimization = undefined;
    scratch.context = undefined;
    return text;
  }

  // registerDeferred({pairs: [[entryKey, selectionsKey|null], …], records: [pair, time, id, …]}):
  // registers, in order, the contexts of answers the host served from its own cache: for each
  // record, the context of resolving pair `pair` under the host-drawn `id`, as if registered at
  // `time` (so the registry ends up as eager registration would have left it). Returns '' when
  // done, or '?e<pair>' / '?s<pair>' before registering anything when a pair's document is no
  // longer prepared (the host prepares it and calls again).
  function registerDeferred(batch) {
    if (batch === null || typeof batch !== 'object' || !Array.isArray(batch.pairs) || !Array.isArray(batch.records)) {
      throw new TypeError('registerDeferred expects {pairs, records}.');
    }
    if (shared.current === null) return '';
    var contexts = [];
    for (var p = 0; p < batch.pairs.length; p++) {
      var pair = batch.pairs[p];
      var prepared = preparedEntries.get(pair[0]);
      if (prepared === undefined) return '?e' + p;
      var selections = null;
      if (pair[1] !== null && pair[1] !== undefined) {
        selections = preparedSelections.get(pair[1]);
        if (selections === undefined) return '?s' + p;
      }
      resolver.resolveInto(scratch, prepared.baseline, selections, prepared);
      contexts.push(scratch.context);
      scratch.entry = undefined;
      scratch.selectedOptimization = undefined;
      scratch.context = undefined;
    }
    var registry = shared.current.contexts;
    for (var r = 0; r + 2 < batch.records.length; r += 3) {
      var context = contexts[batch.records[r]];
      if (context !== undefined) registry.registerAs(batch.records[r + 2], context, batch.records[r + 1]);
    }
    return '';
  }

  ns.bridgeResolution = {
    registerDeferred: registerDeferred,
    resolveOptimizedEntry: resolveOptimizedEntry,
    prepareEntry: prepareEntry,
    prepareSelections: prepareSelections,
    adoptEntry: adoptEntry,
    adoptSelections: adoptSelections,
    resolvePrepared: resolvePrepared,
    resetPreparedCaches: resetPreparedCaches,
    experienceDefinitions: function () {
      return experienceDefinitions;
    },
  };
})();
