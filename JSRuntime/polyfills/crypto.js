// polyfills/crypto.js
// Contract: `crypto.randomUUID()` returns the host facade's `randomUUID()` (the host binding
// `__nativeRandomUUID`, a lowercase RFC 4122 v4 UUID); `crypto.getRandomValues(typedArray)` fills
// an integer typed array from Math.random (NOT cryptographically strong; nothing in this project
// uses it for secrets) and returns it, throwing a TypeError for other arguments and a RangeError
// above 65 536 bytes, like the Web Crypto API. `globalThis.crypto` and each of the two methods are
// installed only when missing (Node keeps its own); the implementations are also published as
// `__optimization.polyfills.crypto`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('polyfills/crypto.js', {
    provides: ['polyfills.crypto'],
    uses: ['host'],
    globals: ['crypto'],
  });
  var polyfills = ns.polyfills || (ns.polyfills = {});

  function randomUUID() {
    return globalThis.__optimization.host.randomUUID();
  }

  function isIntegerTypedArray(value) {
    return value instanceof Int8Array || value instanceof Uint8Array ||
      value instanceof Uint8ClampedArray || value instanceof Int16Array ||
      value instanceof Uint16Array || value instanceof Int32Array ||
      value instanceof Uint32Array ||
      (typeof BigInt64Array === 'function' && value instanceof BigInt64Array) ||
      (typeof BigUint64Array === 'function' && value instanceof BigUint64Array);
  }

  function getRandomValues(array) {
    if (!isIntegerTypedArray(array)) {
      throw new TypeError('getRandomValues requires an integer typed array.');
    }
    if (array.byteLength > 65536) {
      throw new RangeError('getRandomValues cannot fill more than 65536 bytes.');
    }
    var bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (var i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    return array;
  }

  polyfills.crypto = { randomUUID: randomUUID, getRandomValues: getRandomValues };

  if (typeof globalThis.crypto !== 'object' || globalThis.crypto === null) globalThis.crypto = {};
  if (typeof globalThis.crypto.randomUUID !== 'function') globalThis.crypto.randomUUID = randomUUID;
  if (typeof globalThis.crypto.getRandomValues !== 'function') {
    globalThis.crypto.getRandomValues = getRandomValues;
  }
})();
