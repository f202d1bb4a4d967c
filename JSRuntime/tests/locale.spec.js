// tests/locale.spec.js — locale normalization.
(function () {
  'use strict';
  var locale = globalThis.__optimization.locale;

  jsTest('normalizeLocale trims, maps "_" to "-" and rejects invalid values', function () {
    assert.equal(locale.normalizeLocale(' de_DE '), 'de-DE');
    assert.equal(locale.normalizeLocale('en-US'), 'en-US');
    assert.equal(locale.normalizeLocale('zh_Hant_TW'), 'zh-Hant-TW');
    ['*', 'und', 'UND', '', '   ', 'not a locale', 'e', 'toolonglanguage', 'de--DE', 'de-', 'de-DE-123456789'].forEach(function (value) {
      assert.equal(locale.normalizeLocale(value), undefined, JSON.stringify(value));
    });
    [null, undefined, 42, {}].forEach(function (value) {
      assert.equal(locale.normalizeLocale(value), undefined);
    });
  });

  jsTest('normalizeExplicitLocale throws for non-strings and invalid strings', function () {
    assert.equal(locale.normalizeExplicitLocale(' fr_FR '), 'fr-FR');
    assert.throws(function () { locale.normalizeExplicitLocale(null); }, /^locale must be a locale string\.$/);
    assert.throws(function () { locale.normalizeExplicitLocale(7); }, /locale string/);
    assert.throws(function () { locale.normalizeExplicitLocale('*'); }, /^locale must be a valid locale string, received "\*"\.$/);
  });

  jsTest('initialize normalizes the configured locale; an invalid one throws', function () {
    __bridge.initialize({ clientId: 'test-client', environment: 'main', locale: ' de_DE ' });
    assert.equal(JSON.parse(__bridge.getState()).locale, 'de-DE');
    assert.throws(function () {
      __bridge.initialize({ clientId: 'test-client', environment: 'main', locale: '*' });
    }, /valid locale/);
    assert.throws(function () {
      __bridge.initialize({ clientId: 'test-client', environment: 'main', locale: 5 });
    }, /locale must be a locale string/);
  });
})();
