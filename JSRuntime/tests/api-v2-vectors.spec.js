// tests/api-v2-vectors.spec.js — the wire routes of API v2 (and v1) in the Experience API
// request, as the shared core builds it for the host to send, and the Insights events route (core/api-response.js; the
// Swift host sends the Insights events).
(function () {
  'use strict';
  var ns = globalThis.__optimization;
  var EVENT = { type: 'track', event: 'Clicked', messageId: 'm-1' };

  var OK_BODY = JSON.stringify({
    data: { profile: { id: 'p-1', stableId: 'p-1', random: 0, audiences: [], traits: {}, location: {} }, experiences: [], changes: [] },
    message: 'ok', error: null,
  });

  jsTest('v2 create without an environment: the spaces route of master, text/plain, the default features', function () {
    var api = ns.createExperienceApi({ clientId: 'space-1', apiVersion: 'v2' });
    var request = api.profileUpsertRequest({ events: [EVENT] });
    assert.equal(api.profileAnswerOutcome(200, {}, OK_BODY).ok, true);
    assert.equal(request.method, 'POST');
    assert.equal(request.url, 'https://experience.ninetailed.co/v3/spaces/space-1/environments/master/profiles');
    assert.equal(request.headers['Content-Type'], 'text/plain');
    assert.deepEqual(JSON.parse(request.body).options, { features: ['ip-enrichment', 'location'] });
  });

  jsTest('v2 update with locale, preflight, a forced IP and plainText false: query order, header, JSON body', function () {
    var api = ns.createExperienceApi({
      clientId: 'space-1', apiVersion: 'v2', environment: 'main', preflight: true, plainText: false,
      getLocale: function () { return 'de-DE'; },
    });
    var request = api.profileUpsertRequest({ profileId: 'p-1', events: [EVENT], headers: { 'X-Force-IP': '203.0.113.10' } });
    assert.equal(request.url, 'https://experience.ninetailed.co/v3/spaces/space-1/environments/main/profiles/p-1?locale=de-DE&type=preflight');
    assert.equal(request.headers['X-Force-IP'], '203.0.113.10');
    assert.equal(request.headers['Content-Type'], 'application/json');
  });

  jsTest('Experience v1 with the default environment (the Insights route is the host\'s: InsightsEndpoint)', function () {
    assert.equal(ns.createExperienceApi({ clientId: 'key_123' }).profilesUrl(),
      'https://experience.ninetailed.co/v2/organizations/key_123/environments/main/profiles');
  });

  jsTest('v2 has no alias or group event: neither is an event call', function () {
    assert.equal(ns.payloadRules.EVENT_METHODS.alias, undefined);
    assert.equal(ns.payloadRules.EVENT_METHODS.group, undefined);
    var run = ns.createRequestEvents({ clientId: 's', apiVersion: 'v2', environment: 'master', allowedEventTypes: [], api: {}, requestTimeoutMs: 100 }).run;
    assert.ok(/Unknown request method "alias"/.test(run('alias', {}, { consent: true }).message));
    assert.ok(/Unknown request method "group"/.test(run('group', {}, { consent: true }).message));
  });
})();
