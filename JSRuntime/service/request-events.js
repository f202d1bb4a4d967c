// service/request-events.js
// Contract: `__optimization.createRequestEvents(settings)` → the STATELESS event pipeline of the
// request-scoped service (Swift `OptimizationService.forRequest`).
// Nothing about a visitor is kept between calls: everything a call
// needs arrives in its `request` argument.
// `settings` (the service's, validated by service/service-bridge.js):
//   {clientId, environment, allowedEventTypes, channel, library?, api: {experienceBaseUrl?,
//    enabledFeatures?}, requestTimeoutMs}
// Also returned, for service/request-handoff.js: scopeOf(request), builderFor(scope),
// builderInput(method, payload, eventContext), admits(method, scope), block(method, payload),
// upsert(events, scope) → Promise<Experience outcome> (budget, overload retries, failFast), settings.
// `run(method, payload, request)` → outcome, Promise<outcome>, or an Error (validation, or an
// Insights method without a profile id: message names the method). `request`:
//   consent      true / false / undefined: the visitor's event consent (gate and
//                context.gdpr.isConsentGiven)
//   profile      the visitor's profile object (at least {id}) or undefined (first visit)
//   locale       locale for `context.locale` and the Experience `?locale=` (normalised: `de_DE`
//                becomes `de-DE`; an invalid one is ignored)
//   eventContext object merged UNDER every payload (the call's own keys win): page, userAgent,
//                campaign, location, locale, app, screen
//   ip           sent as `X-Force-IP` (IP enrichment for the visitor, not the server)
//   preflight    true ⇒ the Experience API evaluates without storing
//   timeoutMs    budget of the Experience call on the host clock (default settings.requestTimeoutMs)
//   now          ms since the epoch on the host clock when the call was made: the events'
//                timestamps (default host.now())
//   failFast     true ⇒ no Experience request at all (the host's circuit breaker is open): the
//                outcome is {ok: false, kind: "circuitOpen"} at once
// Pipeline: validate (core/payload-rules.js) → gate (core/consent.js hasEventConsent with the
// request's consent and the service allow-list, default ["identify", "page"]) → build
// (core/event-builder.js) → path. Outcomes (plain JSON):
//   blocked       {accepted: false, blocked: {reason: "consent", method, args: [payload]}}; a
//                 data-free warn line is logged, the payload only at debug.
//   Experience    identify/page/screen/track: {accepted: true, events: [event], experience: X}
//                 where X is the Experience API outcome (core/experience-api.js): {ok: true,
//                 status, data: {profile, selectedOptimizations, changes}} or {ok: false, kind:
//                 "retry"|"drop"|"disable"|"invalid"|"timeout"|"circuitOpen", status, reason,
//                 retryAfterMs?}.
//                 "timeout" = the request's budget ran out (the fetch is aborted, which cancels
//                 its HTTP request in the host). `code` = the API's error code (v2 envelopes).
//                 A 429 ERR_PROFILE_OVERLOAD is tried again after the flush policy's backoff
//                 (at least its Retry-After) while the budget allows; then it is the outcome.
//   Insights      trackView (non-sticky), trackClick, trackHover, trackFlagView:
//                 {accepted: true, events: [event], insights: [{profile, event}]}: the host puts
//                 them into its process-wide queue. Require a profile id.
//   sticky view   trackView with sticky === true: the view goes to the Experience API first (X as
//                 above), then a second view event (own messageId) to Insights, with the profile
//                 the Experience API returned (or the request's): {accepted, events, experience,
//                 insights}.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('service/request-events.js', {
    provides: ['createRequestEvents', 'experienceRequestMethods', 'requestEventMethods'],
    uses: ['consent', 'createEventBuilder', 'createExperienceApi', 'host', 'locale', 'payloadRules', 'queueFlushPolicy'],
  });
  var host = ns.host;
  var rules = ns.payloadRules;

  // The event catalog (core/payload-rules.js EVENT_METHODS): each call's rules, builder and path.
  var CATALOG = rules.EVENT_METHODS;

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

  function isProfileOverload(outcome) {
    return outcome.ok === false && outcome.status === 429 && outcome.code === 'ERR_PROFILE_OVERLOAD';
  }

  function createRequestEvents(settings) {
    var overloadPolicy = ns.queueFlushPolicy.resolveQueueFlushPolicy(settings.queuePolicy && settings.queuePolicy.flush);
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

    // One profile upsert for `events`, raced against the request's budget on the host clock.
    function upsert(events, request) {
      if (request.failFast === true) {
        return Promise.resolve({ ok: false, kind: 'circuitOpen', status: 0, reason: 'Experience API circuit is open; the call failed fast without a request' });
      }
      var api = ns.createExperienceApi({
        clientId: settings.clientId,
        environment: settings.environment,
        apiVersion: settings.apiVersion,
        baseUrl: settings.api.experienceBaseUrl,
        enabledFeatures: settings.api.enabledFeatures,
        preflight: request.preflight === true,
        getLocale: function () {
          return request.locale;
        },
      });
      var budget = typeof request.timeoutMs === 'number' && request.timeoutMs > 0 ? Math.floor(request.timeoutMs) : settings.requestTimeoutMs;
      var controller = new AbortController();
      var headers = typeof request.ip === 'string' && request.ip.length > 0 ? { 'X-Force-IP': request.ip } : undefined;
      var deadline = host.now() + budget;
      return new Promise(function (resolve) {
        var done = false;
        var retryTimer = null;
        var timer = host.setTimeout(function () {
          if (done) return;
          done = true;
          if (retryTimer !== null) host.clearTimeout(retryTimer);
          controller.abort();
          resolve({ ok: false, kind: 'timeout', status: 0, reason: 'Experience API did not answer within the request budget of ' + budget + ' ms' });
        }, budget);
        function finish(outcome) {
          done = true;
          host.clearTimeout(timer);
          resolve(outcome);
        }
        // The API answers 429 ERR_PROFILE_OVERLOAD while other calls work on the profile: back
        // off (the flush policy's schedule) and try again while the budget allows.
        function attempt(failures) {
          api.upsertProfile({ profileId: profileIdOf(request.profile), events: events, signal: controller.signal, headers: headers }).then(function (outcome) {
            if (done) return;
            if (!isProfileOverload(outcome)) return finish(outcome);
            var delay = Math.max(ns.queueFlushPolicy.computeRetryDelay(overloadPolicy, failures + 1), outcome.retryAfterMs || 0);
            if (host.now() + delay >= deadline) return finish(outcome);
            retryTimer = host.setTimeout(function () {
              retryTimer = null;
              if (!done) attempt(failures + 1);
            }, delay);
          });
        }
        attempt(0);
      });
    }

    function run(method, payload, request) {
      var entry = Object.prototype.hasOwnProperty.call(CATALOG, method) ? CATALOG[method] : undefined;
      if (entry === undefined) return new Error('Unknown request method "' + method + '".');
      var invalid = rules.checkApiVersion(method, settings.apiVersion) || rules.validate(method, payload, entry.rules);
      if (invalid !== null) return invalid;
      var scope = isRecord(request) ? Object.assign({}, request) : {};
      scope.locale = ns.locale.normalizeLocale(scope.locale);
      var sticky = method === 'trackView' && payload.sticky === true;
      var toExperience = entry.path === 'experience';
      if (!sticky && !toExperience && profileIdOf(scope.profile) === undefined) {
        return new Error(method + ' requires a request-bound profile id: pass the visitor\'s profile id to forRequest, or call identify/page/screen/track first.');
      }
      if (!ns.consent.hasEventConsent(method, scope.consent, settings.allowedEventTypes)) return block(method, payload);
      var builder = builderFor(scope);
      var input = builderInput(method, payload, scope.eventContext);
      var event;
      try {
        if (toExperience) {
          event = builder[entry.build](input);
          return upsert([event], scope).then(function (outcome) {
            return { accepted: true, events: [event], experience: outcome };
          });
        }
        if (method !== 'trackView') {
          event = builder[entry.build](input);
          return { accepted: true, events: [event], insights: [{ profile: scope.profile, event: event }] };
        }
        delete input.sticky;
        delete input.stickyTrackingKey;
        var view = builder.buildView(input);
        if (!sticky) return { accepted: true, events: [view], insights: [{ profile: scope.profile, event: view }] };
        var stickyView = view;
        view = builder.buildView(input);
        return upsert([stickyView], scope).then(function (outcome) {
          var profile = outcome.ok && isRecord(outcome.data) && profileIdOf(outcome.data.profile) !== undefined
            ? outcome.data.profile : scope.profile;
          var result = { accepted: true, events: [stickyView, view], experience: outcome };
          if (profileIdOf(profile) !== undefined) result.insights = [{ profile: profile, event: view }];
          return result;
        });
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    }

    // What service/request-handoff.js builds on: the request's scope, its builder, the gate and
    // block report, and the budgeted upsert.
    function scopeOf(request) {
      var scope = isRecord(request) ? Object.assign({}, request) : {};
      scope.locale = ns.locale.normalizeLocale(scope.locale);
      return scope;
    }

    return {
      run: run,
      scopeOf: scopeOf,
      builderFor: builderFor,
      builderInput: builderInput,
      admits: function (method, scope) {
        return ns.consent.hasEventConsent(method, scope.consent, settings.allowedEventTypes);
      },
      block: block,
      upsert: upsert,
      settings: settings,
    };
  }

  ns.createRequestEvents = createRequestEvents;
  // The methods `__service.call` accepts (the Swift side's EventMethod).
  ns.requestEventMethods = Object.keys(CATALOG);
  // The methods whose event goes to the Experience API (a sticky trackView's first event too).
  ns.experienceRequestMethods = Object.keys(CATALOG).filter(function (method) {
    return CATALOG[method].path === 'experience';
  });
})();
