// tests/consent.spec.js — the consent model.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var hasEventConsent = ns.consent.hasEventConsent;

  function controller(initial) {
    var state = ns.createStateStore(initial || {});
    var purges = 0;
    var notifications = [];
    state.subscribe(function (snapshot) { notifications.push(snapshot); });
    var consent = ns.consent.createConsentController({ state: state, onPurge: function () { purges++; } });
    return {
      state: state,
      consent: consent,
      purges: function () { return purges; },
      notifications: notifications,
    };
  }

  jsTest('gate: consent true allows every method whatever the allow-list', function () {
    ['identify', 'page', 'screen', 'track', 'trackView', 'trackClick', 'trackHover', 'trackFlagView', 'anything'].forEach(function (m) {
      assert.equal(hasEventConsent(m, true, []), true, m);
      assert.equal(hasEventConsent(m, true, undefined), true, m);
    });
  });

  jsTest('gate: false and undefined gate alike through the allow-list', function () {
    [false, undefined].forEach(function (c) {
      assert.equal(hasEventConsent('identify', c, ['identify']), true);
      assert.equal(hasEventConsent('page', c, ['identify', 'screen']), false);
      assert.equal(hasEventConsent('trackView', c, ['component']), true);
      assert.equal(hasEventConsent('trackView', c, ['component_click', 'flag']), false);
      assert.equal(hasEventConsent('trackFlagView', c, ['flag']), true);
      assert.equal(hasEventConsent('trackFlagView', c, ['component']), true);
      assert.equal(hasEventConsent('trackFlagView', c, ['component_click']), false);
      assert.equal(hasEventConsent('trackClick', c, ['component_click']), true);
      assert.equal(hasEventConsent('trackClick', c, ['component']), false);
      assert.equal(hasEventConsent('trackHover', c, ['component_hover']), true);
      assert.equal(hasEventConsent('trackHover', c, ['component']), false);
      assert.equal(hasEventConsent('track', c, ['track']), true);
      assert.equal(hasEventConsent('screen', c, []), false, '[] is strict opt-in');
      assert.equal(hasEventConsent('screen', c, undefined), false, 'no list allows nothing');
      // Wire types do not unlock the method names of other kinds.
      assert.equal(hasEventConsent('component', c, ['component']), true);
      assert.equal(hasEventConsent('trackView', c, ['trackView']), false);
    });
  });

  jsTest('without consent, an allow-list of component and flag lets entry and flag views through but not clicks', function () {
    var c = controller({ consent: false, allowedEventTypes: ['component', 'flag'] }).consent;
    assert.equal(c.hasConsent('trackView'), true);
    assert.equal(c.hasConsent('trackFlagView'), true);
    assert.equal(c.hasConsent('trackClick'), false);
  });

  jsTest('readConsentInput: boolean sets both, object only the given keys, anything else throws', function () {
    var read = ns.consent.readConsentInput;
    assert.deepEqual(read(true), { consent: true, persistenceConsent: true });
    assert.deepEqual(read(false), { consent: false, persistenceConsent: false });
    assert.deepEqual(read({ events: true }), { consent: true });
    assert.deepEqual(read({ persistence: false }), { persistenceConsent: false });
    assert.deepEqual(read({}), {});
    assert.deepEqual(read({ events: null, persistence: undefined }), {});
    assert.throws(function () { read('yes'); }, /consent input must be a boolean or an object/);
    assert.throws(function () { read(null); }, /consent input must be a boolean or an object/);
    assert.throws(function () { read([true]); }, /consent input must be a boolean or an object/);
    assert.throws(function () { read({ events: 'true' }); }, /consent "events" must be a boolean/);
  });

  jsTest('without defaults, consent(true) sets event and persistence consent and consent(false) clears both', function () {
    var t = controller();
    assert.equal(t.state.get().consent, undefined);
    assert.equal(t.state.get().persistenceConsent, undefined);
    t.consent.set(true);
    assert.equal(t.state.get().consent, true);
    assert.equal(t.state.get().persistenceConsent, true);
    t.consent.set(false);
    assert.equal(t.state.get().consent, false);
    assert.equal(t.state.get().persistenceConsent, false);
  });

  jsTest('with both consents given, a partial consent object touches only its key; only withdrawing event consent purges', function () {
    var t = controller({ consent: true, persistenceConsent: true });
    t.consent.set({ persistence: false });
    assert.equal(t.state.get().consent, true);
    assert.equal(t.state.get().persistenceConsent, false);
    assert.equal(t.purges(), 0, 'withdrawing persistence alone purges nothing');
    t.consent.set({ events: false });
    assert.equal(t.state.get().consent, false);
    assert.equal(t.state.get().persistenceConsent, false);
    assert.equal(t.purges(), 1);
  });

  jsTest('consent changes are one batched state update; writing event consent false purges every time', function () {
    var t = controller();
    t.consent.set(true);
    assert.equal(t.notifications.length, 1, 'both keys, one notification');
    t.consent.set({});
    assert.equal(t.notifications.length, 1, 'an empty object changes nothing');
    t.consent.set(false);
    t.consent.set(false);
    assert.equal(t.purges(), 2, 'purged even when consent was already false');
    t.consent.set({ events: true, persistence: false });
    assert.equal(t.purges(), 2);
    assert.deepEqual(t.consent.current(), { consent: true, persistenceConsent: false });
  });

  jsTest('the purge runs before observers hear about the change', function () {
    var state = ns.createStateStore({ consent: true });
    var link = ns.createExperienceLink({});
    link.send({ type: 'track' });
    assert.equal(__testHost.experience.queued.length, 1, 'queued by the (fake) host');
    var seenSize = -1;
    state.subscribe(function () { seenSize = __testHost.experience.queued.length; });
    ns.consent.createConsentController({ state: state, onPurge: link.purge }).set(false);
    assert.equal(__testHost.experience.purges, 1);
    assert.equal(seenSize, 0);
  });

  jsTest('optimizationPossible follows consent and the allow-list', function () {
    assert.equal(controller({ allowedEventTypes: [] }).state.get().optimizationPossible, false);
    assert.equal(controller({ allowedEventTypes: ['page'] }).state.get().optimizationPossible, true);
    var t = controller({ allowedEventTypes: [] });
    t.consent.set({ events: true });
    assert.equal(t.state.get().optimizationPossible, true);
    assert.equal(controller().state.get().optimizationPossible, true, 'the native default allows identify');
  });
})();
