// core/clone-json.js
// Contract: `__optimization.cloneJSON(value)` → a deep copy of a JSON value (objects and arrays
// copied, every own enumerable key defined as a plain data property, so `__proto__` stays a key;
// other values returned as they are). Used by the state interceptors and the preview override
// manager.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/clone-json.js', { provides: ['cloneJSON'] });

  function cloneJSON(value) {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(cloneJSON);
    var copy = {};
    Object.keys(value).forEach(function (key) {
      Object.defineProperty(copy, key, { value: cloneJSON(value[key]), enumerable: true, writable: true, configurable: true });
    });
    return copy;
  }

  ns.cloneJSON = cloneJSON;
})();
