// bridge/bridge-resolution.js
// Contract: `__optimization.bridgeResolution` — the bridge's resolution methods over prepared
// documents: the functions of the topic "Resolution" of `__bridge` in
// JSRuntime/bridge-contract.json (bridge.js puts them on `__bridge`), and
// resetPreparedCaches(size) and experienceDefinitions() → the nt_experience entries seen (preview
// overrides derive flags from them).
// The prepared documents are core/prepared-documents.js's (bounded LRUs of `entryCacheSize` keys
// each), their contexts the running instance's; resolution works before initialize (it then
// selects nothing).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-resolution.js', {
    provides: ['bridgeResolution'],
    uses: ['bridgeConfig', 'bridgeShared', 'createExperienceDefinitions', 'createPreparedDocuments', 'resolver'],
  });
  var shared = ns.bridgeShared;
  var messageOf = shared.messageOf;
  var resolver = ns.resolver;

  var DEFAULT_ENTRY_CACHE_SIZE = ns.bridgeConfig.DEFAULT_ENTRY_CACHE_SIZE;
  // nt_experience entries seen through prepareEntry / resolveOptimizedEntry / loadDefinitions:
  // preview overrides derive the flags of overridden experiences from them.
  var experienceDefinitions = ns.createExperienceDefinitions(DEFAULT_ENTRY_CACHE_SIZE);
  var documents = createDocuments(DEFAULT_ENTRY_CACHE_SIZE);

  function createDocuments(size) {
    return ns.createPreparedDocuments({
      capacity: size,
      onDocument: function (document) { experienceDefinitions.recordDocument(document); },
    });
  }

  // The running instance's contexts; null before initialize (resolution then selects nothing).
  function contexts() {
    return shared.current === null ? null : shared.current.contexts;
  }

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
    experienceDefinitions = ns.createExperienceDefinitions(size);
    documents = createDocuments(size);
  }

  // The prepared documents (core/prepared-documents.js), with the running instance's contexts.
  ns.bridgeResolution = {
    registerDeferred: function registerDeferred(batch) {
      return documents.registerDeferred(batch, contexts());
    },
    resolveOptimizedEntry: resolveOptimizedEntry,
    prepareEntry: function prepareEntry(key, document, entryId, contentKey) {
      documents.prepareEntry(key, document, entryId, contentKey);
    },
    prepareSelections: function prepareSelections(key, selections, contentKey) {
      documents.prepareSelections(key, selections, contentKey);
    },
    adoptEntry: function adoptEntry(key, contentKey) {
      return documents.adoptEntry(key, contentKey);
    },
    adoptSelections: function adoptSelections(key, contentKey) {
      return documents.adoptSelections(key, contentKey);
    },
    resolvePrepared: function resolvePrepared(entryKey, selectionsKey) {
      return documents.resolvePrepared(entryKey, selectionsKey, contexts());
    },
    resetPreparedCaches: resetPreparedCaches,
    experienceDefinitions: function () {
      return experienceDefinitions;
    },
  };
})();
