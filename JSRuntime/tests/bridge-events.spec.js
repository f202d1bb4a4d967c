// tests/bridge-events.spec.js — consent and event methods of __bridge; Experience events reach the
// fake host's Experience queue (fake-host.js __testHost.experience; every test here is offline, so
// they stay queued) and Insights events its Insights queue (__testHost.insights).
(function () {
  'use strict';
  var fx = globalThis.fixtures;
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };

  // Initializes the bridge and records the push-backs; `done()` removes the recorders.
  function setup(extra) {
    var rec = { emitted: [], blocked: [], states: [] };
    globalThis.__nativeOnEventEmitted = function (json) { rec.emitted.push(JSON.parse(json)); };
    globalThis.__nativeOnEventBlocked = function (json) { rec.blocked.push(JSON.parse(json)); };
    globalThis.__nativeOnStateChange = function (json) { rec.states.push(JSON.parse(json)); };
    __bridge.initialize(Object.assign({
      clientId: 'test-client', environment: 'main', library: { name: 'swift-optimization-linux', version: '0.1.0' },
    }, extra || {}));
    return rec;
  }

  function cleanup() {
    delete globalThis.__nativeOnEventEmitted;
    delete globalThis.__nativeOnEventBlocked;
  }

  function withBridge(extra, body) {
    return function () {
      var rec = setup(extra);
      var outcome;
      try {
        outcome = body(rec);
      } catch (error) {
        cleanup();
        throw error;
      }
      return Promise.resolve(outcome).then(function (value) { cleanup(); return value; }, function (error) { cleanup(); throw error; });
    };
  }

  // The number of events the host's Experience queue holds.
  function experienceQueued() {
    return __testHost.experience.queued.length;
  }

  // The events the host's Insights queue accepted (parsed), in order.
  function insightsEvents() {
    return __testHost.insights.accepted.map(function (a) { return a.event; });
  }

  // Calls the bridge's own async function (not the harness wrapper that hands a returned outcome
  // to the fake host) and returns what it returned.
  function callUnwrapped(name, payload, requestId) {
    var fn = __bridge[name].original || __bridge[name];
    return fn.call(__bridge, payload, requestId);
  }

  // Settles of one request id, after pending promise jobs ran.
  function settledFor(requestId) {
    return Promise.resolve().then(function () {}).then(function () {
      return __testHost.settled.filter(function (s) { return s.requestId === requestId; });
    });
  }

  function expectSettle(requestId, ok, json) {
    return settledFor(requestId).then(function (list) {
      assert.equal(list.length, 1, 'settled exactly once: ' + requestId);
      assert.equal(list[0].ok, ok, requestId + ' ok');
      if (typeof json === 'string') assert.equal(list[0].json, json, requestId + ' json');
      else assert.deepEqual(JSON.parse(list[0].json), json, requestId + ' json');
    });
  }

  var VALIDATION = [
    ['B1', 'identify', { traits: {} }, 'identify payload must include a string "userId".'],
    ['B2', 'page', [], 'page payload must be an object.'],
    ['B3', 'screen', { name: 'Home', properties: [] }, 'screen payload "properties" must be an object when provided.'],
    ['B4', 'trackCurrentScreen', { name: 'Home', routeKey: 1 }, 'trackCurrentScreen payload "routeKey" must be a string when provided.'],
    ['B5', 'track', { properties: {} }, 'track payload must include a string "event".'],
    ['B6', 'trackView', { componentId: 'component-1', viewId: 'view-1', variantIndex: '0', viewDurationMs: 1 }, 'trackView payload must include a number "variantIndex".'],
    ['B7', 'trackClick', { componentId: 1, variantIndex: 0 }, 'trackClick payload must include a string "componentId".'],
  ];

  jsTest('invalid event payloads settle ok=false with a message naming the field; the core is not called', withBridge({ defaults: { consent: true } }, function (rec) {
    VALIDATION.forEach(function (c) {
      __bridge[c[1]](c[2], c[0]);
    });
    // Validation settles synchronously.
    VALIDATION.forEach(function (c) {
      var list = __testHost.settled.filter(function (s) { return s.requestId === c[0]; });
      assert.deepEqual(list, [{ requestId: c[0], ok: false, json: c[3] }], c[0]);
    });
    assert.equal(rec.emitted.length, 0);
    assert.equal(rec.blocked.length, 0);
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, sticky: 'yes' }, 'x1');
    __bridge.identify(null, 'x2');
    __bridge.track({ event: 'e', properties: 5 }, 'x3');
    return Promise.all([
      expectSettle('x1', false, 'trackView payload "sticky" must be a boolean when provided.'),
      expectSettle('x2', false, 'identify payload must be an object.'),
      expectSettle('x3', false, 'track payload "properties" must be an object when provided.'),
    ]);
  }));

  jsTest('async methods before initialize settle with the not-initialized error; sync ones are no-ops', function () {
    ['identify', 'page', 'screen', 'trackCurrentScreen', 'track', 'trackView', 'trackClick'].forEach(function (method) {
      __bridge[method]({}, 'pre-' + method);
    });
    var pre = __testHost.settled.filter(function (s) { return s.requestId.indexOf('pre-') === 0; });
    assert.equal(pre.length, 7);
    pre.forEach(function (s) {
      assert.equal(s.ok, false);
      assert.equal(s.json, 'SDK not initialized. Call initialize() first.');
    });
    assert.equal(__bridge.hasConsent('identify'), false);
    assert.equal(__bridge.consent(true), undefined);
    assert.deepEqual(__testHost.experience.accepted, [], 'no Experience native called');
    assert.equal(__testHost.experience.purges, 0);
    assert.deepEqual(__testHost.insights, { accepted: [], queued: [], profiles: [], purges: 0, failAccept: null }, 'no Insights native called');
  });

  jsTest('an unknown optimizationContextId on trackView/trackClick is not an error', withBridge({
    allowedEventTypes: ['component', 'component_click'], defaults: { consent: true, profile: PF },
  }, function (rec) {
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, optimizationContextId: 'ctx-1' }, 'v1');
    __bridge.trackClick({ componentId: 'c', variantIndex: 0, optimizationContextId: 'ctx-1' }, 'c1');
    return Promise.all([expectSettle('v1', true, { accepted: true }), expectSettle('c1', true, { accepted: true })]).then(function () {
      assert.equal(rec.emitted.length, 2);
      rec.emitted.forEach(function (e) { assert.equal('optimization' in e, false); });
      assert.deepEqual(insightsEvents(), rec.emitted, 'both reached the host as published');
    });
  }));

  jsTest('the event methods are functions on __bridge', function () {
    ['identify', 'page', 'screen', 'trackCurrentScreen', 'track', 'trackView', 'trackClick', 'consent', 'hasConsent', 'setOnline',
      'experienceRequest', 'experienceAnswered', 'releaseExperienceWaiters']
      .forEach(function (name) { assert.equal(typeof __bridge[name], 'function', name); });
  });

  jsTest('through the bridge with an empty allow-list, identify, page and screen are blocked and each reported once', withBridge({ allowedEventTypes: [] }, function (rec) {
    __bridge.identify({ userId: 'user-1' }, 'r1');
    __bridge.page({}, 'r2');
    __bridge.screen({ name: 'Home', properties: {} }, 'r3');
    assert.deepEqual(rec.blocked.map(function (b) { return b.method; }), ['identify', 'page', 'screen'], 'reported before the calls returned');
    assert.equal(rec.emitted.length, 0);
    assert.equal(__testHost.experience.accepted.length, 0, 'nothing handed to the host');
    assert.equal(__testHost.insights.accepted.length, 0);
    return Promise.all(['r1', 'r2', 'r3'].map(function (id) { return expectSettle(id, true, { accepted: false }); }));
  }));

  jsTest('the native default allow-list lets identify and screen through before consent', withBridge(undefined, function (rec) {
    assert.equal(__bridge.hasConsent('identify'), true);
    assert.equal(__bridge.hasConsent('screen'), true);
    assert.equal(__bridge.hasConsent('page'), false);
    assert.equal(__bridge.hasConsent('trackView'), false);
    __bridge.identify({ userId: 'u' }, 'r1');
    __bridge.page({}, 'r2');
    assert.equal(rec.emitted.length, 1);
    assert.equal(rec.emitted[0].context.gdpr.isConsentGiven, false);
    assert.deepEqual(rec.blocked, [{ reason: 'consent', method: 'page', args: [{}] }]);
    return Promise.all([expectSettle('r1', true, { accepted: true }), expectSettle('r2', true, { accepted: false })]);
  }));

  jsTest('through the bridge, a blocked track is reported once with its payload', withBridge({ allowedEventTypes: [] }, function (rec) {
    __bridge.track({ event: 'purchase' }, 'r1');
    assert.deepEqual(rec.blocked, [{ reason: 'consent', method: 'track', args: [{ event: 'purchase' }] }]);
    return expectSettle('r1', true, { accepted: false });
  }));

  jsTest('accepted events are published with channel, library, gdpr and the default page', withBridge({ defaults: { consent: true } }, function (rec) {
    __bridge.track({ event: 'e', properties: { a: 1 }, optimizationContextId: 'x' }, 'r1');
    assert.equal(rec.emitted.length, 1);
    var event = rec.emitted[0];
    assert.equal(event.type, 'track');
    assert.equal(event.channel, 'server');
    assert.deepEqual(event.context.library, { name: 'swift-optimization-linux', version: '0.1.0' });
    assert.equal(event.context.gdpr.isConsentGiven, true);
    assert.deepEqual(event.context.page, { path: '', query: {}, referrer: '', search: '', title: '', url: '' });
    assert.equal(event.timestamp, '2026-01-01T00:00:00.000Z');
    assert.equal('optimizationContextId' in event, false);
    assert.deepEqual(__testHost.experience.accepted, [{ event: event, profileId: null }], 'handed to the host as published; no profile yet');
    assert.equal(experienceQueued(), 1, 'offline: it stays queued');
    assert.equal(__testHost.insights.accepted.length, 0, 'a track takes the Experience path only');
    return expectSettle('r1', true, { accepted: true });
  }));

  jsTest('an event call that carries its time builds its events at that time, without asking the host clock', withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
    var clockReads = 0;
    var nativeNow = globalThis.__nativeNow;
    globalThis.__nativeNow = function () {
      clockReads++;
      return nativeNow();
    };
    try {
      __bridge.track({ event: 'e' }, 'r1', Date.UTC(2026, 5, 1, 12, 0, 0));
      __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r2', Date.UTC(2026, 5, 1, 12, 0, 1));
    } finally {
      globalThis.__nativeNow = nativeNow;
    }
    assert.deepEqual(rec.emitted.map(function (event) { return event.timestamp; }), ['2026-06-01T12:00:00.000Z', '2026-06-01T12:00:01.000Z']);
    assert.equal(clockReads, 0);
    __bridge.track({ event: 'later' }, 'r3');
    assert.equal(rec.emitted[2].timestamp, '2026-01-01T00:00:00.000Z', 'without a time the host clock is read');
  }));

  jsTest('channel is configurable', withBridge({ channel: 'kiosk', defaults: { consent: true } }, function (rec) {
    __bridge.screen({ name: 'Home' }, 'r1');
    assert.equal(rec.emitted[0].channel, 'kiosk');
    assert.deepEqual(rec.emitted[0].properties, { name: 'Home' });
    assert.equal('page' in rec.emitted[0].context, false);
  }));

  jsTest('consent(): state pushes, getState keys, purge of the Experience queue and the host\'s Insights queue on withdrawal', withBridge({ defaults: { profile: PF } }, function (rec) {
    var initial = JSON.parse(__bridge.getState());
    assert.equal('consent' in initial, false, 'omitted while undecided');
    assert.equal('persistenceConsent' in initial, false);
    assert.equal(initial.optimizationPossible, true);
    var pushes = rec.states.length;
    __bridge.consent(true);
    assert.equal(rec.states.length, pushes + 1, 'one push per consent change');
    var state = JSON.parse(__bridge.getState());
    assert.equal(state.consent, true);
    assert.equal(state.persistenceConsent, true);
    __bridge.track({ event: 'e' }, 'r1');
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r2');
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, sticky: true }, 'r3');
    assert.equal(experienceQueued(), 2);
    assert.deepEqual(__testHost.experience.accepted.map(function (a) { return a.profileId; }), ['p-1', 'p-1'], 'with the profile id');
    assert.deepEqual(insightsEvents().map(function (e) { return e.type; }), ['component_click', 'component']);
    assert.deepEqual(insightsEvents(), [rec.emitted[1], rec.emitted[3]], 'the click and the second view, as published');
    insightsEvents().forEach(function (e) { assert.equal(e.context.gdpr.isConsentGiven, true); });
    __bridge.consent({ persistence: false });
    assert.equal(experienceQueued(), 2);
    assert.equal(__testHost.experience.purges, 0, 'persistence consent alone purges nothing');
    assert.equal(__testHost.insights.purges, 0);
    assert.equal(rec.states[rec.states.length - 1].persistenceConsent, false);
    assert.equal(rec.states[rec.states.length - 1].consent, true);
    __bridge.consent({ events: false });
    assert.equal(__testHost.experience.purges, 1, '__nativeExperiencePurge inside the consent call');
    assert.equal(experienceQueued(), 0);
    assert.equal(__testHost.insights.purges, 1, '__nativeInsightsPurge inside the consent call');
    assert.equal(__testHost.insights.queued.length, 0);
    assert.equal(JSON.parse(__bridge.getState()).consent, false);
    assert.throws(function () { __bridge.consent('yes'); }, /consent input must be a boolean or an object/);
  }));

  jsTest('an Insights method hands the built event to __nativeInsightsAccept, after telling the host the profile', function () {
    var calls = [];
    var accept = globalThis.__nativeInsightsAccept;
    var tell = globalThis.__nativeInsightsProfile;
    globalThis.__nativeInsightsProfile = function (json) { calls.push(['profile', json]); return tell(json); };
    globalThis.__nativeInsightsAccept = function (json) { calls.push(['accept', json]); return accept(json); };
    return withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
      assert.deepEqual(calls, [['profile', JSON.stringify(PF)]], 'initialize tells the current profile');
      __bridge.trackClick({ componentId: 'c-1', variantIndex: 2, experienceId: 'exp-1' }, 'r1');
      __bridge.trackHover({ componentId: 'c-1', hoverId: 'h-1', variantIndex: 2, hoverDurationMs: 40 }, 'r2');
      assert.deepEqual(calls.map(function (c) { return c[0]; }), ['profile', 'accept', 'accept'], 'an unchanged profile is not told again');
      var sent = calls.slice(1).map(function (c) { return JSON.parse(c[1]); });
      assert.deepEqual(sent, rec.emitted, 'the event JSON is the published event');
      assert.equal(sent[0].type, 'component_click');
      assert.equal(sent[0].componentId, 'c-1');
      assert.equal(sent[0].variantIndex, 2);
      assert.equal(sent[0].experienceId, 'exp-1');
      assert.equal(sent[0].context.gdpr.isConsentGiven, true);
      assert.equal(sent[1].type, 'component_hover');
      assert.notEqual(sent[0].messageId, sent[1].messageId);
      assert.ok(/^[0-9a-f-]{36}$/.test(sent[0].messageId), sent[0].messageId);
      assert.equal(__testHost.insights.accepted[0].profile.id, 'p-1');
      return Promise.all([expectSettle('r1', true, { accepted: true }), expectSettle('r2', true, { accepted: true })]);
    })();
  });

  jsTest('without a profile the host is told null first; the events are handed over all the same', withBridge({ defaults: { consent: true } }, function (rec) {
    assert.deepEqual(__testHost.insights.profiles, [null], 'told once at initialize');
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r1');
    assert.equal(rec.emitted.length, 1, 'published although no profile exists');
    assert.deepEqual(__testHost.insights.accepted, [{ event: rec.emitted[0], profile: null }]);
    assert.deepEqual(__testHost.insights.profiles, [null]);
    return expectSettle('r1', true, { accepted: true });
  }));

  jsTest('a blocked Insights call calls no Insights native', withBridge({ allowedEventTypes: [], defaults: { profile: PF } }, function (rec) {
    var told = __testHost.insights.profiles.length;
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r1');
    __bridge.trackHover({ componentId: 'c', hoverId: 'h', variantIndex: 0, hoverDurationMs: 1 }, 'r2');
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1 }, 'r3');
    __bridge.trackFlagView({ componentId: 'flag-1' }, 'r4');
    assert.equal(rec.blocked.length, 4);
    assert.equal(__testHost.insights.accepted.length, 0);
    assert.equal(__testHost.insights.profiles.length, told, 'not even the profile');
    assert.equal(__testHost.insights.purges, 0);
    return Promise.all(['r1', 'r2', 'r3', 'r4'].map(function (id) { return expectSettle(id, true, { accepted: false }); }));
  }));

  jsTest('a throwing __nativeInsightsAccept (the host could not store the event) rejects the call; nothing is published', withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
    __testHost.insights.failAccept = 'the Insights store failed';
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r1');
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1 }, 'r2');
    assert.equal(rec.emitted.length, 0, 'a refused event is never published');
    assert.equal(__testHost.insights.accepted.length, 0);
    __testHost.insights.failAccept = null;
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r3');
    assert.equal(rec.emitted.length, 1, 'later events flow');
    return Promise.all([
      expectSettle('r1', false, 'the Insights store failed'),
      expectSettle('r2', false, 'the Insights store failed'),
      expectSettle('r3', true, { accepted: true }),
    ]);
  }));

  jsTest('trackCurrentScreen: de-duplicated by routeKey ?? name; blocked calls reported once as trackCurrentScreen', withBridge({ allowedEventTypes: [] }, function (rec) {
    __bridge.trackCurrentScreen({ name: 'Home' }, 'b1');
    assert.deepEqual(rec.blocked, [{ reason: 'consent', method: 'trackCurrentScreen', args: [{ name: 'Home' }] }], 'exactly one report');
    assert.equal(rec.emitted.length, 0);
    __bridge.consent(true);
    __bridge.trackCurrentScreen({ name: 'Home' }, 'a1');
    __bridge.trackCurrentScreen({ name: 'Home', properties: { x: 1 } }, 'a2');
    __bridge.trackCurrentScreen({ name: 'Home', routeKey: 'home-2' }, 'a3');
    __bridge.trackCurrentScreen({ name: 'Other', routeKey: 'home-2' }, 'a4');
    __bridge.trackCurrentScreen({ name: 'Home' }, 'a5');
    assert.equal(rec.emitted.length, 3);
    assert.deepEqual(rec.emitted.map(function (e) { return e.type; }), ['screen', 'screen', 'screen']);
    assert.equal(rec.blocked.length, 1, 'de-duplication is not a consent block');
    return Promise.all([
      expectSettle('b1', true, { accepted: false }),
      expectSettle('a1', true, { accepted: true }),
      expectSettle('a2', true, { accepted: false, duplicate: true }),
      expectSettle('a3', true, { accepted: true }),
      expectSettle('a4', true, { accepted: false, duplicate: true }),
      expectSettle('a5', true, { accepted: true }),
    ]);
  }));

  jsTest('trackCurrentScreen: a blocked call does not remember its key', withBridge({ allowedEventTypes: [] }, function (rec) {
    __bridge.trackCurrentScreen({ name: 'Home' }, 'r1');
    __bridge.consent(true);
    __bridge.trackCurrentScreen({ name: 'Home' }, 'r2');
    assert.equal(rec.emitted.length, 1);
    return expectSettle('r2', true, { accepted: true });
  }));

  jsTest('trackView: sticky views go to Experience once per stickyTrackingKey ?? viewId', withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
    function view(viewId, extra) {
      return Object.assign({ componentId: 'c', viewId: viewId, variantIndex: 1, viewDurationMs: 1 }, extra || {});
    }
    function insightsViews() {
      return insightsEvents().map(function (e) { return e.viewId; });
    }
    __bridge.trackView(view('v1', { sticky: true }), 'r1');
    assert.equal(experienceQueued(), 1);
    assert.deepEqual(insightsViews(), ['v1']);
    __bridge.trackView(view('v1', { sticky: true }), 'r2');
    assert.equal(experienceQueued(), 1, 'same key: Insights only');
    assert.deepEqual(insightsViews(), ['v1', 'v1']);
    __bridge.trackView(view('v2', { sticky: true, stickyTrackingKey: 'entry-c' }), 'r3');
    __bridge.trackView(view('v3', { sticky: true, stickyTrackingKey: 'entry-c' }), 'r4');
    assert.equal(experienceQueued(), 2);
    assert.deepEqual(__testHost.experience.queued.map(function (q) { return q.event.viewId; }), ['v1', 'v2']);
    assert.deepEqual(insightsViews(), ['v1', 'v1', 'v2', 'v3']);
    __bridge.trackView(view('v4', { sticky: false }), 'r5');
    assert.equal(experienceQueued(), 2);
    assert.deepEqual(insightsViews(), ['v1', 'v1', 'v2', 'v3', 'v4']);
    assert.equal(rec.emitted.length, 7);
    rec.emitted.forEach(function (e) {
      assert.equal('sticky' in e, false);
      assert.equal('stickyTrackingKey' in e, false);
    });
    var ids = insightsEvents().map(function (e) { return e.messageId; });
    assert.equal(ids.filter(function (id, i) { return ids.indexOf(id) === i; }).length, 5, 'every Insights view has its own messageId');
    __testHost.insights.accepted.forEach(function (a) { assert.deepEqual(a.profile, PF, 'told the profile before the first event'); });
  }));

  jsTest('trackView: a blocked sticky view is reported once and does not remember its key', withBridge({ allowedEventTypes: [], defaults: { profile: PF } }, function (rec) {
    var payload = { componentId: 'c', viewId: 'v1', variantIndex: 0, viewDurationMs: 1, sticky: true, stickyTrackingKey: 'k' };
    __bridge.trackView(payload, 'r1');
    assert.equal(rec.blocked.length, 1);
    assert.equal(rec.blocked[0].method, 'trackView');
    assert.equal(rec.blocked[0].args[0].componentId, 'c');
    assert.equal(__testHost.insights.accepted.length, 0, 'a blocked view reaches no queue');
    assert.equal(__testHost.experience.accepted.length, 0);
    __bridge.consent(true);
    __bridge.trackView(payload, 'r2');
    assert.equal(experienceQueued(), 1);
    assert.equal(__testHost.insights.accepted.length, 1);
    return expectSettle('r1', true, { accepted: false });
  }));

  jsTest('trackClick settles {accepted} (blocked: false)', withBridge({ allowedEventTypes: ['component'] }, function (rec) {
    __bridge.trackClick({ componentId: 'c', variantIndex: 0 }, 'r1');
    assert.equal(rec.blocked[0].method, 'trackClick');
    __bridge.consent(true);
    __bridge.trackClick({ componentId: 'c', variantIndex: 0, experienceId: 'x' }, 'r2');
    assert.equal(rec.emitted[0].type, 'component_click');
    assert.equal(rec.emitted[0].experienceId, 'x');
    return Promise.all([expectSettle('r1', true, { accepted: false }), expectSettle('r2', true, { accepted: true })]);
  }));

  jsTest('through the bridge, a resolved context enriches both sticky view emissions, never the queue', withBridge({
    defaults: { consent: true, profile: PF },
  }, function (rec) {
    var resolved = JSON.parse(__bridge.resolveOptimizedEntry(fx.optimizedEntry(), fx.selectedOptimizations()));
    __bridge.trackView({
      componentId: fx.ids.OE, experienceId: fx.ids.EU, optimizationContextId: resolved.optimizationContextId, sticky: true,
      variantIndex: 1, viewDurationMs: 250, viewId: 'view-1',
    }, 'r1');
    assert.equal(rec.emitted.length, 2);
    rec.emitted.forEach(function (e) {
      assert.equal(e.optimization.contextId, resolved.optimizationContextId);
      assert.equal(e.optimization.baselineEntry.sys.id, fx.ids.OE);
    });
    return expectSettle('r1', true, { accepted: true });
  }));

  jsTest('an unserializable optimization context is dropped from the published event', withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
    var oe = fx.optimizedEntry();
    oe.fields.self = oe;
    __bridge.prepareEntry('cyclic', oe);
    __bridge.prepareSelections('so', fx.selectedOptimizations());
    var contextId = __bridge.resolvePrepared('cyclic', 'so').split('|')[4];
    assert.ok(contextId.length > 0);
    __bridge.trackClick({ componentId: fx.ids.OE, variantIndex: 1, optimizationContextId: contextId }, 'r1');
    assert.equal(rec.emitted.length, 1);
    assert.equal('optimization' in rec.emitted[0], false);
    assert.equal(rec.emitted[0].componentId, fx.ids.OE);
    return expectSettle('r1', true, { accepted: true });
  }));

  jsTest('registerDeferred registers host-drawn ids as eager registration would, and asks for missing documents', withBridge({ defaults: { consent: true, profile: PF } }, function (rec) {
    __bridge.prepareEntry('oe', fx.optimizedEntry());
    __bridge.prepareSelections('so', fx.selectedOptimizations());
    var eager = __bridge.resolvePrepared('oe', 'so').split('|')[4];
    var now = __testHost.now();
    assert.equal(__bridge.registerDeferred({ pairs: [['oe', 'so'], ['gone', null], ['oe', 'missing']], records: [0, now, 'host-1'] }), '?e1',
      'nothing registered while a document is missing');
    assert.equal(__bridge.registerDeferred({ pairs: [['oe', 'missing']], records: [0, now, 'host-0'] }), '?s0');
    assert.equal(__bridge.registerDeferred({ pairs: [['oe', 'so'], ['oe', null]], records: [0, now, 'host-1', 1, now, 'host-2'] }), '');
    __bridge.trackClick({ componentId: fx.ids.OE, variantIndex: 1, optimizationContextId: 'host-1' }, 'r1');
    __bridge.trackClick({ componentId: fx.ids.OE, variantIndex: 1, optimizationContextId: eager }, 'r2');
    __bridge.trackClick({ componentId: fx.ids.OE, variantIndex: 1, optimizationContextId: 'host-0' }, 'r3');
    __bridge.trackClick({ componentId: fx.ids.OE, variantIndex: 1, optimizationContextId: 'host-2' }, 'r4');
    assert.equal(rec.emitted.length, 4);
    assert.equal(rec.emitted[0].optimization.contextId, 'host-1');
    var deferred = Object.assign({}, rec.emitted[0].optimization);
    var direct = Object.assign({}, rec.emitted[1].optimization);
    delete deferred.contextId;
    delete direct.contextId;
    assert.deepEqual(deferred, direct, 'the same context as the eager registration');
    assert.equal('optimization' in rec.emitted[2], false, 'the refused batch registered nothing');
    assert.equal('optimization' in rec.emitted[3], false, 'nothing selected: no context');
    assert.throws(function () { __bridge.registerDeferred(null); }, /expects \{pairs, records\}/);
    return expectSettle('r4', true, { accepted: true });
  }));

  jsTest('setOnline works before and after initialize and validates its argument', function () {
    __bridge.setOnline(false);
    __bridge.initialize({ clientId: 'c', environment: 'main' });
    assert.throws(function () { __bridge.setOnline('no'); }, /setOnline expects a boolean/);
    __bridge.setOnline(true);
    __bridge.destroy();
  });

  jsTest('an outcome known at once is returned as [ok, value, emitted]: one serialization, no settle crossing', withBridge({ defaults: { consent: true } }, function (rec) {
    var settles = 0;
    var stringifies = 0;
    var nativeSettle = globalThis.__nativeSettle;
    var stringify = JSON.stringify;
    globalThis.__nativeSettle = function () { settles += 1; return nativeSettle.apply(undefined, arguments); };
    JSON.stringify = function () { stringifies += 1; return stringify.apply(JSON, arguments); };
    var returned;
    try {
      returned = callUnwrapped('track', { event: 'direct' }, 'r-direct');
    } finally {
      globalThis.__nativeSettle = nativeSettle;
      JSON.stringify = stringify;
    }
    assert.equal(stringifies, 2, 'one JSON.stringify for the handoff to the host\'s Experience queue, one for the outcome and its event');
    assert.equal(settles, 0, 'no __nativeSettle call');
    assert.equal(__testHost.experience.accepted.length, 1);
    var outcome = JSON.parse(returned);
    assert.equal(outcome[0], true);
    assert.deepEqual(outcome[1], { accepted: true });
    assert.equal(outcome[2].length, 1);
    assert.equal(outcome[2][0].type, 'track');
    assert.equal(outcome[2][0].event, 'direct');
    assert.equal(rec.emitted.length, 0, 'the event travels with the outcome, not through __nativeOnEventEmitted');
  }));

  jsTest('an invalid payload is returned as [false, message] without events', withBridge({}, function (rec) {
    var outcome = JSON.parse(callUnwrapped('track', { event: 42 }, 'r-invalid'));
    assert.equal(outcome[0], false);
    assert.equal(typeof outcome[1], 'string');
    assert.equal(outcome.length, 2);
    assert.equal(rec.emitted.length, 0);
  }));
})();
