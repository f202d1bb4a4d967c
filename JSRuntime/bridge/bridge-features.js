// bridge/bridge-features.js
// Contract: `__optimization.bridgeFeatures` — flags, merge tags, preview overrides, locale and
// reset of the stateful bridge: the functions of the topic "Flags, merge tags, preview overrides,
// locale and reset" of `__bridge` in JSRuntime/bridge-contract.json (all sync; bridge.js puts
// them on `__bridge`), and
//   installFeatures(instance) / teardownFeatures(instance)   the flag tracker and the preview
//                               override manager of an instance
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/bridge-features.js', {
    provides: ['bridgeFeatures'],
    uses: [
      'bridgeResolution', 'bridgeShared', 'createFlagTracker', 'createPreviewOverrideManager',
      'entryIndex', 'experienceApi', 'guards', 'host', 'locale', 'mergeTags', 'previewOverrides',
    ],
  });
  var host = ns.host;
  var guards = ns.guards;
  var shared = ns.bridgeShared;
  var callHost = shared.callHost;
  var absent = shared.absent;
  var isString = shared.isString;
  var isBoolean = shared.isBoolean;
  var NOT_INITIALIZED = shared.NOT_INITIALIZED;
  var entryIndex = ns.entryIndex;
  var locale = ns.locale;
  var bridgeState = shared.bridgeState;

  // Builds the flag tracker and the preview override manager of `target` (after installEvents).
  function installFeatures(target) {
    var state = target.state;
    target.flags = ns.createFlagTracker({ state: state, emitter: target.events });
    target.previewPanelOpen = false;
    target.previewDefinitions = null;
    target.overrides = ns.createPreviewOverrideManager({
      state: state,
      definitions: {
        get: function (id) {
          return ns.bridgeResolution.experienceDefinitions().get(id);
        },
      },
      onChange: function () {
        pushOverrides(target);
      },
    });
    // After an intercepted Experience response, push the preview state once the response's
    // state change was applied (after every API refresh).
    target.unsubscribeOverrides = state.subscribe(function () {
      if (target.overrides.takeRefresh()) pushOverrides(target);
    });
  }

  function teardownFeatures(target) {
    if (target.unsubscribeOverrides) target.unsubscribeOverrides();
    if (target.flags) target.flags.destroy();
    if (target.overrides) target.overrides.destroy();
  }

  function pushOverrides(target) {
    if (typeof globalThis.__nativeOnOverridesChanged !== 'function') return;
    callHost('__nativeOnOverridesChanged', [JSON.stringify(previewState(target))]);
  }

  function flagJSON(value) {
    return JSON.stringify(value === undefined ? null : value);
  }

  function getFlag(name) {
    if (typeof name !== 'string') throw new TypeError('getFlag name must be a string.');
    if (shared.current === null) return 'null';
    return flagJSON(shared.current.flags.getFlag(name));
  }

  // observeFlag(subId, name): replaces subscription `subId`; the current value is pushed to
  // __nativeOnFlagValueChanged(subId, json) before this returns, then every distinct value.
  // No-op before initialize.
  function observeFlag(subId, name) {
    if (typeof subId !== 'string') throw new TypeError('observeFlag subscription id must be a string.');
    if (typeof name !== 'string') throw new TypeError('observeFlag name must be a string.');
    if (shared.current === null) return;
    shared.current.flags.observe(subId, name, function (value) {
      callHost('__nativeOnFlagValueChanged', [subId, flagJSON(value)]);
    });
  }

  function unobserveFlag(subId) {
    if (shared.current === null) return;
    shared.current.flags.unobserve(subId);
  }

  // getMergeTagValue(entry, profile?): `profile` undefined ⇒ the current profile.
  function getMergeTagValue(entry, profile) {
    if (shared.current === null) return null;
    var value = ns.mergeTags.resolve(entry, profile === undefined ? shared.current.state.get().profile : profile);
    return value === undefined ? null : value;
  }

  // parseExperienceAnswer(text, apiVersion): the one reading of an Experience API answer, for a
  // host that holds one (a file, a cache) rather than receiving it from a call. No instance needed.
  function parseExperienceAnswer(text, apiVersion) {
    if (!isString(text)) throw new TypeError('parseExperienceAnswer: text must be a string');
    if (apiVersion !== 'v1' && apiVersion !== 'v2') throw new TypeError('parseExperienceAnswer: apiVersion must be "v1" or "v2"');
    var parsed = ns.experienceApi.parseResponse(text, apiVersion);
    return JSON.stringify({
      profile: parsed.data.profile,
      selectedOptimizations: parsed.data.selectedOptimizations,
      changes: parsed.data.changes,
      ignoredChanges: parsed.ignoredChanges,
    });
  }

  function getProfile() {
    if (shared.current === null) return null;
    var profile = shared.current.state.get().profile;
    return profile === undefined ? null : JSON.stringify(profile);
  }

  // setLocale(locale) → the normalised locale (null before initialize). Invalid input throws the
  // locale validation message and leaves the state unchanged. Events and Experience requests read the
  // state's locale when they are built/sent.
  function setLocale(value) {
    if (shared.current === null) return null;
    var normalized = locale.normalizeExplicitLocale(value);
    shared.current.state.set({ locale: normalized });
    return normalized;
  }

  // reset(): clears the profile, changes, selections, contexts, preview
  // overrides (and their baseline), the anonymous id, the current-screen de-dupe, the accepted
  // sticky keys and the flag-view de-dupe; experienceRequestState back to idle. Consent, locale,
  // online, flag subscriptions and queued events are kept. One state push. No-op before
  // initialize.
  function reset() {
    if (shared.current === null) return;
    var target = shared.current;
    target.state.batch(function () {
      target.anonymousId = undefined;
      target.screenTracker.reset();
      target.stickyKeys.clear();
      target.contexts.clear();
      target.flags.reset();
      target.overrides.clear();
      target.state.set({
        profile: undefined,
        changes: undefined,
        selectedOptimizations: undefined,
        experienceRequestState: { status: 'idle' },
      });
    });
    pushOverrides(target);
  }

  function isStringList(value) {
    return Array.isArray(value) && value.every(isString);
  }

  // overrideAudience(audId, qualified, expIds): qualified true activates the audience (its
  // experiences → variant 1), false deactivates it (→ 0). No-op before initialize.
  function overrideAudience(audienceId, qualified, experienceIds) {
    if (!isString(audienceId)) throw new TypeError('overrideAudience audience id must be a string.');
    if (!isBoolean(qualified)) throw new TypeError('overrideAudience qualified must be a boolean.');
    var ids = absent(experienceIds) ? [] : experienceIds;
    if (!isStringList(ids)) throw new TypeError('overrideAudience experience ids must be an array of strings.');
    if (shared.current === null) return;
    if (qualified) shared.current.overrides.activateAudience(audienceId, ids);
    else shared.current.overrides.deactivateAudience(audienceId, ids);
  }

  function overrideVariant(experienceId, variantIndex) {
    if (!isString(experienceId)) throw new TypeError('overrideVariant experience id must be a string.');
    if (!Number.isInteger(variantIndex) || variantIndex < 0) {
      throw new TypeError('overrideVariant variant index must be a non-negative integer.');
    }
    if (shared.current === null) return;
    shared.current.overrides.setVariantOverride(experienceId, variantIndex);
  }

  function resetVariantOverride(experienceId) {
    if (shared.current === null) return;
    shared.current.overrides.resetOptimizationOverride(experienceId);
  }

  function resetAudienceOverride(audienceId) {
    if (shared.current === null) return;
    shared.current.overrides.resetAudienceOverride(audienceId);
  }

  function resetAllOverrides() {
    if (shared.current === null) return;
    shared.current.overrides.resetAll();
  }

  function setPreviewPanelOpen(open) {
    if (!isBoolean(open)) throw new TypeError('setPreviewPanelOpen expects a boolean.');
    if (shared.current === null) return;
    shared.current.previewPanelOpen = open;
  }

  function entriesOfType(collection, contentType) {
    return collection.items.filter(function (item) {
      return guards.isResolvedEntry(item) && item.sys.contentType.sys.id === contentType;
    });
  }

  // loadDefinitions(audiences, experiences): two CDA collections ({items, includes?}) of
  // nt_audience and nt_experience entries; builds the preview model's definitions and records
  // the experiences for flag derivation. → JSON {audienceCount, experienceCount} or {error}.
  function loadDefinitions(audienceCollection, experienceCollection) {
    var valid = function (value) {
      return guards.isRecord(value) && Array.isArray(value.items);
    };
    if (!valid(audienceCollection) || !valid(experienceCollection)) {
      return JSON.stringify({ error: 'loadDefinitions expects two collections with an "items" array.' });
    }
    if (shared.current === null) return JSON.stringify({ error: NOT_INITIALIZED });
    var names = new Map();
    [audienceCollection, experienceCollection].forEach(function (collection) {
      var document = { sys: { type: 'Array' }, items: collection.items, includes: collection.includes };
      entryIndex.buildEntryIndex(document).forEach(function (entry, id) {
        if (!names.has(id)) names.set(id, entry);
      });
    });
    var audiences = entriesOfType(audienceCollection, 'nt_audience');
    var experiences = entriesOfType(experienceCollection, 'nt_experience');
    experiences.forEach(function (entry) {
      ns.bridgeResolution.experienceDefinitions().record(entry, names);
    });
    shared.current.previewDefinitions = { audiences: audiences, experiences: experiences, names: names };
    pushOverrides(shared.current);
    return JSON.stringify({ audienceCount: audiences.length, experienceCount: experiences.length });
  }

  function nameMap(entries, idOf) {
    var map = {};
    entries.forEach(function (entry) {
      var id = idOf(entry);
      map[id] = typeof entry.fields.nt_name === 'string' ? entry.fields.nt_name : id;
    });
    return map;
  }

  function previewState(target) {
    var snapshot = target.state.get();
    var out = bridgeState(snapshot);
    var overrides = target.overrides.snapshot();
    out.previewPanelOpen = target.previewPanelOpen;
    out.audienceOverrides = overrides.audienceOverrides;
    out.variantOverrides = overrides.variantOverrides;
    out.defaultAudienceQualifications = overrides.defaultAudienceQualifications;
    out.defaultVariantIndices = overrides.defaultVariantIndices;
    var definitions = target.previewDefinitions;
    if (definitions === null) {
      out.previewModel = null;
      out.audienceNameMap = {};
      out.experienceNameMap = {};
    } else {
      out.previewModel = ns.previewOverrides.buildPreviewModel(definitions.audiences, definitions.experiences,
        definitions.names, snapshot.selectedOptimizations, snapshot.profile, target.overrides);
      out.audienceNameMap = nameMap(definitions.audiences, function (entry) {
        return isString(entry.fields.nt_audience_id) ? entry.fields.nt_audience_id : entry.sys.id;
      });
      out.experienceNameMap = nameMap(definitions.experiences, ns.previewOverrides.experienceIdOf);
    }
    return out;
  }

  // getPreviewState() → JSON: BridgeState + previewPanelOpen, audienceOverrides,
  // variantOverrides, defaultAudienceQualifications, defaultVariantIndices, previewModel (null
  // until loadDefinitions), audienceNameMap, experienceNameMap. "null" before initialize.
  function getPreviewState() {
    if (shared.current === null) return 'null';
    return JSON.stringify(previewState(shared.current));
  }

  ns.bridgeFeatures = {
    installFeatures: installFeatures,
    teardownFeatures: teardownFeatures,
    getFlag: getFlag,
    observeFlag: observeFlag,
    unobserveFlag: unobserveFlag,
    getMergeTagValue: getMergeTagValue,
    getProfile: getProfile,
    setLocale: setLocale,
    reset: reset,
    overrideAudience: overrideAudience,
    overrideVariant: overrideVariant,
    resetVariantOverride: resetVariantOverride,
    resetAudienceOverride: resetAudienceOverride,
    resetAllOverrides: resetAllOverrides,
    setPreviewPanelOpen: setPreviewPanelOpen,
    loadDefinitions: loadDefinitions,
    getPreviewState: getPreviewState,
    parseExperienceAnswer: parseExperienceAnswer,
  };
})();
