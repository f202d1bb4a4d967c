// tests/stateful-defaults.spec.js — start-up precedence of configured vs persisted values
//.
(function () {
  'use strict';
  var resolve = globalThis.__optimization.resolveStatefulDefaults;
  var profile = { id: 'p-1' };

  jsTest('a configured consent wins over a persisted one and implies persistence consent', function () {
    var result = resolve({ consent: true }, { consent: false, persistenceConsent: false });
    assert.equal(result.consent, true);
    assert.equal(result.persistenceConsent, true);
    assert.equal(result.canLoadPersistedContinuity, true);
  });

  jsTest('without persistence consent nothing persisted is loaded', function () {
    var result = resolve({}, { persistenceConsent: false, profile: profile, changes: [], anonymousId: 'p-1' });
    assert.equal(result.canLoadPersistedContinuity, false);
    assert.equal(result.profile, undefined);
    assert.equal(result.anonymousId, undefined);
    var loaded = resolve({}, { persistenceConsent: true, profile: profile, selectedOptimizations: [], anonymousId: 'p-1' });
    assert.equal(loaded.profile, profile);
    assert.deepEqual(loaded.selectedOptimizations, []);
    assert.equal(loaded.anonymousId, 'p-1');
  });

  jsTest('a persisted event consent alone does not imply persistence consent', function () {
    var result = resolve({}, { consent: true, profile: profile });
    assert.equal(result.consent, true);
    assert.equal(result.persistenceConsent, undefined);
    assert.equal(result.profile, undefined);
  });

  jsTest('configured continuity wins over persisted continuity', function () {
    var result = resolve({ profile: { id: 'configured' } }, { persistenceConsent: true, profile: profile });
    assert.equal(result.profile.id, 'configured');
  });

  jsTest('a configured consent false hides everything persisted (scenario 11)', function () {
    var result = resolve({ consent: false }, { consent: true, persistenceConsent: true, profile: profile, anonymousId: 'p-1' });
    assert.equal(result.consent, false);
    assert.equal(result.persistenceConsent, false);
    assert.equal(result.profile, undefined);
    assert.equal(result.anonymousId, undefined);
  });
})();
