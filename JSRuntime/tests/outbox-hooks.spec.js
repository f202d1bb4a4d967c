// tests/outbox-hooks.spec.js — what JavaScript still does around the host's durable outbox
// (Sources/OptimizationDelivery/OptimizationDelivery.docc/TheDurableOutbox.md). The Swift host stores, windows,
// resumes and acknowledges every accepted event itself (its Experience and Insights queues);
// JavaScript only hands each built event over and learns whether it was taken: a host that could
// not store an event throws from its accept native (fake-host.js `failAccept`), so the call
// fails and nothing is published; consent withdrawal purges the host's queues and calls
// __nativeOutboxPurge (when the host registered it) inside the same call; blocked calls hand
// nothing over.
(function () {
  'use strict';
  var PF = { id: 'p-1', stableId: 'p-1', random: 0.5, audiences: [], traits: {}, location: {} };
  var drain = __testHost.drainJobs;

  // Starts the bridge (offline: the host keeps what it takes) with consent and records the
  // published events; `rec.calls` lists the purge natives in call order.
  function withOutbox(config, body) {
    return function () {
      var rec = { published: [], calls: [] };
      var experiencePurge = globalThis.__nativeExperiencePurge;
      var insightsPurge = globalThis.__nativeInsightsPurge;
      globalThis.__nativeExperiencePurge = function () { rec.calls.push('experience'); return experiencePurge(); };
      globalThis.__nativeInsightsPurge = function () { rec.calls.push('insights'); return insightsPurge(); };
      globalThis.__nativeOutboxPurge = function () { rec.calls.push('outbox'); };
      globalThis.__nativeOnEventEmitted = function (json) { rec.published.push(JSON.parse(json)); };
      function cleanup() {
        delete globalThis.__nativeOutboxPurge;
        delete globalThis.__nativeOnEventEmitted;
      }
      try {
        __bridge.initialize(Object.assign({ clientId: 'org-1', environment: 'main', defaults: { consent: true } }, config));
        return Promise.resolve(body(rec)).then(function (value) { cleanup(); return value; }, function (error) { cleanup(); throw error; });
      } catch (error) {
        cleanup();
        throw error;
      }
    };
  }

  function settledFor(requestId) {
    return __testHost.settled.filter(function (s) { return s.requestId === requestId; });
  }

  jsTest('outbox: a failed store fails the call; the event is neither queued nor published; a sticky view stops there', withOutbox({ defaults: { consent: true, profile: PF } }, function (rec) {
    __testHost.experience.failAccept = 'no space left on device';
    __bridge.track({ event: 'lost' }, 't1');
    __bridge.trackView({ componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 1, sticky: true }, 'v1');
    __testHost.experience.failAccept = null;
    __bridge.track({ event: 'kept' }, 't2');
    return drain().then(function () {
      ['t1', 'v1'].forEach(function (id) {
        var settled = settledFor(id);
        assert.equal(settled.length, 1, id);
        assert.equal(settled[0].ok, false, id + ': the call fails');
        assert.ok(settled[0].json.indexOf('no space left on device') !== -1, settled[0].json);
        assert.equal(settled[0].code, 'experienceEventNotStored', id + ': the host reads the failure by its code');
      });
      assert.deepEqual(JSON.parse(settledFor('t2')[0].json), { accepted: true }, 'the next event is unaffected');
      assert.deepEqual(__testHost.experience.queued.map(function (q) { return q.event.event; }), ['kept']);
      assert.deepEqual(rec.published.map(function (e) { return e.event; }), ['kept'], 'the refused events are not published');
      assert.equal(__testHost.insights.accepted.length, 0, 'the sticky view never reached Insights');
    });
  }));

  jsTest('outbox: consent withdrawal purges the host\'s queues, then the outbox, in the same call; blocked calls hand nothing over', withOutbox({}, function (rec) {
    __bridge.track({ event: 'a' }, 't1');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c1');
    __bridge.consent(false);
    assert.deepEqual(rec.calls, ['experience', 'insights', 'outbox']);
    assert.equal(__testHost.experience.queued.length, 0);
    assert.equal(__testHost.insights.queued.length, 0);
    __bridge.track({ event: 'b' }, 't2');
    __bridge.trackClick({ componentId: 'x', variantIndex: 0 }, 'c2');
    assert.equal(__testHost.experience.accepted.length, 1, 'a blocked call is never handed over');
    assert.equal(__testHost.insights.accepted.length, 1, 'nor to the Insights queue');
    delete globalThis.__nativeOutboxPurge;
    __bridge.consent(false);
    assert.deepEqual(rec.calls.slice(3), ['experience', 'insights'], 'a host without an outbox registers no purge for it');
  }));

  jsTest('outbox: Insights events go to the host\'s Insights queue, never to the Experience queue', withOutbox({}, function () {
    __bridge.trackClick({ componentId: 'hero', variantIndex: 0 }, 'c1');
    __bridge.trackHover({ componentId: 'hero', hoverId: 'h', variantIndex: 0, hoverDurationMs: 5 }, 'h1');
    __bridge.trackView({ componentId: 'hero', viewId: 'v', variantIndex: 0, viewDurationMs: 5 }, 'v1');
    assert.deepEqual(__testHost.insights.accepted.map(function (a) { return a.event.type; }), ['component_click', 'component_hover', 'component']);
    assert.equal(__testHost.insights.accepted[0].profile, null, 'no profile yet: the host holds them');
    __bridge.identify({ userId: 'u' }, 'i1');
    assert.deepEqual(__testHost.experience.accepted.map(function (a) { return a.event.type; }), ['identify'], 'only the identify');
    assert.equal(__testHost.fetches.length, 0, 'JavaScript sends nothing');
  }));
})();
