// core/insights-queue.js
// Contract: `__optimization.createInsightsQueue(options)` → the Insights path (spec §6.3,
// DECISIONS 11). Options: getProfile() → the current profile object or undefined; maxEvents
// (total cap over buckets and held events, a positive number, floored; invalid ⇒ 1000; beyond
// it the oldest held events go first, then the oldest bucket's oldest events).
// Events are kept per profile id (`profile.id`, which may be ""), each bucket remembering the
// last profile object seen for that id. An event sent while no profile exists is HELD (not
// dropped) and moves into the bucket of the first profile that exists at a later send or
// `adoptHeld()`.
// Interface (the emitter uses only `send`; the delivery layer adds the flush timer, batching and
// retry without changing this interface):
//   send(event) → undefined   hands a built, already-published event to the path (enqueue).
//   enqueue(event)            as above.
//   adoptHeld() → number      moves held events into the current profile's bucket (if a profile
//                             exists); returns how many moved.
//   purge()                   discards every bucket and every held event (consent withdrawn).
//   size() → number           queued + held events.
//   heldCount() → number      events waiting for a profile.
//   drain() → [{profile, events}]   removes and returns every bucket (map insertion order);
//                             held events stay held.
//   peek() → [{profile, events}]    copies, nothing removed.
(function () {
  'use strict';
  var ns = globalThis.__optimization || (globalThis.__optimization = {});

  var DEFAULT_MAX_EVENTS = 1000;

  function normalizeMax(value) {
    return typeof value === 'number' && isFinite(value) && value >= 1 ? Math.floor(value) : DEFAULT_MAX_EVENTS;
  }

  function isProfile(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  }

  function createInsightsQueue(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var getProfile = typeof settings.getProfile === 'function' ? settings.getProfile : function () { return undefined; };
    var maxEvents = normalizeMax(settings.maxEvents);
    var buckets = new Map(); // profile id → {profile, events}
    var held = [];
    var total = 0;

    function currentProfile() {
      var profile = getProfile();
      return isProfile(profile) ? profile : undefined;
    }

    function bucketFor(profile) {
      var id = String(profile.id === undefined || profile.id === null ? '' : profile.id);
      var bucket = buckets.get(id);
      if (bucket === undefined) {
        bucket = { profile: profile, events: [] };
        buckets.set(id, bucket);
      } else {
        bucket.profile = profile;
      }
      return bucket;
    }

    function dropOldest() {
      if (held.length > 0) {
        held.shift();
        total--;
        return;
      }
      var iterator = buckets.entries().next();
      if (iterator.done) return;
      var bucket = iterator.value[1];
      bucket.events.shift();
      total--;
      if (bucket.events.length === 0) buckets.delete(iterator.value[0]);
    }

    function adoptHeld() {
      if (held.length === 0) return 0;
      var profile = currentProfile();
      if (profile === undefined) return 0;
      var bucket = bucketFor(profile);
      var moved = held.length;
      bucket.events.push.apply(bucket.events, held);
      held = [];
      return moved;
    }

    function enqueue(event) {
      while (total >= maxEvents) dropOldest();
      var profile = currentProfile();
      if (profile === undefined) {
        held.push(event);
      } else {
        adoptHeld();
        bucketFor(profile).events.push(event);
      }
      total++;
    }

    function copyBuckets() {
      var result = [];
      buckets.forEach(function (bucket) {
        result.push({ profile: bucket.profile, events: bucket.events.slice() });
      });
      return result;
    }

    return {
      send: function (event) {
        enqueue(event);
      },
      enqueue: enqueue,
      adoptHeld: adoptHeld,
      purge: function () {
        buckets = new Map();
        held = [];
        total = 0;
      },
      size: function () {
        return total;
      },
      heldCount: function () {
        return held.length;
      },
      drain: function () {
        var result = copyBuckets();
        buckets = new Map();
        total = held.length;
        return result;
      },
      peek: copyBuckets,
      maxEvents: maxEvents,
    };
  }

  ns.createInsightsQueue = createInsightsQueue;
})();
