// core/event-emitter.js
// Contract: `__optimization.createEventEmitter(options)` → the event methods of the stateful core
// (gate → build → publish → path). Options:
//   consent           a consent controller (core/consent.js): hasConsent(method)
//   builder           an event builder (core/event-builder.js)
//   contexts          optional context registry (core/context-registry.js): lookup(id)
//   experienceQueue   {send(event) → result | Promise<result>} (bridge/experience-link.js)
//   insightsQueue     {send(event)} (bridge/insights-link.js: the host's Insights queue; a
//                     throwing send refuses the event)
//   onEmitted(object) called with every accepted event as published on the event stream
//   onBlocked(blocked) called with {reason: "consent", method, args: [payload]} for every blocked
//                     call; a throwing callback is warn-logged and swallowed (also onEmitted)
// Pipeline of every method: gate (hasConsent) → build → hand to a path → publish (onEmitted).
// Gate, build, hand-over and publish run SYNCHRONOUSLY inside the call, so a host sees the
// emitted or blocked event before the call returns. Methods never throw: they return the result
// object when the path answered synchronously, else a promise of it; invalid input (a builder
// TypeError) or a path that refuses the event (its durable store failed) gives a rejected
// promise, and the refused event is not published.
// One method per entry of the event catalog (core/payload-rules.js EVENT_METHODS), by its path:
//   identify(args) / page(args) / screen(args) / track(args) → {accepted}   Experience path
//   trackView(args) → {accepted}   gate "trackView"; if args.sticky === true a view event goes
//                     through the Experience path first (its result becomes the result; if it
//                     rejects, Insights is not called); then a SECOND view event (own messageId)
//                     goes through the Insights path. {accepted: true} for non-sticky views.
//   trackClick(args) / trackHover(args) / trackFlagView(args) → {accepted}   Insights path
//   block(method, payload) → {accepted: false}   reports a blocked call (used by the bridge for
//                     trackCurrentScreen, which gates itself).
// trackView/trackClick/trackHover with a live `optimizationContextId` publish the event plus
// `optimization = {contextId, ...context}` on the stream; the queued payload never has it, and
// an unknown or expired id adds nothing (B8). Blocked calls log a data-free line at "warn" and
// the payload only at "debug" (visitor data never goes above debug).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/event-emitter.js', {
    provides: ['createEventEmitter', 'emissionResult'],
    uses: ['consent', 'host', 'payloadRules'],
  });

  // EmissionResult: {accepted} plus `data` (the Experience answer) and `refused` ({status,
  // reason, code?}: the API refused the event) when present; other keys are dropped.
  function normalize(result) {
    var out = { accepted: !!(result && result.accepted === true) };
    if (result && result.data !== undefined) out.data = result.data;
    if (result && result.refused !== undefined) out.refused = result.refused;
    return out;
  }
  var host = ns.host;

  function isThenable(value) {
    return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function createEventEmitter(options) {
    var consent = options.consent;
    var builder = options.builder;
    var contexts = options.contexts || null;
    var experienceQueue = options.experienceQueue;
    var insightsQueue = options.insightsQueue;
    var onEmitted = typeof options.onEmitted === 'function' ? options.onEmitted : function () {};
    var onBlocked = typeof options.onBlocked === 'function' ? options.onBlocked : function () {};

    function callSafely(name, fn, value) {
      try {
        fn(value);
      } catch (error) {
        host.log('warn', name + ' callback failed: ' + messageOf(error));
      }
    }

    function block(method, payload) {
      ns.consent.logBlocked(method, payload);
      callSafely('onEventBlocked', onBlocked, { reason: 'consent', method: method, args: [payload] });
      return { accepted: false };
    }

    function optimizationFor(args) {
      if (contexts === null || args === null || typeof args !== 'object') return undefined;
      var id = args.optimizationContextId;
      if (typeof id !== 'string' || id.length === 0) return undefined;
      var context = contexts.lookup(id);
      if (context === undefined) return undefined;
      return Object.assign({ contextId: id }, context);
    }

    function publish(event, optimization) {
      var published = optimization === undefined ? event : Object.assign({}, event, { optimization: optimization });
      callSafely('onEventEmitted', onEmitted, published);
    }

    // The path takes the event first: an event the path refuses (a durable store that failed)
    // is never published.
    function sendExperience(event, optimization) {
      var result = experienceQueue.send(event);
      publish(event, optimization);
      return result;
    }

    function sendInsights(event, optimization) {
      insightsQueue.send(event);
      publish(event, optimization);
      return { accepted: true };
    }

    // Runs fn() and turns a synchronous throw into a rejected promise.
    function guarded(fn) {
      try {
        return fn();
      } catch (error) {
        return Promise.reject(error);
      }
    }

    function experienceMethod(method, build) {
      return function (args) {
        return guarded(function () {
          if (!consent.hasConsent(method)) return block(method, args);
          var result = sendExperience(build(args), undefined);
          return isThenable(result) ? result.then(normalize) : normalize(result);
        });
      };
    }

    function insightsMethod(method, build, enrich) {
      return function (args) {
        return guarded(function () {
          var optimization = enrich ? optimizationFor(args) : undefined;
          if (!consent.hasConsent(method)) return block(method, args);
          return sendInsights(build(args), optimization);
        });
      };
    }

    function trackView(args) {
      return guarded(function () {
        var optimization = optimizationFor(args);
        if (!consent.hasConsent('trackView')) return block('trackView', args);
        var sticky = args !== null && typeof args === 'object' && args.sticky === true;
        if (!sticky) return sendInsights(builder.buildView(args), optimization);
        var stickyEvent = builder.buildView(args);
        var insightsEvent = builder.buildView(args);
        var experienceResult = sendExperience(stickyEvent, optimization);
        function thenInsights(result) {
          // The same check is repeated before each path.
          if (!consent.hasConsent('trackView')) return normalize(result);
          sendInsights(insightsEvent, optimization);
          return normalize(result);
        }
        return isThenable(experienceResult) ? experienceResult.then(thenInsights) : thenInsights(experienceResult);
      });
    }

    var emitter = {
      block: block,
      hasConsent: function (method) {
        return consent.hasConsent(method);
      },
    };
    // One method per entry of the event catalog (core/payload-rules.js EVENT_METHODS); a view
    // has its own (a sticky view takes both paths).
    var catalog = ns.payloadRules.EVENT_METHODS;
    Object.keys(catalog).forEach(function (method) {
      var entry = catalog[method];
      var build = builder[entry.build];
      if (method === 'trackView') emitter.trackView = trackView;
      else if (entry.path === 'experience') emitter[method] = experienceMethod(method, build);
      else emitter[method] = insightsMethod(method, build, entry.enrich === true);
    });
    return emitter;
  }

  ns.createEventEmitter = createEventEmitter;
  ns.emissionResult = normalize;
})();
