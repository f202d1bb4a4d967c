// core/flags.js
// Contract: custom flags: reads, flag-view de-duplication, observation and catch-up.
//   __optimization.flags = {
//     unwrap(value)            the F1 rule: a non-null object with a `value` key whose typeof is
//                              "object" (object, array or null) gives `value.value`; anything else
//                              is returned as is.
//     resolve(changes)         {key: unwrapped value} folded over `changes` in array order (later
//                              duplicates win); undefined/non-array ⇒ {}. Malformed changes (not an
//                              object, no string `key`) are skipped.
//     getFlag(name, changes)   resolve(changes)[name] without building the whole map (undefined
//                              when absent).
//     firstChange(name, changes)  the FIRST change whose key is `name` (its `meta` names the flag
//                              view's experience), or undefined.
//     canonical(value)         a key-order-insensitive text form of a JSON value (undefined has
//                              its own token): equal texts ⇔ deep-equal values. }
//   __optimization.createFlagTracker({state, emitter}) → the stateful flag reads and observation:
//     getFlag(name) → value    the flag over the state's `changes`, plus a flag-view attempt:
//        payload {componentId: name, experienceId?, variantIndex?} from firstChange(name);
//        not allowed (hasConsent("trackFlagView") false) ⇒ reported as blocked through
//        emitter.block, ONCE per distinct (name, value) until consent changes or reset(),
//        nothing else; no profile (or no string profile.id) ⇒ nothing; else
//        de-duplicated by the signature [value, componentId, experienceId, variantIndex,
//        profileId] against the last ACCEPTED and the pending attempts of that name (F2–F7),
//        then emitter.trackFlagView(payload). A failed attempt is warn-logged.
//     observe(subId, name, push)   replaces subscription `subId`; calls push(value) at once
//        (after a flag-view attempt), then after every change of the value (deep equality),
//        each time after a flag-view attempt (F8).
//     unobserve(subId), observedCount()
//     Catch-up (F9): when tracking becomes possible (flag-view consent AND a profile id, not so
//        before) or the profile id changes while possible, a flag view is attempted for every
//        observed name (subscribers get no duplicate value).
//     reset()    forgets accepted/pending signatures and blocked reports (subscriptions stay).
//     destroy()  drops every subscription and stops listening to the state.
// emitter: {hasConsent(method), block(method, payload), trackFlagView(payload) → result |
// Promise<result>} (core/event-emitter.js). A view counts as accepted when the result has
// accepted === true.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/flags.js', {
    provides: ['createFlagTracker', 'flags'],
    uses: ['host'],
  });
  var host = ns.host;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isThenable(value) {
    return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function';
  }

  function unwrap(value) {
    if (value !== null && typeof value === 'object' && 'value' in value && typeof value.value === 'object') return value.value;
    return value;
  }

  // Flags are the Variable changes; Experience and Fragment changes (API v2) are not flags.
  function isChange(change) {
    return isRecord(change) && typeof change.key === 'string' && (change.type === undefined || change.type === 'Variable');
  }

  function resolve(changes) {
    var flags = {};
    if (!Array.isArray(changes)) return flags;
    for (var i = 0; i < changes.length; i++) {
      var change = changes[i];
      if (!isChange(change)) continue;
      Object.defineProperty(flags, change.key, { value: unwrap(change.value), enumerable: true, writable: true, configurable: true });
    }
    return flags;
  }

  function getFlag(name, changes) {
    if (!Array.isArray(changes)) return undefined;
    for (var i = changes.length - 1; i >= 0; i--) {
      var change = changes[i];
      if (isChange(change) && change.key === name) return unwrap(change.value);
    }
    return undefined;
  }

  function firstChange(name, changes) {
    if (!Array.isArray(changes)) return undefined;
    for (var i = 0; i < changes.length; i++) {
      if (isChange(changes[i]) && changes[i].key === name) return changes[i];
    }
    return undefined;
  }

  // Sorted-key JSON with a token for undefined; cyclic input cannot come from JSON.
  function canonical(value) {
    if (value === undefined) return '~u';
    if (value === null || typeof value !== 'object') return JSON.stringify(value);
    if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
    var keys = Object.keys(value).sort();
    var parts = [];
    for (var i = 0; i < keys.length; i++) {
      if (value[keys[i]] === undefined) continue;
      parts.push(JSON.stringify(keys[i]) + ':' + canonical(value[keys[i]]));
    }
    return '{' + parts.join(',') + '}';
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function profileIdOf(snapshot) {
    var profile = snapshot.profile;
    return isRecord(profile) && typeof profile.id === 'string' ? profile.id : undefined;
  }

  // The flag-view payload: only well-typed keys, so the builder never rejects it.
  function payloadFor(name, changes) {
    var payload = { componentId: name };
    var change = firstChange(name, changes);
    var meta = change !== undefined && isRecord(change.meta) ? change.meta : undefined;
    if (meta !== undefined && typeof meta.experienceId === 'string') payload.experienceId = meta.experienceId;
    if (meta !== undefined && typeof meta.variantIndex === 'number') payload.variantIndex = meta.variantIndex;
    return payload;
  }

  function createFlagTracker(options) {
    var state = options.state;
    var emitter = options.emitter;
    var lastAccepted = new Map(); // name → {signature, attempt}
    var pending = new Map(); // name → Set of signatures
    var blockedReported = new Set(); // canonical [name, value]
    var attempts = 0;
    var subscriptions = new Map(); // subId → {name, value, push}

    var initial = state.get();
    var lastChanges = initial.changes;
    var lastConsent = initial.consent;
    var lastProfileId = profileIdOf(initial);
    var wasPossible = trackingPossible(initial);
    var unsubscribe = state.subscribe(onState);

    function trackingPossible(snapshot) {
      return emitter.hasConsent('trackFlagView') && profileIdOf(snapshot) !== undefined;
    }

    function attempt(name, value, changes) {
      var payload = payloadFor(name, changes);
      if (!emitter.hasConsent('trackFlagView')) {
        var reportKey = canonical([name, value]);
        if (blockedReported.has(reportKey)) return;
        blockedReported.add(reportKey);
        emitter.block('trackFlagView', payload);
        return;
      }
      var profileId = profileIdOf(state.get());
      if (profileId === undefined) return;
      var signature = canonical([value, payload.componentId, payload.experienceId, payload.variantIndex, profileId]);
      var last = lastAccepted.get(name);
      if (last !== undefined && last.signature === signature) return;
      var waiting = pending.get(name);
      if (waiting !== undefined && waiting.has(signature)) return;
      if (waiting === undefined) {
        waiting = new Set();
        pending.set(name, waiting);
      }
      waiting.add(signature);
      var id = ++attempts;
      var outcome;
      try {
        outcome = emitter.trackFlagView(payload);
      } catch (error) {
        outcome = Promise.reject(error);
      }
      function finish() {
        waiting.delete(signature);
        if (waiting.size === 0 && pending.get(name) === waiting) pending.delete(name);
      }
      function accepted(result) {
        if (result !== null && typeof result === 'object' && result.accepted === true) {
          var current = lastAccepted.get(name);
          if (current === undefined || current.attempt < id) lastAccepted.set(name, { signature: signature, attempt: id });
        }
        finish();
      }
      function failed(error) {
        host.log('warn', 'Flag view for "' + name + '" failed: ' + messageOf(error));
        finish();
      }
      if (isThenable(outcome)) outcome.then(accepted, failed);
      else accepted(outcome);
    }

    function read(name) {
      var changes = state.get().changes;
      var value = getFlag(name, changes);
      attempt(name, value, changes);
      return value;
    }

    function deliver(subId, subscription) {
      try {
        subscription.push(subscription.value);
      } catch (error) {
        host.log('error', 'Flag subscriber "' + subId + '" threw: ' + messageOf(error));
      }
    }

    function observe(subId, name, push) {
      if (typeof name !== 'string') throw new TypeError('observeFlag name must be a string.');
      if (typeof push !== 'function') throw new TypeError('observeFlag needs a push function.');
      subscriptions.delete(subId);
      var changes = state.get().changes;
      var subscription = { name: name, value: getFlag(name, changes), push: push };
      subscriptions.set(subId, subscription);
      attempt(name, subscription.value, changes);
      deliver(subId, subscription);
    }

    function unobserve(subId) {
      subscriptions.delete(subId);
    }

    function onState(snapshot) {
      if (snapshot.consent !== lastConsent) {
        lastConsent = snapshot.consent;
        blockedReported.clear();
      }
      if (snapshot.changes !== lastChanges) {
        lastChanges = snapshot.changes;
        Array.from(subscriptions.entries()).forEach(function (pair) {
          var subscription = pair[1];
          if (subscriptions.get(pair[0]) !== subscription) return;
          var value = getFlag(subscription.name, snapshot.changes);
          if (canonical(value) === canonical(subscription.value)) return;
          subscription.value = value;
          attempt(subscription.name, value, snapshot.changes);
          deliver(pair[0], subscription);
        });
      }
      var possible = trackingPossible(snapshot);
      var profileId = profileIdOf(snapshot);
      var catchUp = possible && (!wasPossible || profileId !== lastProfileId);
      wasPossible = possible;
      lastProfileId = profileId;
      if (!catchUp) return;
      var names = new Set();
      subscriptions.forEach(function (subscription) {
        names.add(subscription.name);
      });
      names.forEach(function (name) {
        attempt(name, getFlag(name, snapshot.changes), snapshot.changes);
      });
    }

    function reset() {
      lastAccepted.clear();
      pending.clear();
      blockedReported.clear();
    }

    function destroy() {
      unsubscribe();
      subscriptions.clear();
      reset();
    }

    return {
      getFlag: read,
      observe: observe,
      unobserve: unobserve,
      observedCount: function () {
        return subscriptions.size;
      },
      reset: reset,
      destroy: destroy,
    };
  }

  ns.flags = {
    unwrap: unwrap,
    resolve: resolve,
    getFlag: getFlag,
    firstChange: firstChange,
    canonical: canonical,
  };
  ns.createFlagTracker = createFlagTracker;
})();
