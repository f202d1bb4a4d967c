// core/prepared-documents.js
// Contract: `__optimization.createPreparedDocuments({capacity?, onDocument?})` → the documents a
// host prepared for resolution, and the resolution over them (JSRuntime/README.md,
// `prepareEntry`, `prepareSelections`, `adoptEntry`, `adoptSelections`, `resolvePrepared` and
// its compact result, `registerDeferred`). Both faces use it: the bridge (`__bridge`, one
// visitor's contexts) and the service (`__service`, its engine's contexts). Holds content, never
// visitor state:
//   prepareEntry(key, document, entryId?, contentKey?)   stores an entry, or a CDA collection
//       with `entryId` or `items[0]` as the baseline (its id index is built once, here); throws
//       when the collection has no items or no item `entryId`. `onDocument(document)` sees every
//       document stored.
//   prepareSelections(key, selections, contentKey?)   stores an array or null; throws otherwise.
//   adoptEntry(key, contentKey) / adoptSelections(key, contentKey) → bool   makes `key` refer to
//       what was prepared under `contentKey` before (true), or false (the host prepares it).
//   resolvePrepared(entryKey, selectionsKey, contexts) → "<sel>|<exp>|<var>|<empty>|<contextId>",
//       "?e" (entry unknown), "?s" (selections unknown); selectionsKey null/undefined ⇒ nothing
//       selected. A matched selection's context is registered in `contexts` (a context
//       registry, core/context-registry.js); `contexts` null ⇒ "-1|-1|-1|0|" for known keys.
//   registerDeferred({pairs, records}, contexts) → "" | "?e<pair>" | "?s<pair>"   registers, in
//       order, the contexts of answers the host served from its own memo (`registerAs`); throws a
//       TypeError on another shape; `contexts` null ⇒ "".
// Keys are strings or finite numbers (else TypeError). Every cache is a bounded LRU of
// `capacity` keys (default 1000). The hot path (`resolvePrepared`) allocates nothing but its
// result and the context registration.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/prepared-documents.js', {
    provides: ['createPreparedDocuments'],
    uses: ['createLruCache', 'entryIndex', 'resolver'],
  });
  var resolver = ns.resolver;
  var entryIndex = ns.entryIndex;

  var DEFAULT_CAPACITY = 1000;
  var NOTHING_SELECTED = '-1|-1|-1|0|';

  function assertKey(method, key) {
    if (typeof key !== 'string' && !(typeof key === 'number' && isFinite(key))) {
      throw new TypeError(method + ' key must be a string or a finite number.');
    }
  }

  function createPreparedDocuments(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var capacity = settings.capacity === undefined ? DEFAULT_CAPACITY : settings.capacity;
    var onDocument = typeof settings.onDocument === 'function' ? settings.onDocument : null;
    // Prepared documents by the host's key (a small integer handle on the hot path), and the same
    // records by content key so a second handle on equal content adopts them without a transfer.
    var preparedEntries = ns.createLruCache(capacity);
    var preparedSelections = ns.createLruCache(capacity);
    var entriesByContent = ns.createLruCache(capacity);
    var selectionsByContent = ns.createLruCache(capacity);
    // Reused by resolvePrepared so the hot path allocates no result object.
    var scratch = resolver.createResult();

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
      if (onDocument !== null) onDocument(document);
      // The record doubles as the resolver's options ({index}).
      var record = { baseline: baseline, index: index };
      preparedEntries.set(key, record);
      if (typeof contentKey === 'string') entriesByContent.set(contentKey, record);
    }

    function prepareSelections(key, selections, contentKey) {
      assertKey('prepareSelections', key);
      if (selections !== null && !Array.isArray(selections)) {
        throw new TypeError('prepareSelections selections must be an array or null.');
      }
      preparedSelections.set(key, selections);
      if (typeof contentKey === 'string') selectionsByContent.set(contentKey, selections);
    }

    // Resolves into `scratch`; false when a document is not prepared (`missing` says which).
    function resolvePair(entryKey, selectionsKey, missing) {
      var prepared = preparedEntries.get(entryKey);
      if (prepared === undefined) {
        missing.kind = '?e';
        return false;
      }
      var selections = null;
      if (selectionsKey !== null && selectionsKey !== undefined) {
        selections = preparedSelections.get(selectionsKey);
        if (selections === undefined) {
          missing.kind = '?s';
          return false;
        }
      }
      resolver.resolveInto(scratch, prepared.baseline, selections, prepared);
      return true;
    }

    // Drops the references so the scratch result does not keep entries alive.
    function clearScratch() {
      scratch.entry = undefined;
      scratch.selectedOptimization = undefined;
      scratch.context = undefined;
    }

    function resolvePrepared(entryKey, selectionsKey, contexts) {
      var prepared = preparedEntries.get(entryKey);
      if (prepared === undefined) return '?e';
      var selections = null;
      if (selectionsKey !== null && selectionsKey !== undefined) {
        selections = preparedSelections.get(selectionsKey);
        if (selections === undefined) return '?s';
      }
      if (contexts === null) return NOTHING_SELECTED;
      resolver.resolveInto(scratch, prepared.baseline, selections, prepared);
      var contextId = scratch.context === undefined ? '' : contexts.register(scratch.context);
      var text = scratch.selectionIndex + '|' + scratch.experienceIndex + '|' + scratch.variantIndexInList +
        '|' + (scratch.isEmptyVariant ? '1|' : '0|') + contextId;
      clearScratch();
      return text;
    }

    function registerDeferred(batch, contexts) {
      if (batch === null || typeof batch !== 'object' || !Array.isArray(batch.pairs) || !Array.isArray(batch.records)) {
        throw new TypeError('registerDeferred expects {pairs, records}.');
      }
      if (contexts === null) return '';
      var resolved = [];
      var missing = { kind: '' };
      for (var p = 0; p < batch.pairs.length; p++) {
        var pair = batch.pairs[p];
        if (!resolvePair(pair[0], pair[1], missing)) return missing.kind + p;
        resolved.push(scratch.context);
        clearScratch();
      }
      for (var r = 0; r + 2 < batch.records.length; r += 3) {
        var context = resolved[batch.records[r]];
        if (context !== undefined) contexts.registerAs(batch.records[r + 2], context, batch.records[r + 1]);
      }
      return '';
    }

    return {
      prepareEntry: prepareEntry,
      prepareSelections: prepareSelections,
      adoptEntry: adoptEntry,
      adoptSelections: adoptSelections,
      resolvePrepared: resolvePrepared,
      registerDeferred: registerDeferred,
    };
  }

  ns.createPreparedDocuments = createPreparedDocuments;
})();
