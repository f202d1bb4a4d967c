// bridge/insights-link.js
// Contract: `__optimization.createInsightsLink(options)` → the client's Insights path: the
// event emitter's `insightsQueue` ({send(event)}), backed by the Swift host, which queues,
// batches and sends (Swift `InsightsQueue`: per-profile batches, flush rules, backoff, circuit,
// Retry-After, 401/403/404 disabling, the durable outbox). JavaScript builds and gates the
// event; it never queues it. Options: getProfile() → the visitor's current profile object or
// undefined.
//   send(event)        `__nativeInsightsAccept(eventJSON)` → the host's queue size. The host puts
//                      the event into the batch of the profile it was last told of, or holds it
//                      until a profile exists. Throws when the host could not take it (its
//                      durable store failed): the calling event method rejects and publishes
//                      nothing.
//   profileChanged()   tells the host the current profile (`__nativeInsightsProfile(profileJSON |
//                      null)`) when it changed since it was last told; held events join it. The
//                      same object as last time is not serialized again (the state store
//                      replaces the profile on change, never mutates it).
//   purge()            `__nativeInsightsPurge()`: discards every queued and held event (consent
//                      withdrawn).
// The host must register the three natives before `__bridge.initialize`.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/insights-link.js', {
    provides: ['createInsightsLink'],
    uses: ['guards'],
  });
  var guards = ns.guards;

  function createInsightsLink(options) {
    var getProfile = typeof options.getProfile === 'function' ? options.getProfile : function () { return undefined; };
    var toldProfile; // the profile object last told to the host (state replaces it on change)
    var told; // its JSON text (undefined: never told)

    function profileChanged() {
      var profile = getProfile();
      if (told !== undefined && profile === toldProfile) return;
      var text = guards.isRecord(profile) ? JSON.stringify(profile) : null;
      toldProfile = profile;
      if (text === told) return;
      told = text;
      globalThis.__nativeInsightsProfile(text);
    }

    function send(event) {
      profileChanged();
      return globalThis.__nativeInsightsAccept(JSON.stringify(event));
    }

    function purge() {
      globalThis.__nativeInsightsPurge();
    }

    return { send: send, profileChanged: profileChanged, purge: purge };
  }

  ns.createInsightsLink = createInsightsLink;
})();
