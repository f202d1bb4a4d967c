// tests/flags.spec.js — custom flags and the bridge's
// getFlag / observeFlag / unobserveFlag.
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var HERO = globalThis.fixtures.ids.HERO_EXPERIENCE;
  var PF = { id: '', stableId: '', random: 0.5, audiences: [], traits: { firstname: 'John' }, location: { continent: 'EU' } };
  var OTHER_PROFILE_ID = 'a19c3f54d2b84e37a93f6d1c0e5b7284';

  function flags() {
    return [
      { key: 'dark-mode', type: 'Variable', value: true, meta: { experienceId: HERO, variantIndex: 0 } },
      { key: 'other-flag', type: 'Variable', value: 'A', meta: { experienceId: HERO, variantIndex: 1 } },
    ];
  }

  function change(key, value, experienceId, variantIndex) {
    return { key: key, type: 'Variable', value: value, meta: { experienceId: experienceId || HERO, variantIndex: variantIndex || 0 } };
  }

  // A state store, a recording emitter and a tracker over them. `viewResult(payload)` decides
  // what trackFlagView returns (default {accepted: true}).
  function setup(initial, viewResult) {
    var state = ns.createStateStore(Object.assign({ allowedEventTypes: [] }, initial || {}));
    var calls = { views: [], blocked: [] };
    var emitter = {
      hasConsent: function (method) {
        var s = state.get();
        return ns.consent.hasEventConsent(method, s.consent, s.allowedEventTypes);
      },
      block: function (method, payload) {
        calls.blocked.push({ method: method, args: [payload] });
        return { accepted: false };
      },
      trackFlagView: function (payload) {
        calls.views.push(payload);
        return viewResult ? viewResult(payload) : { accepted: true };
      },
    };
    return { state: state, calls: calls, tracker: ns.createFlagTracker({ state: state, emitter: emitter }) };
  }

  function microtasks() {
    return Promise.resolve().then(function () {}).then(function () {});
  }

  jsTest('getFlag folds changes (later duplicates win) and unwraps {value: object}', function () {
    var ch = [change('dark-mode', true), change('price', { value: { amount: 10, currency: 'USD' } })];
    assert.equal(ns.flags.getFlag('dark-mode', ch), true);
    assert.deepEqual(ns.flags.getFlag('price', ch), { amount: 10, currency: 'USD' });
    assert.equal(ns.flags.getFlag('missing', ch), undefined);
    assert.equal(ns.flags.getFlag('dark-mode', undefined), undefined);
    assert.deepEqual(ns.flags.resolve(undefined), {});
    assert.deepEqual(ns.flags.resolve([change('a', 1), change('a', 2), null, { value: 3 }]), { a: 2 });
    assert.equal(ns.flags.unwrap({ value: null }), null, 'typeof null is "object": unwrapped');
    assert.deepEqual(ns.flags.unwrap({ value: [1, 2] }), [1, 2]);
    assert.deepEqual(ns.flags.unwrap({ value: 'text' }), { value: 'text' }, 'a scalar `value` is not unwrapped');
    assert.equal(ns.flags.getFlag('a', [change('a', 1), change('a', 2)]), 2);
    assert.deepEqual(ns.flags.firstChange('a', [change('a', 1, 'e1'), change('a', 2, 'e2')]).meta, { experienceId: 'e1', variantIndex: 0 });
    assert.equal(ns.flags.canonical({ a: 1, b: [1, { c: 2, d: 3 }] }), ns.flags.canonical({ b: [1, { d: 3, c: 2 }], a: 1 }));
    assert.notEqual(ns.flags.canonical(undefined), ns.flags.canonical(null));
  });

  jsTest('with consent and a profile, getFlag returns the value and tracks one flag view with the first change\'s meta', function () {
    var t = setup({ consent: true, profile: PF, changes: flags() });
    assert.equal(t.tracker.getFlag('dark-mode'), true);
    assert.deepEqual(t.calls.views, [{ componentId: 'dark-mode', experienceId: HERO, variantIndex: 0 }]);
    assert.equal(t.tracker.getFlag('dark-mode'), true);
    assert.equal(t.calls.views.length, 1, 'same value, same profile: one event');
  });

  jsTest('pre-consent reads report once per distinct (flag, value); after consent one view', function () {
    var t = setup({ profile: PF, changes: flags() });
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    assert.deepEqual(t.calls.blocked, [{ method: 'trackFlagView', args: [{ componentId: 'dark-mode', experienceId: HERO, variantIndex: 0 }] }]);
    t.tracker.getFlag('other-flag');
    assert.equal(t.calls.blocked.length, 2, 'another flag is another report');
    t.state.set({ changes: [change('dark-mode', false)] });
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.blocked.length, 3, 'a new value of the flag is reported once');
    assert.equal(t.calls.views.length, 0);
    t.state.set({ consent: true });
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 1, 'pre-consent reads do not suppress later tracking');
    assert.equal(t.calls.blocked.length, 3);
  });

  jsTest('the flag allow-list entry lets views through before consent; a new consent decision re-arms reports', function () {
    var t = setup({ profile: PF, changes: flags(), allowedEventTypes: ['flag'] });
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 1);
    assert.equal(t.calls.blocked.length, 0);
    var u = setup({ profile: PF, changes: flags() });
    u.tracker.getFlag('dark-mode');
    u.state.set({ consent: false });
    u.tracker.getFlag('dark-mode');
    assert.equal(u.calls.blocked.length, 2, 'consent changed from undecided to false: reported again once');
  });

  jsTest('without a profile a flag read is neither tracked nor remembered; it is tracked once the profile exists', function () {
    var t = setup({ consent: true, changes: flags() });
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 0);
    assert.equal(t.calls.blocked.length, 0, 'a missing profile is not a block');
    t.state.set({ profile: PF });
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 1);
  });

  jsTest('a flag read under another profile id is another flag view', function () {
    var t = setup({ consent: true, profile: PF, changes: flags() });
    t.tracker.getFlag('dark-mode');
    t.state.set({ profile: Object.assign({}, PF, { id: OTHER_PROFILE_ID }) });
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 2);
  });

  jsTest('a flag value going true → false → true gives 3 flag views', function () {
    var t = setup({ consent: true, profile: PF, changes: flags() });
    t.tracker.getFlag('dark-mode');
    t.state.set({ changes: [change('dark-mode', false)] });
    t.tracker.getFlag('dark-mode');
    t.state.set({ changes: flags() });
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 3);
  });

  jsTest('deep-equal object flag values in another key order give one flag view', function () {
    var t = setup({ consent: true, profile: PF, changes: [change('obj', { a: 1, b: 2 })] });
    assert.deepEqual(t.tracker.getFlag('obj'), { a: 1, b: 2 });
    t.state.set({ changes: [change('obj', { b: 2, a: 1 })] });
    t.tracker.getFlag('obj');
    assert.equal(t.calls.views.length, 1);
  });

  jsTest('a pending (async) flag view suppresses duplicates; a rejected one is logged and retried', function () {
    ns.host.setLogLevel('warn');
    var resolvers = [];
    var t = setup({ consent: true, profile: PF, changes: flags() }, function () {
      return new Promise(function (resolve, reject) { resolvers.push({ resolve: resolve, reject: reject }); });
    });
    t.tracker.getFlag('dark-mode');
    t.tracker.getFlag('dark-mode');
    assert.equal(t.calls.views.length, 1, 'pending signature');
    resolvers[0].reject(new Error('boom'));
    return microtasks().then(function () {
      assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && /Flag view for "dark-mode" failed: boom/.test(l.message); }));
      t.tracker.getFlag('dark-mode');
      assert.equal(t.calls.views.length, 2, 'a failed attempt is not remembered');
      resolvers[1].resolve({ accepted: true });
      return microtasks();
    }).then(function () {
      t.tracker.getFlag('dark-mode');
      assert.equal(t.calls.views.length, 2, 'accepted: remembered');
    });
  });

  jsTest('a flag subscriber sees the current value, then each distinct value ([undefined, true, false]), each a flag view', function () {
    var t = setup({ consent: true, profile: PF });
    var values = [];
    t.tracker.observe('s1', 'dark-mode', function (value) { values.push(value); });
    t.state.set({ changes: flags() });
    t.state.set({ changes: flags().concat([change('new-flag', 1)]) });
    t.state.set({ changes: [change('dark-mode', false)] });
    assert.deepEqual(values, [undefined, true, false]);
    assert.deepEqual(t.calls.views, [
      { componentId: 'dark-mode' },
      { componentId: 'dark-mode', experienceId: HERO, variantIndex: 0 },
      { componentId: 'dark-mode', experienceId: HERO, variantIndex: 0 },
    ]);
  });

  jsTest('an observed flag gets a catch-up flag view on the first consent only', function () {
    var t = setup({ profile: PF, changes: flags() });
    var values = [];
    t.tracker.observe('s1', 'dark-mode', function (value) { values.push(value); });
    t.state.set({ consent: true });
    t.state.set({ consent: false });
    t.state.set({ consent: true });
    assert.deepEqual(values, [true]);
    assert.equal(t.calls.views.length, 1);
  });

  jsTest('an observed flag gets a catch-up flag view when the profile arrives and when its id changes; unobserve stops pushes', function () {
    var t = setup({ consent: true, changes: flags() });
    var values = [];
    t.tracker.observe('s1', 'dark-mode', function (value) { values.push(value); });
    t.tracker.observe('s2', 'dark-mode', function () {});
    assert.equal(t.calls.views.length, 0);
    t.state.set({ profile: PF });
    assert.equal(t.calls.views.length, 1, 'one catch-up per name, not per subscription');
    t.state.set({ profile: Object.assign({}, PF, { id: OTHER_PROFILE_ID }) });
    assert.equal(t.calls.views.length, 2);
    t.tracker.unobserve('s1');
    t.tracker.unobserve('s2');
    t.state.set({ changes: [change('dark-mode', false)] });
    assert.deepEqual(values, [true]);
    assert.equal(t.tracker.observedCount(), 0);
  });

  jsTest('observe replaces a subscription with the same id; a throwing subscriber is logged', function () {
    ns.host.setLogLevel('warn');
    var t = setup({ consent: true, profile: PF, changes: flags() });
    var first = [];
    var second = [];
    t.tracker.observe('s', 'dark-mode', function (value) { first.push(value); });
    t.tracker.observe('s', 'other-flag', function (value) { second.push(value); });
    t.tracker.observe('bad', 'dark-mode', function () { throw new Error('nope'); });
    t.state.set({ changes: [change('dark-mode', false), change('other-flag', 'B')] });
    assert.deepEqual(first, [true]);
    assert.deepEqual(second, ['A', 'B']);
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'error' && /Flag subscriber "bad" threw/.test(l.message); }));
  });

  // ---- through the bridge ------------------------------------------------------------------------

  function recordBridge(config) {
    var rec = { emitted: [], blocked: [], pushes: [] };
    globalThis.__nativeOnEventEmitted = function (json) { rec.emitted.push(JSON.parse(json)); };
    globalThis.__nativeOnEventBlocked = function (json) { rec.blocked.push(JSON.parse(json)); };
    globalThis.__nativeOnFlagValueChanged = function (id, json) { rec.pushes.push([id, json]); };
    __bridge.initialize(Object.assign({ clientId: 'test-client', environment: 'main' }, config || {}));
    return rec;
  }

  function cleanupBridge() {
    delete globalThis.__nativeOnEventEmitted;
    delete globalThis.__nativeOnEventBlocked;
    delete globalThis.__nativeOnFlagValueChanged;
  }

  function withBridge(config, body) {
    return function () {
      var rec = recordBridge(config);
      try {
        return body(rec);
      } finally {
        cleanupBridge();
      }
    };
  }

  jsTest('bridge getFlag: "null" before initialize; JSON of the value; the view reaches the Insights path', withBridge({ defaults: { consent: true, profile: PF, changes: flags() } }, function (rec) {
    __bridge.destroy();
    assert.equal(__bridge.getFlag('dark-mode'), 'null');
    __bridge.initialize({ clientId: 'test-client', environment: 'main', defaults: { consent: true, profile: PF, changes: flags() } });
    assert.equal(__bridge.getFlag('dark-mode'), 'true');
    assert.equal(__bridge.getFlag('other-flag'), '"A"');
    assert.equal(__bridge.getFlag('missing'), 'null');
    var views = rec.emitted.filter(function (e) { return e.type === 'component' && e.componentType === 'Variable'; });
    assert.deepEqual(views.map(function (e) { return e.componentId; }), ['dark-mode', 'other-flag', 'missing']);
    assert.equal(views[0].experienceId, HERO);
    assert.equal(views[0].variantIndex, 0);
    var handed = __testHost.insights.accepted.map(function (a) { return a.event; });
    assert.deepEqual(handed, views, 'the three flag views reached the host\'s Insights queue');
    __testHost.insights.accepted.forEach(function (a) { assert.deepEqual(a.profile, PF); });
    __bridge.getFlag('dark-mode');
    assert.equal(rec.emitted.length, 3, 'de-duplicated');
    assert.throws(function () { __bridge.getFlag(1); }, /name must be a string/);
  }));

  jsTest('bridge getFlag before consent: one blocked report per distinct (flag, value)', withBridge({ allowedEventTypes: [], defaults: { profile: PF, changes: flags() } }, function (rec) {
    for (var i = 0; i < 5; i++) __bridge.getFlag('dark-mode');
    assert.deepEqual(rec.blocked, [{ reason: 'consent', method: 'trackFlagView', args: [{ componentId: 'dark-mode', experienceId: HERO, variantIndex: 0 }] }]);
    assert.equal(rec.emitted.length, 0);
    __bridge.consent(true);
    __bridge.getFlag('dark-mode');
    assert.equal(rec.emitted.length, 1);
  }));

  jsTest('bridge observeFlag pushes the current value synchronously, then distinct values; unobserveFlag stops', withBridge({ defaults: { consent: true, profile: PF, changes: flags() } }, function (rec) {
    __bridge.observeFlag('sub-1', 'dark-mode');
    assert.deepEqual(rec.pushes, [['sub-1', 'true']]);
    __bridge.observeFlag('sub-2', 'missing');
    assert.deepEqual(rec.pushes[1], ['sub-2', 'null']);
    __bridge.reset();
    assert.deepEqual(rec.pushes.slice(2), [['sub-1', 'null']], 'reset clears changes: the flag becomes null; missing stays null');
    __bridge.unobserveFlag('sub-1');
    __bridge.unobserveFlag('sub-2');
    __bridge.destroy();
    __bridge.observeFlag('sub-3', 'dark-mode');
    assert.equal(rec.pushes.length, 3, 'no-op before initialize');
  }));
})();
