// service/request-events.js
// Contract: `__optimization.createRequestEvents(settings)` → the STATELESS event pipeline of the
// request-scoped service (Swift `OptimizationService.forRequest`).
// Nothing about a visitor is kept between calls: everything a call
// needs arrives in its `request` argument, and what its Experience answer needs comes back in
// the `context` the call returned. This engine sends nothing: an event call that needs the
// Experience API returns the request to send, and the host (Swift) sends it (budget, overload
// retries, circuit) and hands the answer to interpret().
// `settings` (the service's, validated by service/service-bridge.js):
//   {clientId, environment, apiVersion?, allowedEventTypes, channel, library?, api:
//    {experienceBaseUrl?, enabledFeatures?}, requestTimeoutMs, statusKinds}
// Also returned, for service/request-handoff.js: scopeOf(request), builderFor(scope),
// builderInput(method, payload, eventContext), admits(method, scope), block(method, payload),
// experienceCall(events, scope, context, finish) → the call's answer while its Experience request
// is pending ({experienceRequest, context}) or, with `failFast`, finish(context, circuitOpen
// outcome) at once; settings.
// `run(method, payload, request)` → outcome or an Error (validation, or an Insights method
// without a profile id: code ERROR_CODES.profileIdRequired, message names the method); never a
// promise. `request`:
//   consent      true / false / undefined: the visitor's event consent (gate and
//                context.gdpr.isConsentGiven)
//   profile      the visitor's profile object (at least {id}) or undefined (first visit)
//   locale       locale for `context.locale` and the Experience `?locale=` (normalised: `de_DE`
//                becomes `de-DE`; an invalid one is ignored)
//   eventContext object merged UNDER every payload (the call's own keys win): page, userAgent,
//                campaign, location, locale, app, screen
//   ip           sent as `X-Force-IP` (IP enrichment for the visitor, not the server)
//   preflight    true ⇒ the Experience API evaluates without storing
//   timeoutMs    the budget the host gives the Experience call (default settings.requestTimeoutMs):
//                named in a timeout outcome's reason
//   now          ms since the epoch on the host clock when the call was made: the events'
//                timestamps (default host.now())
//   failFast     true ⇒ no Experience request at all (the host's circuit breaker is open): the
//                call finishes at once with the outcome {ok: false, kind: "circuitOpen"}
// Pipeline: validate (core/payload-rules.js) → gate (core/consent.js hasEventConsent with the
// request's consent and the service allow-list, default ["identify", "page"]) → build
// (core/event-builder.js) → path. Outcomes (plain JSON):
//   blocked       {accepted: false, blocked: {reason: "consent", method, args: [payload]}}; a
//                 data-free warn line is logged, the payload only at debug.
//   Experience    identify/page/screen/track: {accepted: true, events: [event],
//                 experienceRequest: {url, method: "POST", headers, body: JSON text}, context}:
//                 the profile upsert to send (core/experience-api.js profileUpsertRequest).
//                 interpret(context, …) then answers {accepted: true, events: [event],
//                 experience: X} where X is the Experience API outcome (core/experience-api.js):
//                 {ok: true, status, data: {profile, selectedOptimizations, changes}} or {ok:
//                 false, kind: "retry"|"drop"|"disable"|"invalid"|"timeout"|"circuitOpen",
//                 status, reason, code?} ("timeout" = the host's budget ran out;
//                 `code` = the API's error code of a v2 envelope, e.g. ERR_PROFILE_OVERLOAD,
//                 which the host retries within the budget before it hands over the last answer).
//   Insights      trackView (non-sticky), trackClick, trackHover, trackFlagView:
//                 {accepted: true, events: [event], insights: [{event: 0}]}: the host puts
//                 them into its process-wide queue. An Insights item names its event by its
//                 index in `events` (the event is written once) and carries `profile` only when
//                 it is not the request's own. Require a profile id.
//   sticky view   trackView with sticky === true: the view goes to the Experience API first (a
//                 request as above), then interpret() answers {accepted, events: [sticky view,
//                 view], experience: X, insights: [{event: 1, profile?}]}: a second view event
//                 (own messageId) for Insights, with the profile the Experience API returned
//                 (`profile`), or the request's (no `profile`); no `insights` without a profile
//                 id.
// `runEach(method, payloads, request)` → several calls of one Insights method (trackView,
// trackClick, …; not sticky) for one request at once: {answers, events}, an answer per payload
// in order ({accepted: true, insights: [{event: k}]} naming its event in the shared `events`,
// {accepted: false, blocked}, or {failed: {message, code?}} where run() returns an Error; a
// payload that goes to the Experience API fails: the host calls it alone), or an Error for an
// unknown or Experience method or payloads that are not an array.
// `interpret(context, status, headers, bodyText, failure, finishers?)` → the call's final outcome
// (or an Error for a context that names no finisher): `context` as the call returned it; `status`
// the HTTP status and `headers` an object of the answer's headers (names in any case), or, with
// `failure` "timeout" (the budget ran out) or "transport" (no answer; `bodyText` is the
// transport's error message), status 0. Runs the finisher `context.then` names in `finishers`
// (default `finishers`, this pipeline's own: "call", "stickyView"; service/request-handoff.js
// adds its steps, service/service-bridge.js joins them).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/request-events.js', {
    provides: ['createRequestEvents', 'experiencePayloadRoutes', 'experienceRequestMethods', 'requestEventMethods'],
    uses: ['ERROR_CODES', 'codedError', 'consent', 'createEventBuilder', 'createExperienceApi', 'locale', 'messageOf', 'payloadRules'],
  });
  var rules = ns.payloadRules;

  // The event catalog (core/payload-rules.js EVENT_METHODS): each call's rules, builder and path.
  var CATALOG = rules.EVENT_METHODS;

  // The Insights part of an answer whose one event goes to Insights with the request's profile.
  var REQUEST_PROFILE_INSIGHTS = Object.freeze([Object.freeze({ event: 0 })]);

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function profileIdOf(profile) {
    return isRecord(profile) && typeof profile.id === 'string' && profile.id.length > 0 ? profile.id : undefined;
  }

  // The builder input: the request's event context under the call's payload.
  function builderInput(method, payload, eventContext) {
    var input = Object.assign({}, isRecord(eventContext) ? eventContext : {}, payload);
    if (method === 'screen') input.properties = payload.properties !== undefined ? payload.properties : {};
    delete input.routeKey;
    return input;
  }

  function createRequestEvents(settings) {
    function builderFor(request) {
      return ns.createEventBuilder({
        channel: settings.channel,
        library: settings.library,
        getLocale: function () {
          return request.locale;
        },
        getConsent: function () {
          return request.consent;
        },
        getNow: typeof request.now === 'number' && isFinite(request.now) ? function () {
          return request.now;
        } : undefined,
      });
    }

    function block(method, payload) {
      ns.consent.logBlocked(method, payload);
      return { accepted: false, blocked: { reason: 'consent', method: method, args: [payload] } };
    }

    // The Experience API client of one request (its locale and preflight).
    function apiFor(scope) {
      return ns.createExperienceApi({
        clientId: settings.clientId,
        environment: settings.environment,
        apiVersion: settings.apiVersion,
        baseUrl: settings.api.experienceBaseUrl,
        enabledFeatures: settings.api.enabledFeatures,
        statusKinds: settings.statusKinds,
        preflight: scope.preflight === true,
        getLocale: function () {
          return scope.locale;
        },
      });
    }

    function budgetOf(scope) {
      return typeof scope.timeoutMs === 'number' && scope.timeoutMs > 0 ? Math.floor(scope.timeoutMs) : settings.requestTimeoutMs;
    }

    // One profile upsert for `events`, for the host to send: the answer while it is pending
    // ({experienceRequest, context}), or with failFast the call finished at once.
    // `context.then` names the finisher interpret() runs on the answer.
    function experienceCall(events, scope, context, finish) {
      context.budgetMs = budgetOf(scope);
      if (scope.failFast === true) {
        return finish(context, { ok: false, kind: 'circuitOpen', status: 0, reason: 'Experience API circuit is open; the call failed fast without a request' });
      }
      var headers = typeof scope.ip === 'string' && scope.ip.length > 0 ? { 'X-Force-IP': scope.ip } : undefined;
      var experienceRequest = apiFor(scope).profileUpsertRequest({ profileId: profileIdOf(scope.profile), events: events, headers: headers });
      return { experienceRequest: experienceRequest, context: context };
    }

    // The Experience outcome of the host's answer (or of its failure) to experienceCall's request.
    function outcomeOf(context, status, headers, bodyText, failure) {
      if (failure === 'timeout') {
        return { ok: false, kind: 'timeout', status: 0, reason: 'Experience API did not answer within the request budget of ' + context.budgetMs + ' ms' };
      }
      var api = apiFor({});
      if (failure !== undefined && failure !== null) return api.failureOutcome(bodyText);
      return api.profileAnswerOutcome(status, isRecord(headers) ? headers : {}, typeof bodyText === 'string' ? bodyText : '');
    }

    function finishCall(context, outcome) {
      return { accepted: true, events: context.events, experience: outcome };
    }

    function finishStickyView(context, outcome) {
      var answered = outcome.ok && isRecord(outcome.data) && profileIdOf(outcome.data.profile) !== undefined;
      var result = { accepted: true, events: context.events, experience: outcome };
      if (answered) result.insights = [{ event: 1, profile: outcome.data.profile }];
      else if (profileIdOf(context.profile) !== undefined) result.insights = [{ event: 1 }];
      return result;
    }

    var FINISHERS = Object.freeze({ call: finishCall, stickyView: finishStickyView });

    function interpret(context, status, headers, bodyText, failure, finishers) {
      var table = finishers || FINISHERS;
      if (!isRecord(context) || typeof context.then !== 'string' || !Object.prototype.hasOwnProperty.call(table, context.then)) {
        return new Error('interpretExperience needs the context its call returned.');
      }
      return table[context.then](context, outcomeOf(context, status, headers, bodyText, failure));
    }

    function run(method, payload, request) {
      var entry = Object.prototype.hasOwnProperty.call(CATALOG, method) ? CATALOG[method] : undefined;
      if (entry === undefined) return new Error('Unknown request method "' + method + '".');
      var invalid = rules.checkApiVersion(method, settings.apiVersion) || rules.validate(method, payload, entry.rules);
      if (invalid !== null) return invalid;
      var scope = isRecord(request) ? Object.assign({}, request) : {};
      scope.locale = ns.locale.normalizeLocale(scope.locale);
      var sticky = routesToExperienceByPayload(method, payload);
      var toExperience = entry.path === 'experience';
      if (!sticky && !toExperience) {
        var insights = insightsEvent(method, payload, entry, scope, builderFor);
        return insights.event === undefined ? insights : { accepted: true, events: [insights.event], insights: REQUEST_PROFILE_INSIGHTS };
      }
      if (!ns.consent.hasEventConsent(method, scope.consent, settings.allowedEventTypes)) return block(method, payload);
      var builder = builderFor(scope);
      var input = builderInput(method, payload, scope.eventContext);
      var event;
      try {
        if (toExperience) {
          event = builder[entry.build](input);
          return withEvents([event], experienceCall([event], scope, { then: 'call', events: [event] }, finishCall));
        }
        delete input.sticky;
        delete input.stickyTrackingKey;
        var stickyView = builder.buildView(input);
        var view = builder.buildView(input);
        var context = { then: 'stickyView', events: [stickyView, view] };
        if (scope.profile !== undefined) context.profile = scope.profile;
        return withEvents([stickyView, view], experienceCall([stickyView], scope, context, finishStickyView));
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    }

    // The one event of a validated call that goes to Insights (not sticky) with the request's
    // profile: {event}, or the call's answer without one (blocked, an Error). `builderOf(scope)`
    // gives the scope's builder (made once per scope by runEach).
    function insightsEvent(method, payload, entry, scope, builderOf) {
      if (profileIdOf(scope.profile) === undefined) {
        return ns.codedError(ns.ERROR_CODES.profileIdRequired,
          method + ' requires a request-bound profile id: pass the visitor\'s profile id to forRequest, or call identify/page/screen/track first.');
      }
      if (!ns.consent.hasEventConsent(method, scope.consent, settings.allowedEventTypes)) return block(method, payload);
      var input = builderInput(method, payload, scope.eventContext);
      try {
        if (method === 'trackView') {
          delete input.sticky;
          delete input.stickyTrackingKey;
        }
        return { event: builderOf(scope)[entry.build](input) };
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    }

    // Several calls of one Insights method for one request, in one crossing: the scope and its
    // builder are made once, each event is written once (in `events`), and each call gets its
    // own answer, in order, as run() would give it: {accepted: true, insights: [{event: k}]}
    // (k: the event's index in `events`), {accepted: false, blocked}, or {failed: {message,
    // code?}} for what run() returns as an Error. A call that goes to the Experience API (an
    // Experience method, a sticky view) is refused, as a failed answer for a payload: the host
    // calls it alone. → {answers, events}, or an Error when `payloads` is not an array or the
    // method is unknown or goes to the Experience API.
    function runEach(method, payloads, request) {
      var entry = Object.prototype.hasOwnProperty.call(CATALOG, method) ? CATALOG[method] : undefined;
      if (entry === undefined) return new Error('Unknown request method "' + method + '".');
      if (entry.path === 'experience') return new Error(method + ' goes to the Experience API: call it alone.');
      if (!Array.isArray(payloads)) return new Error(method + ': the payloads must be an array.');
      var versionError = rules.checkApiVersion(method, settings.apiVersion);
      var scope = scopeOf(request);
      var builder = null;
      function builderOf(forScope) {
        if (builder === null) builder = builderFor(forScope);
        return builder;
      }
      var answers = new Array(payloads.length);
      var events = [];
      for (var i = 0; i < payloads.length; i++) {
        var payload = payloads[i];
        var outcome = versionError || rules.validate(method, payload, entry.rules);
        if (outcome === null) {
          outcome = routesToExperienceByPayload(method, payload)
            ? new Error(method + ' with this payload goes to the Experience API: call it alone.')
            : insightsEvent(method, payload, entry, scope, builderOf);
        }
        if (outcome instanceof Error) {
          var failed = { message: ns.messageOf(outcome) };
          if (typeof outcome.code === 'string' && outcome.code.length > 0) failed.code = outcome.code;
          answers[i] = { failed: failed };
        } else if (outcome.event === undefined) {
          answers[i] = outcome;
        } else {
          answers[i] = { accepted: true, insights: [{ event: events.length }] };
          events.push(outcome.event);
        }
      }
      return { answers: answers, events: events };
    }

    // A pending Experience call's answer carries the call's events too.
    function withEvents(events, answer) {
      return answer.experienceRequest === undefined ? answer : { accepted: true, events: events, experienceRequest: answer.experienceRequest, context: answer.context };
    }

    // What service/request-handoff.js builds on: the request's scope, its builder, the gate and
    // block report, and the Experience call.
    function scopeOf(request) {
      var scope = isRecord(request) ? Object.assign({}, request) : {};
      scope.locale = ns.locale.normalizeLocale(scope.locale);
      return scope;
    }

    return {
      run: run,
      runEach: runEach,
      scopeOf: scopeOf,
      builderFor: builderFor,
      builderInput: builderInput,
      admits: function (method, scope) {
        return ns.consent.hasEventConsent(method, scope.consent, settings.allowedEventTypes);
      },
      block: block,
      experienceCall: experienceCall,
      interpret: interpret,
      finishers: FINISHERS,
      settings: settings,
    };
  }

  // The calls whose payload, not their method, sends them to the Experience API: a sticky view
  // (trackView with sticky === true). The host reads the same list (configure's answer), so the
  // rule is written once; a call it matches is given the request's whole profile, which its
  // Insights event falls back to.
  var EXPERIENCE_PAYLOAD_ROUTES = Object.freeze([Object.freeze({ method: 'trackView', field: 'sticky', equals: true })]);

  function routesToExperienceByPayload(method, payload) {
    for (var i = 0; i < EXPERIENCE_PAYLOAD_ROUTES.length; i++) {
      var route = EXPERIENCE_PAYLOAD_ROUTES[i];
      if (route.method === method && isRecord(payload) && payload[route.field] === route.equals) return true;
    }
    return false;
  }

  ns.createRequestEvents = createRequestEvents;
  ns.experiencePayloadRoutes = EXPERIENCE_PAYLOAD_ROUTES;
  // The methods `__service.call` accepts (the Swift side's EventMethod).
  ns.requestEventMethods = Object.keys(CATALOG);
  // The methods whose event goes to the Experience API (a sticky trackView's first event too).
  ns.experienceRequestMethods = Object.keys(CATALOG).filter(function (method) {
    return CATALOG[method].path === 'experience';
  });
})();
