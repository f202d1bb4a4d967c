// service/request-handoff.js
// Contract: `__optimization.prepareRequestHandoff(requestEvents, input, request)` → {handoff,
// experience?, blocked} | Error, or, while its preview call is pending, {handoff, blocked,
// experienceRequest, context} (requestEvents.experienceCall: the host sends the request and
// hands the answer to requestEvents.interpret with `requestHandoffFinishers`, which answers
// {handoff, experience, blocked}): the first request's events evaluated on the server without
// being stored (a preflight Experience call), and the handoff the page carries to the browser so
// that it commits exactly those events once (its replay). `requestEvents` is a
// createRequestEvents(settings) pipeline (service/request-events.js); `request` as for its run().
// `input` = {routeKey: string, initialEvents?: [{type: "identify", userId, traits?} |
// {type: "track", event, properties?}], page?: page builder input}. Steps:
//   1. handoff = {cache: {scope: "private-request"}, profileId: the request's profile id if any}.
//   2. Page gate: unless the request may send `page` (consent, or the allow-list), the page is
//      reported blocked and {handoff} returned: no replay, no call.
//   3. Route guard: `routeKey` must start with "/", else a warning and {handoff}.
//   4. Build: an initial event that is not identify/track ⇒ {handoff}; one the gate does not
//      admit is reported blocked and skipped; the page event comes last; the request's event
//      context lies under each payload; context.gdpr.isConsentGiven = (consent === true).
//   5. Validate: at most MAX_EVENTS (200) events, at most MAX_IDENTIFY (50) identify events (the
//      Experience API's limits), else {handoff}.
//   6. handoff.replay = {routeKey, events, locale: the request's locale when set}.
//   7. Preview: one upsert of the events with preflight (not stored), sent by the host;
//      `experience` is its outcome. On success handoff.profileId = the known id ?? the returned
//      profile's id; on failure a warning is logged and the handoff keeps its replay.
// `blocked` lists the reports ({reason: "consent", method, args}) the host publishes.
// `__optimization.commitRequestReplay(requestEvents, replay, request)` → {accepted: false,
// blocked} | Error, or while its call is pending {accepted: true, blocked, experienceRequest,
// context} (finished as above into {accepted: true, experience, blocked}); with failFast the
// finished answer at once: what a browser does with the handoff, for hosts that stand in
// for it: the replay's events in one upsert that is stored (no preflight), each gated and stamped
// by the consent of the request that commits it, not the one that prepared it. The replay must
// be {routeKey starting with "/", events: 1…200 objects, at most 50 identify, the last a page,
// the others identify or track}, else an Error. Each event the request may not send now is
// reported blocked and left out; each event it may send keeps its messageId and payload, with
// context.gdpr.isConsentGiven = (the committing request's consent === true). When no event is
// admitted nothing is sent ({accepted: false, blocked}).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/request-handoff.js', {
    provides: ['commitRequestReplay', 'prepareRequestHandoff', 'requestHandoffFinishers', 'requestHandoffLimits'],
    uses: ['host', 'payloadRules'],
  });
  var host = ns.host;
  var rules = ns.payloadRules;

  var MAX_EVENTS = 200;
  var MAX_IDENTIFY = 50;
  var INITIAL = { identify: 'buildIdentify', track: 'buildTrack' };

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function profileIdOf(profile) {
    return isRecord(profile) && typeof profile.id === 'string' && profile.id.length > 0 ? profile.id : undefined;
  }

  function prepareRequestHandoff(requestEvents, input, request) {
    if (!isRecord(input) || typeof input.routeKey !== 'string') return new Error('prepareRequestHandoff needs a string "routeKey".');
    var initial = input.initialEvents === undefined || input.initialEvents === null ? [] : input.initialEvents;
    if (!Array.isArray(initial)) return new Error('prepareRequestHandoff "initialEvents" must be an array when provided.');
    var page = isRecord(input.page) ? input.page : {};
    var scope = requestEvents.scopeOf(request);
    var knownProfileId = profileIdOf(scope.profile);
    var handoff = { cache: { scope: 'private-request' } };
    if (knownProfileId !== undefined) handoff.profileId = knownProfileId;
    var blocked = [];
    function report(method, payload) {
      requestEvents.block(method, payload);
      blocked.push({ reason: 'consent', method: method, args: [payload] });
    }
    function only() {
      return { handoff: handoff, blocked: blocked };
    }
    if (!requestEvents.admits('page', scope)) {
      report('page', page);
      return only();
    }
    if (input.routeKey.charAt(0) !== '/') {
      host.log('warn', 'prepareRequestHandoff: routeKey must be a path starting with "/"; no replay.');
      return only();
    }
    var builder = requestEvents.builderFor(scope);
    var events = [];
    for (var i = 0; i < initial.length; i++) {
      var item = initial[i];
      var type = isRecord(item) ? item.type : undefined;
      if (INITIAL[type] === undefined) return only();
      var payload = Object.assign({}, item);
      delete payload.type;
      if (rules.validate(type, payload, rules.EVENT_METHODS[type].rules) !== null) return only();
      if (!requestEvents.admits(type, scope)) {
        report(type, payload);
        continue;
      }
      events.push(builder[INITIAL[type]](requestEvents.builderInput(type, payload, scope.eventContext)));
    }
    events.push(builder.buildPageView(requestEvents.builderInput('page', page, scope.eventContext)));
    var identifies = events.filter(function (event) { return event.type === 'identify'; }).length;
    if (events.length > MAX_EVENTS || identifies > MAX_IDENTIFY) return only();
    handoff.replay = { routeKey: input.routeKey, events: events };
    if (typeof scope.locale === 'string') handoff.replay.locale = scope.locale;
    var preview = Object.assign({}, scope, { preflight: true });
    var pending = requestEvents.experienceCall(events, preview, { then: 'handoff', handoff: handoff, blocked: blocked }, finishHandoff);
    if (pending.experienceRequest === undefined) return pending;
    return { handoff: handoff, blocked: blocked, experienceRequest: pending.experienceRequest, context: pending.context };
  }

  // The preview's outcome: the handoff with the previewed profile id when none was known.
  function finishHandoff(context, outcome) {
    var handoff = context.handoff;
    if (outcome.ok && isRecord(outcome.data) && handoff.profileId === undefined && profileIdOf(outcome.data.profile) !== undefined) {
      handoff.profileId = outcome.data.profile.id;
    }
    if (!outcome.ok) host.log('warn', 'prepareRequestHandoff: the preview call did not succeed; the handoff carries the replay only.');
    return { handoff: handoff, experience: outcome, blocked: context.blocked };
  }

  function finishCommit(context, outcome) {
    return { accepted: true, experience: outcome, blocked: context.blocked };
  }

  function invalidReplay(replay) {
    if (!isRecord(replay) || typeof replay.routeKey !== 'string' || replay.routeKey.charAt(0) !== '/') return 'a routeKey starting with "/"';
    var events = replay.events;
    if (!Array.isArray(events) || events.length === 0 || events.length > MAX_EVENTS) return '1 to ' + MAX_EVENTS + ' events';
    for (var i = 0; i < events.length; i++) {
      var type = isRecord(events[i]) ? events[i].type : undefined;
      var expected = i === events.length - 1 ? type === 'page' : type === 'identify' || type === 'track';
      if (!expected) return 'identify/track events followed by one page event';
    }
    if (events.filter(function (event) { return event.type === 'identify'; }).length > MAX_IDENTIFY) return 'at most ' + MAX_IDENTIFY + ' identify events';
    return null;
  }

  // The event as the committing request may send it: a copy whose context.gdpr.isConsentGiven
  // is that request's consent (the handoff's stamp is from the page that prepared it).
  function stampedWithConsent(event, consent) {
    var copy = Object.assign({}, event);
    var context = isRecord(event.context) ? Object.assign({}, event.context) : {};
    context.gdpr = { isConsentGiven: consent === true };
    copy.context = context;
    return copy;
  }

  function commitRequestReplay(requestEvents, replay, request) {
    var problem = invalidReplay(replay);
    if (problem !== null) return new Error('commitReplay needs ' + problem + '.');
    var scope = requestEvents.scopeOf(request);
    var admitted = [];
    var blocked = [];
    for (var i = 0; i < replay.events.length; i++) {
      var event = replay.events[i];
      if (!requestEvents.admits(event.type, scope)) {
        requestEvents.block(event.type, event);
        blocked.push({ reason: 'consent', method: event.type, args: [event] });
        continue;
      }
      admitted.push(stampedWithConsent(event, scope.consent));
    }
    if (admitted.length === 0) return { accepted: false, blocked: blocked };
    var commit = Object.assign({}, scope, { preflight: false });
    var pending = requestEvents.experienceCall(admitted, commit, { then: 'commit', blocked: blocked }, finishCommit);
    if (pending.experienceRequest === undefined) return pending;
    return { accepted: true, blocked: blocked, experienceRequest: pending.experienceRequest, context: pending.context };
  }

  ns.prepareRequestHandoff = prepareRequestHandoff;
  ns.commitRequestReplay = commitRequestReplay;
  // The finishers of the steps above, for requestEvents.interpret.
  ns.requestHandoffFinishers = Object.freeze({ handoff: finishHandoff, commit: finishCommit });
  ns.requestHandoffLimits = Object.freeze({ MAX_EVENTS: MAX_EVENTS, MAX_IDENTIFY: MAX_IDENTIFY });
})();
