// tests/state.spec.js — the state store (and optimizationPossible).
(function () {
  'use strict';
  var createStateStore = globalThis.__optimization.createStateStore;

  jsTest('state starts with the spec defaults and derived values', function () {
    var state = createStateStore().get();
    assert.equal(state.profile, undefined);
    assert.equal(state.selectedOptimizations, undefined);
    assert.deepEqual(state.experienceRequestState, { status: 'idle' });
    assert.equal(state.online, true);
    assert.deepEqual(state.allowedEventTypes, ['identify', 'screen']);
    assert.equal(state.canOptimize, false);
    assert.equal(state.optimizationPossible, true);
    assert.ok(Object.isFrozen(state));
  });

  jsTest('canOptimize follows selectedOptimizations ([] counts, undefined does not)', function () {
    var store = createStateStore();
    var seen = [];
    store.subscribe(function (s) { seen.push(s.canOptimize); });
    store.set({ selectedOptimizations: [] });
    store.set({ selectedOptimizations: undefined });
    assert.deepEqual(seen, [true, false]);
  });

  jsTest('optimizationPossible: consent true or an optimization event type allowed', function () {
    assert.equal(createStateStore({ allowedEventTypes: [] }).get().optimizationPossible, false);
    assert.equal(createStateStore({ allowedEventTypes: [], consent: false }).get().optimizationPossible, false);
    assert.equal(createStateStore({ allowedEventTypes: [], consent: true }).get().optimizationPossible, true);
    assert.equal(createStateStore({ allowedEventTypes: ['component_click', 'flag'] }).get().optimizationPossible, false);
    ['identify', 'page', 'screen', 'track', 'group', 'alias', 'component'].forEach(function (type) {
      assert.equal(createStateStore({ allowedEventTypes: [type] }).get().optimizationPossible, true, type);
    });
  });

  jsTest('set notifies once per change; unchanged values and batches do not notify extra', function () {
    var store = createStateStore();
    var calls = 0;
    var unsubscribe = store.subscribe(function () { calls++; });
    store.set({ consent: true, locale: 'de-DE' });
    assert.equal(calls, 1);
    store.set({ consent: true });
    assert.equal(calls, 1, 'no change, no notification');
    var before = store.get();
    store.batch(function () {
      store.set({ consent: false });
      store.set({ online: false });
      store.batch(function () { store.set({ locale: 'fr-FR' }); });
      assert.equal(calls, 1, 'nothing is observed inside the batch');
    });
    assert.equal(calls, 2);
    assert.equal(before.consent, true, 'old snapshots are never mutated');
    assert.equal(store.get().locale, 'fr-FR');
    unsubscribe();
    store.set({ consent: true });
    assert.equal(calls, 2);
  });

  jsTest('derived keys cannot be set; a throwing subscriber is logged and others still run', function () {
    var store = createStateStore();
    assert.throws(function () { store.set({ canOptimize: true }); }, /derived/);
    var reached = false;
    store.subscribe(function () { throw new Error('boom'); });
    store.subscribe(function () { reached = true; });
    store.set({ online: false });
    assert.equal(reached, true);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && l.message.indexOf('boom') !== -1; }));
  });
})();
