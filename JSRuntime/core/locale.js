// core/locale.js
// Contract: `__optimization.locale`.
//   normalizeLocale(v) → string | undefined   trims, turns "_" into "-", and returns the result when
//                        it matches /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/ and is not "*" or "und"
//                        (any case); anything else, including non-strings and "", gives undefined.
//                        Case is preserved (" de_DE " → "de-DE").
//   normalizeExplicitLocale(v) → string       same, but a non-string throws
//                        TypeError('locale must be a locale string.') and an invalid string throws
//                        RangeError('locale must be a valid locale string, received "<v>".').
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/locale.js', { provides: ['locale'] });

  var LOCALE_PATTERN = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;

  function normalizeLocale(value) {
    if (typeof value !== 'string') return undefined;
    var candidate = value.trim().replace(/_/g, '-');
    if (candidate.length === 0 || candidate === '*' || candidate.toLowerCase() === 'und') return undefined;
    return LOCALE_PATTERN.test(candidate) ? candidate : undefined;
  }

  function normalizeExplicitLocale(value) {
    if (typeof value !== 'string') throw new TypeError('locale must be a locale string.');
    var locale = normalizeLocale(value);
    if (locale === undefined) {
      throw new RangeError('locale must be a valid locale string, received "' + value + '".');
    }
    return locale;
  }

  ns.locale = {
    normalizeLocale: normalizeLocale,
    normalizeExplicitLocale: normalizeExplicitLocale,
  };
})();
