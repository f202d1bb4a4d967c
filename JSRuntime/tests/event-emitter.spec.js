// tests/event-emitter.spec.js — the event pipeline of the stateful core. Both paths are the
// client's links to the host: Experience (bridge/experience-link.js) on the fake host's
// Experience queue (fake-host.js __testHost.experience, offline here: events stay queued) and
// Insights (bridge/insights-link.js) on its Insights queue (__testHost.insights).
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var fx = globalThis.fixtures;
  var PF = { id: '', stableId: '', random: 0.5, audiences: [], traits: { firstname: 'John' }, location: { continent: 'EU' } };

  // A core as the bridge builds one, with the core's own fail-closed default allow-list [].
  function makeCore(options) {
    var o = options || {};
    var state = ns.createStateStore({
      consent: o.consent,
      persistenceConsent: o.consent,
      allowedEventTypes: o.allowedEventTypes !== undefined ? o.allowedEventTypes : [],
      profile: o.profile,
    });
    var experienceQueue = ns.createExperienceLink({});
    var insightsQueue = ns.createInsightsLink({ getProfile: function () { return state.get().profile; } });
    var consent = ns.consent.createConsentController({
      state: state,
      onPurge: function () { experienceQueue.purge(); insightsQueue.purge(); },
    });
    var contexts = ns.createContextRegistry();
    var emitted = [];
    var blocked = [];
    var core = ns.createEventEmitter({
      consent: consent,
      builder: ns.createEventBuilder({ getConsent: function () { return state.get().consent; } }),
      contexts: contexts,
      experienceQueue: experienceQueue,
      insightsQueue: insightsQueue,
      onEmitted: function (event) { emitted.push(event); },
      onBlocked: function (event) { blocked.push(event); },
    });
    return {
      core: core, state: state, consent: consent, contexts: contexts, experienceQueue: experienceQueue,
      insightsQueue: insightsQueue, emitted: emitted, blocked: blocked,
    };
  }

  function result(value) {
    return Promise.resolve(value);
  }

  // The events the host's Insights queue accepted (parsed), in order.
  function insightsEvents() {
    return __testHost.insights.accepted.map(function (a) { return a.event; });
  }

  // The events waiting in the host's Experience queue (parsed), in order.
  function experienceEvents() {
    return __testHost.experience.queued.map(function (q) { return q.event; });
  }

  jsTest('without an allow-list or consent, identify, page and screen are blocked', function () {
    var t = makeCore();
    return Promise.all([
      result(t.core.identify({ userId: 'user-1' })),
      result(t.core.page({})),
      result(t.core.screen({ name: 'Home', properties: {}, screen: { name: 'Home' } })),
    ]).then(function (results) {
      results.forEach(function (r) { assert.deepEqual(r, { accepted: false }); });
      assert.deepEqual(t.blocked.map(function (b) { return b.method; }), ['identify', 'page', 'screen']);
      t.blocked.forEach(function (b) { assert.equal(b.reason, 'consent'); });
      assert.equal(t.emitted.length, 0);
      assert.equal(__testHost.experience.accepted.length, 0, 'nothing handed to the host');
    });
  });

  jsTest('a blocked track is reported once with its original payload', function () {
    var t = makeCore();
    var payload = { event: 'purchase' };
    return result(t.core.track(payload)).then(function (r) {
      assert.deepEqual(r, { accepted: false });
      assert.deepEqual(t.blocked, [{ reason: 'consent', method: 'track', args: [{ event: 'purchase' }] }]);
    });
  });

  jsTest('blocked calls log without payload above debug; the payload only at debug', function () {
    var t = makeCore();
    var sentinel = 'SENTINEL-trait-4711';
    ns.host.setLogLevel('log');
    try {
      t.core.identify({ userId: 'u', traits: { secret: sentinel } });
    } finally {
      ns.host.setLogLevel('error');
    }
    var warn = __testHost.logs.filter(function (l) { return l.level === 'warn'; });
    assert.ok(warn.some(function (l) { return l.message === 'Event "identify" was blocked due to lack of consent.'; }));
    __testHost.logs.forEach(function (l) {
      if (l.level !== 'debug' && l.level !== 'log') assert.equal(l.message.indexOf(sentinel), -1, l.level + ': ' + l.message);
    });
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'debug' && l.message.indexOf(sentinel) !== -1; }));
  });

  jsTest('with consent, repeated entry views are never blocked', function () {
    var t = makeCore({ consent: true, profile: PF });
    var view = { componentId: 'hero-banner', viewId: 'hero-banner-view-id', viewDurationMs: 1000 };
    return Promise.all([result(t.core.trackView(view)), result(t.core.trackView(view))]).then(function (results) {
      assert.equal(t.blocked.length, 0);
      results.forEach(function (r) { assert.deepEqual(r, { accepted: true }); });
      assert.equal(insightsEvents().length, 2);
      assert.equal(__testHost.experience.accepted.length, 0, 'non-sticky views go to Insights only');
    });
  });

  jsTest('gdpr.isConsentGiven is false before consent and true after, per event', function () {
    var t = makeCore({ allowedEventTypes: ['identify'] });
    t.core.identify({ userId: 'user-1' });
    t.consent.set({ events: true });
    t.core.identify({ userId: 'user-2' });
    var queued = experienceEvents();
    assert.equal(queued.length, 2);
    assert.equal(queued[0].context.gdpr.isConsentGiven, false);
    assert.equal(queued[1].context.gdpr.isConsentGiven, true);
    assert.equal(t.emitted[0].userId, 'user-1');
  });

  jsTest('withdrawing consent purges the host\'s Experience queue', function () {
    var t = makeCore({ consent: true });
    t.core.track({ event: 'queued-experience-event' });
    assert.equal(__testHost.experience.queued.length, 1);
    t.consent.set({ events: false });
    assert.equal(__testHost.experience.purges, 1, '__nativeExperiencePurge inside the consent call');
    assert.equal(__testHost.experience.queued.length, 0);
  });

  jsTest('withdrawing consent purges the host\'s Insights queue (held events too)', function () {
    var t = makeCore({ consent: true, profile: PF });
    t.core.trackClick({ componentId: 'hero-banner' });
    t.state.set({ profile: undefined });
    t.core.trackClick({ componentId: 'held' });
    assert.deepEqual(__testHost.insights.accepted.map(function (a) { return a.profile; }), [PF, null], 'one bucketed, one held');
    assert.equal(__testHost.insights.queued.length, 2);
    t.consent.set({ events: false });
    assert.equal(__testHost.insights.purges, 1);
    assert.equal(__testHost.insights.queued.length, 0);
  });

  jsTest('an allow-list of flag blocks entry views and lets flag views pass', function () {
    var t = makeCore({ allowedEventTypes: ['flag'], profile: PF });
    t.core.trackView({ componentId: 'entry-card', viewDurationMs: 100, viewId: 'entry-card-view' });
    t.core.trackFlagView({ componentId: 'dark-mode' });
    assert.deepEqual(t.blocked.map(function (b) { return b.method; }), ['trackView']);
    assert.equal(t.emitted.length, 1);
    assert.equal(t.emitted[0].componentId, 'dark-mode');
    assert.equal(t.emitted[0].componentType, 'Variable');
    assert.equal(t.emitted[0].type, 'component');
  });

  jsTest('an allow-list of component lets entry and flag views both pass', function () {
    var t = makeCore({ allowedEventTypes: ['component'], profile: PF });
    t.core.trackView({ componentId: 'entry-card', viewDurationMs: 100, viewId: 'entry-card-view' });
    t.core.trackFlagView({ componentId: 'dark-mode' });
    assert.equal(t.blocked.length, 0);
    assert.deepEqual(t.emitted.map(function (e) { return e.componentType; }), ['Entry', 'Variable']);
  });

  jsTest('an allow-list of page lets a page through offline: it resolves {accepted:true} and is queued', function () {
    var t = makeCore({ allowedEventTypes: ['page'] });
    t.state.set({ online: false });
    return result(t.core.page({})).then(function (r) {
      assert.deepEqual(r, { accepted: true });
      assert.equal(__testHost.experience.queued.length, 1);
    });
  });

  jsTest('a blocked screen queues nothing', function () {
    var t = makeCore();
    return result(t.core.screen({ name: 'Home', properties: {}, screen: { name: 'Home' } })).then(function (r) {
      assert.deepEqual(r, { accepted: false });
      assert.equal(__testHost.experience.accepted.length, 0);
      assert.equal(t.emitted.length, 0);
    });
  });

  jsTest('gate, build and publish happen synchronously inside the call', function () {
    var t = makeCore({ consent: true });
    var returned = t.core.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1 });
    assert.equal(t.emitted.length, 1, 'published before the call returned');
    assert.deepEqual(returned, { accepted: true }, 'a synchronous path answers synchronously');
    t.consent.set(false);
    t.core.trackClick({ componentId: 'c' });
    assert.equal(t.blocked.length, 1, 'blocked report before the call returned');
  });

  jsTest('sticky views: Experience first, then a second view (own messageId) to Insights', function () {
    var t = makeCore({ consent: true, profile: PF });
    var r = t.core.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1, sticky: true });
    assert.deepEqual(r, { accepted: true });
    assert.equal(__testHost.experience.queued.length, 1);
    assert.equal(t.emitted.length, 2);
    assert.notEqual(t.emitted[0].messageId, t.emitted[1].messageId);
    assert.deepEqual(experienceEvents(), [t.emitted[0]], 'the first view reached the host\'s Experience queue');
    assert.deepEqual(insightsEvents(), [t.emitted[1]], 'the second view reached the host');
  });

  jsTest('a sticky view whose Experience send rejects does not reach Insights', function () {
    var t = makeCore({ consent: true, profile: PF });
    var failing = ns.createEventEmitter({
      consent: t.consent,
      builder: ns.createEventBuilder(),
      experienceQueue: { send: function () { return Promise.reject(new Error('Experience API down')); } },
      insightsQueue: t.insightsQueue,
    });
    return assert.rejects(failing.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1, sticky: true }), /Experience API down/)
      .then(function () { assert.equal(__testHost.insights.accepted.length, 0); });
  });

  jsTest('an async Experience result carries data; Insights follows it', function () {
    var t = makeCore({ consent: true, profile: PF });
    var emitter = ns.createEventEmitter({
      consent: t.consent,
      builder: ns.createEventBuilder(),
      experienceQueue: { send: function () { return Promise.resolve({ accepted: true, data: { profile: PF }, extra: 1 }); } },
      insightsQueue: t.insightsQueue,
    });
    var pending = emitter.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1, sticky: true });
    assert.equal(__testHost.insights.accepted.length, 0, 'Insights waits for the Experience result');
    return pending.then(function (r) {
      assert.deepEqual(r, { accepted: true, data: { profile: PF } });
      assert.equal(__testHost.insights.accepted.length, 1);
    });
  });

  jsTest('invalid input rejects without emitting', function () {
    var t = makeCore({ consent: true });
    return assert.rejects(t.core.track({ properties: {} }), /"event" must be a string/).then(function () {
      assert.equal(t.emitted.length, 0);
      assert.equal(__testHost.experience.accepted.length, 0);
    });
  });

  jsTest('Insights events without a profile are handed over after telling null, published; the profile is told before the next event', function () {
    var t = makeCore({ consent: true });
    var r = t.core.trackClick({ componentId: 'c' });
    assert.deepEqual(r, { accepted: true });
    assert.equal(t.emitted.length, 1);
    assert.deepEqual(__testHost.insights.profiles, [null]);
    assert.deepEqual(__testHost.insights.accepted, [{ event: t.emitted[0], profile: null }], 'the host holds it');
    t.state.set({ profile: { id: 'p-1' } });
    t.core.trackClick({ componentId: 'd' });
    assert.deepEqual(__testHost.insights.profiles, [null, { id: 'p-1' }], 'the changed profile is told once, before the event');
    assert.deepEqual(__testHost.insights.accepted.map(function (a) { return [a.event.componentId, a.profile && a.profile.id]; }),
      [['c', null], ['d', 'p-1']]);
    t.core.trackClick({ componentId: 'e' });
    assert.equal(__testHost.insights.profiles.length, 2, 'an unchanged profile is not told again');
  });

  jsTest('an Insights path that throws (the host could not store the event) rejects; nothing is published', function () {
    var t = makeCore({ consent: true, profile: PF });
    __testHost.insights.failAccept = 'store failed';
    return Promise.all([
      assert.rejects(t.core.trackClick({ componentId: 'c' }), /^store failed$/),
      assert.rejects(t.core.trackFlagView({ componentId: 'dark-mode' }), /^store failed$/),
    ]).then(function () {
      assert.equal(t.emitted.length, 0);
      assert.equal(__testHost.insights.accepted.length, 0);
    });
  });

  jsTest('an Experience path that throws (the host could not store the event) rejects; nothing is published', function () {
    var t = makeCore({ consent: true, profile: PF });
    __testHost.experience.failAccept = 'store failed';
    return Promise.all([
      assert.rejects(t.core.track({ event: 'e' }), /^store failed$/),
      assert.rejects(t.core.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1, sticky: true }), /^store failed$/),
    ]).then(function () {
      assert.equal(t.emitted.length, 0);
      assert.equal(__testHost.experience.accepted.length, 0);
      assert.equal(__testHost.insights.accepted.length, 0, 'the sticky view does not reach Insights');
    });
  });

  jsTest('views with a live context publish `optimization`; queued payloads never have it', function () {
    var t = makeCore({ consent: true, profile: PF });
    var resolved = ns.resolver.resolveOptimizedEntry(fx.optimizedEntry(), fx.selectedOptimizations());
    var contextId = t.contexts.register(resolved.context);
    t.core.trackView({
      componentId: fx.ids.OE, experienceId: fx.ids.EU, optimizationContextId: contextId, sticky: true,
      variantIndex: 1, viewDurationMs: 250, viewId: 'view-1',
    });
    assert.equal(t.emitted.length, 2);
    t.emitted.forEach(function (event) {
      assert.equal(event.type, 'component');
      assert.equal(event.optimization.contextId, contextId);
      assert.equal(event.optimization.baselineEntry.sys.id, fx.ids.OE);
      assert.equal(event.optimization.resolvedEntry.sys.id, fx.ids.EU_VARIANT);
      assert.equal(event.optimization.selectedOptimization.experienceId, fx.ids.EU);
    });
    var queued = experienceEvents().concat(insightsEvents());
    assert.equal(queued.length, 2);
    queued.forEach(function (event) {
      assert.equal('optimization' in event, false);
      assert.equal('optimizationContextId' in event, false);
    });
    t.core.trackClick({ componentId: fx.ids.OE, optimizationContextId: contextId });
    assert.equal(t.emitted[2].optimization.contextId, contextId, 'clicks are enriched too');
  });

  jsTest('flag views are never enriched; unknown context ids add nothing', function () {
    var t = makeCore({ consent: true, profile: PF });
    t.core.trackFlagView({ componentId: 'dark-mode', optimizationContextId: 'ctx-1' });
    t.core.trackView({ componentId: 'c', viewId: 'v', viewDurationMs: 1, optimizationContextId: 'ctx-1' });
    t.core.trackClick({ componentId: 'c', optimizationContextId: 'ctx-1' });
    assert.equal(t.emitted.length, 3);
    t.emitted.forEach(function (event) { assert.equal('optimization' in event, false); });
    assert.equal(t.emitted[0].componentType, 'Variable');
  });

  jsTest('a throwing onEventBlocked / onEventEmitted callback is warn-logged and swallowed', function () {
    var state = ns.createStateStore({ allowedEventTypes: ['track'] });
    ns.host.setLogLevel('warn');
    try {
      var core = ns.createEventEmitter({
        consent: ns.consent.createConsentController({ state: state }),
        builder: ns.createEventBuilder(),
        experienceQueue: ns.createExperienceLink({}),
        insightsQueue: ns.createInsightsLink({}),
        onEmitted: function () { throw new Error('emit boom'); },
        onBlocked: function () { throw new Error('block boom'); },
      });
      assert.deepEqual(core.track({ event: 'e' }), { accepted: true });
      assert.deepEqual(core.identify({ userId: 'u' }), { accepted: false });
    } finally {
      ns.host.setLogLevel('error');
    }
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && l.message.indexOf('emit boom') !== -1; }));
    assert.ok(__testHost.logs.some(function (l) { return l.level === 'warn' && l.message.indexOf('block boom') !== -1; }));
  });
})();
