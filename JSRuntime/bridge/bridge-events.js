// bridge/bridge-events.js
// Contract: `__optimization.bridgeEvents` — consent and the event methods of the stateful bridge
// (topics "Events" and "Consent" of `__bridge` in JSRuntime/bridge-contract.json):
//   installEvents(instance)   builds the consent controller, event builder, delivery
//                             (bridge-delivery.js), emitter and de-dupe trackers of a new instance
//   methods                   {<method>: async (payload, requestId, now?)} for every event call of
//                             the catalog (core/payload-rules.js EVENT_METHODS); bridge.js puts
//                             each on `__bridge`
//   trackCurrentScreen, consent, hasConsent, setOnline   the other functions of those topics
// Every async method is validated (core/payload-rules.js) and settles with EmissionResult JSON
// {"accepted": bool, "data"?, "refused"?, "duplicate"?}; `now` (ms since the epoch, a finite
// number) is the host's time of the call: the events the call builds before it returns carry it,
// without asking the host clock.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-events.js', {
    provides: ['bridgeEvents'],
    uses: [
      'bridgeDelivery', 'bridgeShared', 'consent', 'createCurrentStateTracker', 'createEventBuilder',
      'createEventEmitter', 'emissionResult', 'guards', 'host', 'payloadRules',
      'settleReturning', 'stickyViews',
    ],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var messageOf = shared.messageOf;
  var callHost = shared.callHost;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;
  var rules = ns.payloadRules;

  // Builds the consent controller, event builder, queues, emitter and de-dupe trackers of `target`
  // (a fresh instance) and wires them to the host push-backs.
  function installEvents(target) {
    var state = target.state;
    var settings = target.config;
    ns.bridgeDelivery.installDelivery(target);
    target.consent = ns.consent.createConsentController({
      state: state,
      onPurge: function () {
        target.experienceQueue.purge();
        target.insightsQueue.purge();
        // The host's durable outbox (Sources/OptimizationDelivery/OptimizationDelivery.docc/TheDurableOutbox.md) is
        // purged inside the same call.
        if (typeof globalThis.__nativeOutboxPurge === 'function') globalThis.__nativeOutboxPurge();
      },
    });
    target.builder = ns.createEventBuilder({
      channel: settings.channel,
      library: settings.library,
      getLocale: function () {
        return state.get().locale;
      },
      getConsent: function () {
        return state.get().consent;
      },
      getNow: function () {
        return callTime !== undefined ? callTime : host.now();
      },
    });
    target.events = ns.createEventEmitter({
      consent: target.consent,
      builder: target.builder,
      contexts: target.contexts,
      experienceQueue: target.experienceQueue,
      insightsQueue: target.insightsQueue,
      onEmitted: publishEvent,
      onBlocked: function (blocked) {
        callHost('__nativeOnEventBlocked', [JSON.stringify(blocked)]);
      },
    });
    target.screenTracker = ns.createCurrentStateTracker();
    target.stickyKeys = ns.stickyViews.createStickyViewKeys();
  }

  // Events emitted inside an async method are collected here and travel back with its outcome
  // (settleReturning); null outside an async method.
  var collecting = null;
  // The time the host passed with the running async method (ms since the epoch): the events it
  // builds synchronously carry it, without a clock crossing; undefined otherwise (host.now()).
  var callTime;

  function publishEvent(event) {
    if (collecting !== null) {
      collecting.push(event);
      return;
    }
    sendEvent(event);
  }

  // The stream object may carry an optimization context whose entries cannot be serialized (a
  // cyclic object graph): then the event is published without it.
  function sendEvent(event) {
    var text;
    try {
      text = JSON.stringify(event);
    } catch (error) {
      host.log('warn', 'An emitted event\'s optimization context cannot be serialized; publishing the event without it.');
      var plain = Object.assign({}, event);
      delete plain.optimization;
      text = JSON.stringify(plain);
    }
    callHost('__nativeOnEventEmitted', [text]);
  }

  // EmissionResult JSON (core/event-emitter.js), or {accepted: false, duplicate: true} for a
  // repeated trackCurrentScreen (not a consent block).
  function emission(result) {
    if (result && result.accepted !== true && result.attempted === false) return { accepted: false, duplicate: true };
    return ns.emissionResult(result);
  }

  function thenEmission(outcome, after) {
    if (outcome !== null && typeof outcome === 'object' && typeof outcome.then === 'function') {
      return outcome.then(function (value) {
        if (after) after(value);
        return emission(value);
      });
    }
    if (after) after(outcome);
    return emission(outcome);
  }

  function sendEvents(events) {
    for (var i = 0; i < events.length; i++) sendEvent(events[i]);
  }

  // An async bridge method: (payload, requestId, now?), settled exactly once through
  // settleReturning(); `now` (a finite number) is the time of the events it builds synchronously:
  // an outcome known now is returned with the events the call emitted, a later one settles
  // through __nativeSettle (its events were published before the method returned).
  function asyncMethod(method, methodRules, run) {
    return function (payload, requestId, now) {
      if (shared.current === null) return ns.settleReturning(requestId, new Error(NOT_INITIALIZED));
      var invalid = rules.checkApiVersion(method, shared.current.config.apiVersion) || rules.validate(method, payload, methodRules);
      if (invalid !== null) return ns.settleReturning(requestId, invalid);
      var outer = collecting;
      var outerTime = callTime;
      var emitted = [];
      collecting = emitted;
      callTime = typeof now === 'number' && isFinite(now) ? now : undefined;
      var outcome;
      try {
        outcome = run(shared.current, payload);
      } catch (error) {
        outcome = error instanceof Error ? error : new Error(messageOf(error));
      } finally {
        collecting = outer;
        callTime = outerTime;
      }
      return ns.settleReturning(requestId, outcome, emitted, sendEvents);
    };
  }

  function screenArgs(payload) {
    return { name: payload.name, properties: payload.properties !== undefined ? payload.properties : {} };
  }

  // De-duplicated by routeKey ?? name. The bridge gates and reports the block itself
  // once, so core.screen never reports the same call a second time.
  var trackCurrentScreen = asyncMethod('trackCurrentScreen', rules.SCREEN, function (target, payload) {
    if (!target.consent.hasConsent('screen')) return emission(target.events.block('trackCurrentScreen', payload));
    var key = payload.routeKey !== undefined ? payload.routeKey : payload.name;
    return thenEmission(target.screenTracker.track(key, function () {
      return target.events.screen(screenArgs(payload));
    }));
  });

  // One async method per entry of the event catalog (core/payload-rules.js EVENT_METHODS); the
  // payload goes to the core unchanged (the builder drops unknown keys and defaults
  // `properties` to {}), so a blocked call reports exactly what the host sent (C2). A screen's
  // input is its name and properties; a view has its own method below.
  var methods = {};
  Object.keys(rules.EVENT_METHODS).forEach(function (method) {
    methods[method] = asyncMethod(method, rules.EVENT_METHODS[method].rules, function (target, payload) {
      return thenEmission(target.events[method](method === 'screen' ? screenArgs(payload) : payload));
    });
  });

  // Sticky de-dupe: key = stickyTrackingKey ?? viewId; the view is sent sticky only
  // if payload.sticky === true and the key has not been accepted yet; the key is remembered once
  // a sticky view was accepted.
  methods.trackView = asyncMethod('trackView', rules.TRACK_VIEW, function (target, payload) {
    var sticky = ns.stickyViews;
    var key = payload.stickyTrackingKey !== undefined ? payload.stickyTrackingKey : payload.viewId;
    var sendSticky = sticky.shouldSendStickyEntryView(payload.sticky, target.stickyKeys.has(key));
    var args = Object.assign({}, payload);
    delete args.stickyTrackingKey;
    if (sendSticky) args.sticky = true;
    else delete args.sticky;
    return thenEmission(target.events.trackView(args), function (result) {
      if (sticky.shouldRememberStickyEntryView(sendSticky, !!(result && result.accepted === true))) target.stickyKeys.remember(key);
    });
  });

  function consent(input) {
    if (shared.current === null) return;
    shared.current.consent.set(input);
  }

  function hasConsent(method) {
    if (shared.current === null) return false;
    return shared.current.consent.hasConsent(method);
  }

  function setOnline(online) {
    if (typeof online !== 'boolean') throw new TypeError('setOnline expects a boolean.');
    if (shared.current === null) {
      shared.carried.online = online;
      return;
    }
    // The host's queues follow the network themselves; the state only records it.
    shared.current.state.set({ online: online });
  }

  ns.bridgeEvents = {
    installEvents: installEvents,
    methods: methods,
    trackCurrentScreen: trackCurrentScreen,
    consent: consent,
    hasConsent: hasConsent,
    setOnline: setOnline,
  };
})();
