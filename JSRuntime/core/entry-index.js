// core/entry-index.js
// Contract: `__optimization.entryIndex`, reading raw Contentful Delivery API collection responses
// (`{sys: {type: "Array"}, items: [...], includes: {Entry: [...]}}`).
//   isCollection(v)               sys.type "Array" and an `items` array.
//   findBaseline(collection, entryId?)  the item whose sys.id equals `entryId` (a string), else
//                                 `items[0]` when no entryId is given; undefined when none.
//   buildEntryIndex(collection)   Map of sys.id → entry over `items` then `includes.Entry` (first
//                                 occurrence wins; elements without a string sys.id are skipped).
// Nothing here walks into fields: links are followed later, one at a time, by
// guards.followEntryLink at the few places the resolver looks, so cyclic graphs are safe.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/entry-index.js', {
    provides: ['entryIndex'],
    uses: ['guards'],
  });
  var isRecord = ns.guards.isRecord;

  function isCollection(value) {
    return isRecord(value) && isRecord(value.sys) && value.sys.type === 'Array' && Array.isArray(value.items);
  }

  function idOf(value) {
    return isRecord(value) && isRecord(value.sys) && typeof value.sys.id === 'string' ? value.sys.id : undefined;
  }

  function findBaseline(collection, entryId) {
    var items = collection.items;
    if (typeof entryId !== 'string') return items[0];
    for (var i = 0; i < items.length; i++) if (idOf(items[i]) === entryId) return items[i];
    return undefined;
  }

  function addAll(index, list) {
    if (!Array.isArray(list)) return;
    for (var i = 0; i < list.length; i++) {
      var id = idOf(list[i]);
      if (id !== undefined && !index.has(id)) index.set(id, list[i]);
    }
  }

  function buildEntryIndex(collection) {
    var index = new Map();
    addAll(index, collection.items);
    if (isRecord(collection.includes)) addAll(index, collection.includes.Entry);
    return index;
  }

  ns.entryIndex = {
    isCollection: isCollection,
    findBaseline: findBaseline,
    buildEntryIndex: buildEntryIndex,
  };
})();
