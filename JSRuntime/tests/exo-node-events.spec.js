// tests/exo-node-events.spec.js — the Experiences (ExO) node events of API v2: exo_node_view,
// exo_node_click, exo_node_hover through the service pipeline (rules, builder, gate, version).
(function () {
  'use strict';
  var ns = globalThis.__optimization;

  function events(extra) {
    return ns.createRequestEvents(Object.assign({
      clientId: 'space-1', apiVersion: 'v2', environment: 'master', allowedEventTypes: [], channel: 'server',
      library: { name: 'lib', version: '2.0.0' }, api: {}, requestTimeoutMs: 500,
    }, extra || {}));
  }

  var PROFILE = { id: 'p-1' };
  var VIEW = { entityId: 'experience-123', entityKind: 'Experience', viewDurationMs: 3000, viewId: 'view-123' };

  jsTest('exo_node_view: the entity, view id and duration on top of the universal fields; no componentId', function () {
    var outcome = events().run('trackNodeView', Object.assign({ entryIds: ['entry-1'], parameters: { size: 'l' } }, VIEW), { consent: true, profile: PROFILE });
    assert.equal(outcome.accepted, true);
    assert.deepEqual(outcome.insights, [{ event: 0 }]);
    var event = outcome.events[outcome.insights[0].event];
    assert.equal(event.type, 'exo_node_view');
    assert.equal(event.entityId, 'experience-123');
    assert.equal(event.entityKind, 'Experience');
    assert.equal(event.viewDurationMs, 3000);
    assert.equal(event.viewId, 'view-123');
    assert.deepEqual(event.entryIds, ['entry-1']);
    assert.deepEqual(event.parameters, { size: 'l' });
    assert.equal('componentId' in event || 'componentType' in event || 'optimizationId' in event, false);
    assert.equal(typeof event.messageId, 'string');
    assert.equal(event.context.gdpr.isConsentGiven, true);
  });

  jsTest('exo_node_click and exo_node_hover carry what their interaction adds', function () {
    var click = events().run('trackNodeClick', { entityId: 'f-1', entityKind: 'Fragment', optimizationId: 'opt-1', variantId: 'v-1', variantIndex: 1 },
      { consent: true, profile: PROFILE }).events[0];
    assert.equal(click.type, 'exo_node_click');
    assert.equal(click.optimizationId, 'opt-1');
    assert.equal(click.variantIndex, 1);
    var hover = events().run('trackNodeHover', { entityId: 'c-1', entityKind: 'InlineComponent', hoverId: 'h-1', hoverDurationMs: 0 },
      { consent: true, profile: PROFILE }).events[0];
    assert.equal(hover.type, 'exo_node_hover');
    assert.equal(hover.hoverDurationMs, 0);
  });

  jsTest('exo_node payloads out of contract are refused: negative or fractional durations, an Entry kind', function () {
    var run = events().run;
    var request = { consent: true, profile: PROFILE };
    assert.ok(/"viewDurationMs"/.test(run('trackNodeView', Object.assign({}, VIEW, { viewDurationMs: -1 }), request).message));
    assert.ok(/"viewDurationMs"/.test(run('trackNodeView', Object.assign({}, VIEW, { viewDurationMs: 1.5 }), request).message));
    var kind = run('trackNodeClick', { entityId: 'e', entityKind: 'Entry' }, request);
    assert.ok(kind instanceof Error);
    assert.ok(/"entityKind"/.test(kind.message), kind.message);
  });

  jsTest('exo_node events need API v2; before consent the allow-list admits them by wire type or component selector', function () {
    var v1 = events({ apiVersion: 'v1', clientId: 'org-1' }).run('trackNodeView', VIEW, { consent: true, profile: PROFILE });
    assert.ok(v1 instanceof Error);
    assert.ok(/needs API v2/.test(v1.message), v1.message);
    var strict = events().run('trackNodeView', VIEW, { profile: PROFILE });
    assert.equal(strict.accepted, false);
    assert.equal(strict.blocked.method, 'trackNodeView');
    assert.equal(events({ allowedEventTypes: ['exo_node_view'] }).run('trackNodeView', VIEW, { profile: PROFILE }).accepted, true);
    assert.equal(events({ allowedEventTypes: ['component'] }).run('trackNodeView', VIEW, { profile: PROFILE }).accepted, true);
    assert.equal(events({ allowedEventTypes: ['component'] }).run('trackNodeClick', { entityId: 'e', entityKind: 'Fragment' }, { profile: PROFILE }).accepted, false);
  });

  jsTest('every duration and index an event carries must be an integer >= 0: negative, fractional and infinite values are refused before anything is built', function () {
    var rules = globalThis.__optimization.payloadRules;
    var base = {
      trackView: { componentId: 'c', viewId: 'v', variantIndex: 0, viewDurationMs: 0 },
      trackClick: { componentId: 'c', variantIndex: 0 },
      trackHover: { componentId: 'c', hoverId: 'h', hoverDurationMs: 0, variantIndex: 0 },
      trackFlagView: { componentId: 'c', variantIndex: 0, viewDurationMs: 0 },
      trackNodeView: { entityId: 'e', entityKind: 'Experience', viewId: 'v', viewDurationMs: 0, variantIndex: 0 },
      trackNodeClick: { entityId: 'e', entityKind: 'Experience', variantIndex: 0 },
      trackNodeHover: { entityId: 'e', entityKind: 'Experience', hoverId: 'h', hoverDurationMs: 0, variantIndex: 0 },
    };
    Object.keys(base).forEach(function (method) {
      var entry = rules.EVENT_METHODS[method];
      assert.equal(rules.validate(method, base[method], entry.rules), null, method + ' valid');
      ['variantIndex', 'viewDurationMs', 'hoverDurationMs'].forEach(function (key) {
        if (!(key in base[method])) return;
        [-1, -0.001, 0.5, Infinity, -Infinity, NaN].forEach(function (bad) {
          var payload = Object.assign({}, base[method]);
          payload[key] = bad;
          var error = rules.validate(method, payload, entry.rules);
          assert.ok(error instanceof Error, method + ' ' + key + '=' + bad + ' refused');
          assert.equal(error.message, method + ' payload "' + key + '" must be an integer \u2265 0.');
        });
      });
    });
  });
})();
