// core/experience-definitions.js
// Contract: the experience definitions of preview overrides.
//
// Experience definitions (the nt_experience entries the override manager derives flags from):
//   __optimization.createExperienceDefinitions(capacity?) → {record(entry, index?),
//       recordDocument(document), get(experienceId), size(), clear()}
//   record keeps an entry passing guards.isOptimizationEntry under nt_experience_id (and sys.id).
//   recordDocument(document): for a CDA collection every nt_experience among items and
//   includes.Entry; for an entry every resolved element of fields.nt_experiences (one level, no
//   recursion). Bounded (LRU, default 1000).
//   __optimization.experienceEntries = {isExperienceEntry(value), experienceIdOf(entry)}: a
//   resolved entry of content type nt_experience; its nt_experience_id, or its sys.id without one.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/experience-definitions.js', {
    provides: ['createExperienceDefinitions', 'experienceEntries'],
    uses: ['createLruCache', 'entryIndex', 'guards'],
  });
  var guards = ns.guards;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function experienceIdOf(entry) {
    return typeof entry.fields.nt_experience_id === 'string' ? entry.fields.nt_experience_id : entry.sys.id;
  }

  function isExperienceEntry(value) {
    return guards.isResolvedEntry(value) && value.sys.contentType.sys.id === 'nt_experience';
  }

  function createExperienceDefinitions(capacity) {
    var store = ns.createLruCache(typeof capacity === 'number' && capacity > 0 ? Math.floor(capacity) : 1000);

    function record(entry, index) {
      if (!isExperienceEntry(entry) || !guards.isOptimizationEntry(entry, index || null)) return false;
      var id = experienceIdOf(entry);
      store.set(id, entry);
      if (entry.sys.id !== id) store.set(entry.sys.id, entry);
      return true;
    }

    function recordList(list) {
      if (!Array.isArray(list)) return;
      for (var i = 0; i < list.length; i++) {
        if (isExperienceEntry(list[i])) record(list[i], null);
      }
    }

    function recordDocument(document) {
      if (ns.entryIndex.isCollection(document)) {
        recordList(document.items);
        if (isRecord(document.includes)) recordList(document.includes.Entry);
        return;
      }
      if (guards.isResolvedEntry(document)) recordList(document.fields.nt_experiences);
    }

    return {
      record: record,
      recordDocument: recordDocument,
      get: function (id) {
        return store.peek(id);
      },
      size: function () {
        return store.size;
      },
      clear: function () {
        store.clear();
      },
    };
  }

  ns.createExperienceDefinitions = createExperienceDefinitions;
  ns.experienceEntries = { isExperienceEntry: isExperienceEntry, experienceIdOf: experienceIdOf };
})();
