// tests/bridge-reset-locale.spec.js — the bridge's setLocale, reset() and getProfile().
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };

  function withBridge(config, body) {
    return function () {
      var rec = { states: [], emitted: [] };
      globalThis.__nativeOnStateChange = function (json) { rec.states.push(JSON.parse(json)); };
      globalThis.__nativeOnEventEmitted = function (json) { rec.emitted.push(JSON.parse(json)); };
      try {
        __bridge.initialize(Object.assign({ clientId: 'test-client', environment: 'main' }, config || {}));
        var outcome = body(rec);
        return Promise.resolve(outcome).then(function (value) {
          delete globalThis.__nativeOnEventEmitted;
          return value;
        });
      } catch (error) {
        delete globalThis.__nativeOnEventEmitted;
        throw error;
      }
    };
  }

  jsTest('the configured locale " de_DE " becomes "de-DE"; setLocale(" fr_FR ") gives "fr-FR", used by events; "*" throws, state unchanged', withBridge({ locale: ' de_DE ', defaults: { consent: true } }, function (rec) {
    assert.equal(JSON.parse(__bridge.getState()).locale, 'de-DE');
    __bridge.page({}, 'p1');
    assert.equal(rec.emitted[0].context.locale, 'de-DE');
    var pushes = rec.states.length;
    assert.equal(__bridge.setLocale(' fr_FR '), 'fr-FR');
    assert.equal(rec.states.length, pushes + 1, 'one state push');
    assert.equal(rec.states[rec.states.length - 1].locale, 'fr-FR');
    __bridge.page({}, 'p2');
    assert.equal(rec.emitted[1].context.locale, 'fr-FR');
    assert.throws(function () { __bridge.setLocale('*'); }, /^locale must be a valid locale string, received "\*"\.$/);
    assert.throws(function () { __bridge.setLocale('und'); }, /valid locale/);
    assert.throws(function () { __bridge.setLocale(null); }, /^locale must be a locale string\.$/);
    assert.equal(JSON.parse(__bridge.getState()).locale, 'fr-FR');
    assert.equal(rec.states.length, pushes + 1);
    __bridge.destroy();
    assert.equal(__bridge.setLocale('en-US'), null, 'null before initialize');
  }));

  jsTest('reset clears profile, changes, selections, contexts and de-dupe; keeps consent, locale and queues; one push', withBridge({
    locale: 'en-GB',
    defaults: {
      consent: true,
      persistenceConsent: true,
      anonymousId: 'anon-1',
      profile: PF,
      changes: [{ key: 'f', type: 'Variable', value: 1, meta: { experienceId: 'e', variantIndex: 0 } }],
      selectedOptimizations: fx.selectedOptimizations(),
    },
  }, function (rec) {
    var resolved = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry()));
    assert.equal(typeof resolved.optimizationContextId, 'string');
    __bridge.trackCurrentScreen({ name: 'Home' }, 's1');
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, sticky: true, stickyTrackingKey: 'k' }, 'v1');
    __bridge.track({ event: 'queued' }, 't1');
    return Promise.resolve().then(function () {}).then(function () {
      var queued = __testHost.experience.queued.length;
      var insightsQueued = __testHost.insights.queued.length;
      assert.ok(queued > 0 && insightsQueued > 0);
      assert.deepEqual(__testHost.insights.profiles, [PF]);
      assert.equal(__bridge.getProfile(), JSON.stringify(PF));
      var pushes = rec.states.length;
      __bridge.reset();
      assert.equal(rec.states.length, pushes + 1, 'one state push');
      var state = JSON.parse(__bridge.getState());
      assert.equal(state.profile, null);
      assert.equal(state.changes, null);
      assert.equal(state.selectedOptimizations, null);
      assert.equal(state.canOptimize, false);
      assert.deepEqual(state.experienceRequestState, { status: 'idle' });
      assert.equal(state.consent, true);
      assert.equal(state.persistenceConsent, true);
      assert.equal(state.locale, 'en-GB');
      assert.equal(__bridge.getProfile(), null);
      assert.equal(__testHost.experience.purges, 0, 'the host\'s Experience queue is not purged');
      assert.equal(__testHost.experience.queued.length, queued);
      assert.equal(__testHost.insights.purges, 0, 'the host\'s Insights queue is not purged');
      assert.equal(__testHost.insights.queued.length, insightsQueued);
      assert.deepEqual(__testHost.insights.profiles, [PF, null], 'the host is told that no profile exists now');
      // Contexts cleared: the id no longer enriches a view.
      var before = rec.emitted.length;
      __bridge.trackClick({ componentId: 'c', variantIndex: 1, optimizationContextId: resolved.optimizationContextId }, 'c1');
      assert.equal(rec.emitted[before].optimization, undefined);
      // Current-screen and sticky de-dupe forgotten.
      __bridge.trackCurrentScreen({ name: 'Home' }, 's2');
      __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, sticky: true, stickyTrackingKey: 'k' }, 'v2');
      return Promise.resolve().then(function () {}).then(function () {
        var screens = rec.emitted.filter(function (e) { return e.type === 'screen'; });
        assert.equal(screens.length, 2, 'the same screen is sent again after reset');
        var views = rec.emitted.filter(function (e) { return e.type === 'component' && e.componentType === 'Entry'; });
        assert.equal(views.length, 4, 'sticky view sent through both paths again');
        var held = __testHost.insights.accepted.slice(insightsQueued);
        assert.ok(held.length > 0);
        held.forEach(function (a) { assert.equal(a.profile, null, 'events after reset wait for the next profile'); });
      });
    });
  }));

  jsTest('reset and getProfile before initialize are no-ops', function () {
    __bridge.reset();
    assert.equal(__bridge.getProfile(), null);
  });
})();
