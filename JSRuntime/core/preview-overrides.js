// core/preview-overrides.js
// Contract: preview overrides of audiences and variants and the state
// interceptor hook.
//
// State interceptors:
//   __optimization.stateInterceptors = {add(fn) → remove(), remove(fn), clear(), size(),
//       apply(data) → data}   one registry per JS runtime (one core instance at a time).
//   __optimization.applyInterceptors(data) → data   = stateInterceptors.apply(data).
//   __optimization.createStateInterceptorRegistry() → a separate registry (tests).
//   apply(data): `data` holds any of {profile, selectedOptimizations, changes} (the Experience
//   response's data renamed: experiences → selectedOptimizations). Each interceptor, in
//   registration order, receives a deep copy of the accumulated value and returns a possibly
//   sparse object: a key PRESENT in the return (even undefined) replaces the accumulated value,
//   an absent key keeps it; a non-object return is ignored, a throwing interceptor is logged and
//   skipped. Returns the accumulated object (only keys that were present somewhere).
//   THE DELIVERY CODE MUST CALL applyInterceptors(data) on every successful Experience response
//   BEFORE writing profile/selectedOptimizations/changes to the state (the caller of the event
//   method still receives the raw data). The override manager captures its baseline there.
//
// Experience definitions (the nt_experience entries the override manager derives flags from):
//   __optimization.createExperienceDefinitions(capacity?) → {record(entry, index?),
//       recordDocument(document), get(experienceId), size(), clear()}
//   record keeps an entry passing guards.isOptimizationEntry under nt_experience_id (and sys.id).
//   recordDocument(document): for a CDA collection every nt_experience among items and
//   includes.Entry; for an entry every resolved element of fields.nt_experiences (one level, no
//   recursion). Bounded (LRU, default 1000).
//
// Pure helpers: __optimization.previewOverrides = {
//   applySelectionOverrides(selections, overrides)   overrides = {expId: {experienceId,
//       variantIndex}}; each selection whose experienceId is overridden is copied with the
//       override's variantIndex (other keys kept); every override missing from `selections` is
//       appended as {experienceId, variantIndex, variants: {}}. No overrides ⇒ `selections`
//       returned as is.
//   applyChangeOverrides(changes, overrides, definitions)   for each overridden experience
//       with a known definition, each InlineVariable component yields {key, type: "Variable",
//       value: index 0 ? baseline.value : (variants[i-1]?.value ?? baseline.value), meta:
//       {experienceId, variantIndex: i}} replacing the change with the same key + experienceId
//       (in place) or appended. Nothing derived ⇒ `changes` returned as is.
//   buildPreviewModel(audiences, experiences, names, selections, manager)   see below. }
//
// __optimization.createPreviewOverrideManager({state, definitions, onChange?, interceptors?})
//   Override state {audiences: {audId: {audienceId, isActive, source: "manual", experienceIds}},
//   selectedOptimizations: {expId: {experienceId, variantIndex}}}. The baseline (natural)
//   selections and changes are captured from the state at construction (defaults) and from
//   every intercepted response that carries the key. Every mutation recomputes the state's
//   selectedOptimizations AND changes from the cached baseline — with no
//   experience override left, the baseline itself — then calls onChange().
//     activateAudience(audId, expIds) / deactivateAudience(audId, expIds)   audience record
//         isActive true/false; each expId → variantIndex 1 / 0 (none given ⇒ only the record).
//         The first override of an audience snapshots its natural qualification
//         (profile.audiences contains audId; no profile ⇒ false).
//     setVariantOverride(expId, index), resetOptimizationOverride(expId) (unknown ⇒ no-op),
//     resetAudienceOverride(audId) (drops the record, its snapshot and its experiences'
//     overrides), resetAll() (clears everything, restores the baseline).
//     clear()      forgets overrides AND the baseline and sets selections/changes undefined
//                  without notifying (used by the bridge's reset()).
//     snapshot() → {audienceOverrides {audId: isActive}, variantOverrides {expId: i},
//                  defaultAudienceQualifications {audId: bool}, defaultVariantIndices {expId:
//                  baseline index (0 when not selected), only for overridden experiences}}
//     takeRefresh() → true once after each intercepted response (the bridge pushes the preview
//                  state after the state change that followed).
//     destroy()    removes the interceptor.
// Preview model (buildPreviewModel): audiences {id: nt_audience_id ?? sys.id, name: nt_name ?? id,
// isQualified (profile.audiences), overrideState "on"|"off"|"default", isActive}; experiences {id:
// nt_experience_id ?? sys.id, name: nt_name ?? id, type (default nt_personalization), audience
// {id}|null, distribution [{index, variantRef, percentage: round(fraction*100), name}],
// currentVariantIndex (current selections, default 0), isOverridden, naturalVariantIndex (only
// when overridden)}; experiences without a known audience go under {id: "ALL_VISITORS", name:
// "All Visitors"} (always qualified); audiences sorted All Visitors first, then by name
// case-insensitively. Result {audiencesWithExperiences: [{audience, experiences}],
// unassociatedExperiences: [], hasData, sdkVariantIndices {expId: current index}}.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/preview-overrides.js', {
    provides: [
      'applyInterceptors', 'createExperienceDefinitions', 'createPreviewOverrideManager',
      'createStateInterceptorRegistry', 'previewOverrides', 'stateInterceptors',
    ],
    uses: ['createLruCache', 'entryIndex', 'guards', 'host'],
  });
  var host = ns.host;
  var guards = ns.guards;

  var hasOwn = Object.prototype.hasOwnProperty;
  var DATA_KEYS = ['profile', 'selectedOptimizations', 'changes'];

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function cloneJSON(value) {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(cloneJSON);
    var copy = {};
    Object.keys(value).forEach(function (key) {
      Object.defineProperty(copy, key, { value: cloneJSON(value[key]), enumerable: true, writable: true, configurable: true });
    });
    return copy;
  }

  function isVariantIndex(value) {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0;
  }

  // ---- state interceptors -----------------------------------------------------------------------

  function createInterceptorRegistry() {
    var interceptors = [];

    function remove(fn) {
      var at = interceptors.indexOf(fn);
      if (at !== -1) interceptors.splice(at, 1);
    }

    function add(fn) {
      if (typeof fn !== 'function') throw new TypeError('A state interceptor must be a function.');
      interceptors.push(fn);
      return function () {
        remove(fn);
      };
    }

    function apply(data) {
      var accumulated = {};
      if (isRecord(data)) {
        DATA_KEYS.forEach(function (key) {
          if (hasOwn.call(data, key)) accumulated[key] = data[key];
        });
      }
      interceptors.slice().forEach(function (interceptor) {
        var result;
        try {
          result = interceptor(cloneJSON(accumulated));
        } catch (error) {
          host.log('error', 'A state interceptor threw: ' + messageOf(error));
          return;
        }
        if (!isRecord(result)) return;
        DATA_KEYS.forEach(function (key) {
          if (hasOwn.call(result, key)) accumulated[key] = result[key];
        });
      });
      return accumulated;
    }

    return {
      add: add,
      remove: remove,
      clear: function () {
        interceptors = [];
      },
      size: function () {
        return interceptors.length;
      },
      apply: apply,
    };
  }

  // ---- experience definitions -------------------------------------------------------------------

  function experienceIdOf(entry) {
    return typeof entry.fields.nt_experience_id === 'string' ? entry.fields.nt_experience_id : entry.sys.id;
  }

  function isExperienceEntry(value) {
    return guards.isResolvedEntry(value) && value.sys.contentType.sys.id === 'nt_experience';
  }

  function createExperienceDefinitions(capacity) {
    var store = ns.createLruCache(typeof capacity === 'number' && capacity > 0 ? Math.floor(capacity) : 1000);

    function record(entry, index) {
      if (!isExperienceEntry(entry) || !guards.isOptimizationEntry(entry, index || null)) return false;
      var id = experienceIdOf(entry);
      store.set(id, entry);
      if (entry.sys.id !== id) store.set(entry.sys.id, entry);
      return true;
    }

    function recordList(list) {
      if (!Array.isArray(list)) return;
      for (var i = 0; i < list.length; i++) {
        if (isExperienceEntry(list[i])) record(list[i], null);
      }
    }

    function recordDocument(document) {
      if (ns.entryIndex.isCollection(document)) {
        recordList(document.items);
        if (isRecord(document.includes)) recordList(document.includes.Entry);
        return;
      }
      if (guards.isResolvedEntry(document)) recordList(document.fields.nt_experiences);
    }

    return {
      record: record,
      recordDocument: recordDocument,
      get: function (id) {
        return store.peek(id);
      },
      size: function () {
        return store.size;
      },
      clear: function () {
        store.clear();
      },
    };
  }

  // ---- pure override helpers --------------------------------------------------------------------

  function overrideIndex(override) {
    return isRecord(override) ? override.variantIndex : override;
  }

  function applySelectionOverrides(selections, overrides) {
    var ids = Object.keys(overrides || {});
    if (ids.length === 0) return selections;
    var list = Array.isArray(selections) ? selections : [];
    var seen = {};
    var result = list.map(function (selection) {
      if (!isRecord(selection) || typeof selection.experienceId !== 'string' || !hasOwn.call(overrides, selection.experienceId)) {
        return selection;
      }
      seen[selection.experienceId] = true;
      return Object.assign({}, selection, { variantIndex: overrideIndex(overrides[selection.experienceId]) });
    });
    ids.forEach(function (id) {
      if (seen[id] !== true) result.push({ experienceId: id, variantIndex: overrideIndex(overrides[id]), variants: {} });
    });
    return result;
  }

  function inlineValue(component, index) {
    if (index === 0 || !isVariantIndex(index)) return component.baseline.value;
    var variant = component.variants[index - 1];
    return isRecord(variant) && variant.value !== undefined ? variant.value : component.baseline.value;
  }

  function applyChangeOverrides(changes, overrides, definitions) {
    var ids = Object.keys(overrides || {});
    if (ids.length === 0 || !definitions) return changes;
    var derived = [];
    ids.forEach(function (id) {
      var definition = definitions.get(id);
      if (definition === undefined) return;
      var index = overrideIndex(overrides[id]);
      guards.normalizeOptimizationConfig(definition.fields.nt_config).components.forEach(function (component) {
        if (!isRecord(component) || component.type !== 'InlineVariable' || !guards.isOptimizationComponent(component)) return;
        derived.push({
          key: component.key,
          type: 'Variable',
          value: inlineValue(component, index),
          meta: { experienceId: id, variantIndex: index },
        });
      });
    });
    if (derived.length === 0) return changes;
    var result = Array.isArray(changes) ? changes.slice() : [];
    derived.forEach(function (change) {
      for (var i = 0; i < result.length; i++) {
        var existing = result[i];
        if (isRecord(existing) && existing.key === change.key && isRecord(existing.meta) &&
          existing.meta.experienceId === change.meta.experienceId) {
          result[i] = change;
          return;
        }
      }
      result.push(change);
    });
    return result;
  }

  // ---- the manager ------------------------------------------------------------------------------

  function profileAudiences(profile) {
    return isRecord(profile) && Array.isArray(profile.audiences) ? profile.audiences : [];
  }

  function createPreviewOverrideManager(options) {
    var state = options.state;
    var definitions = options.definitions || null;
    var onChange = typeof options.onChange === 'function' ? options.onChange : function () {};
    var interceptors = options.interceptors || ns.stateInterceptors;

    var audiences = {};
    var variants = {};
    var naturalQualification = {};
    var initial = state.get();
    var baseline = initial.selectedOptimizations;
    var baselineChanges = initial.changes;
    var refreshed = false;
    var removeInterceptor = interceptors.add(intercept);

    function hasExperienceOverrides() {
      return Object.keys(variants).length > 0;
    }

    function notify() {
      try {
        onChange();
      } catch (error) {
        host.log('error', 'Preview override change callback threw: ' + messageOf(error));
      }
    }

    function overriddenSelections(natural) {
      return hasExperienceOverrides() ? applySelectionOverrides(natural === undefined ? [] : natural, variants) : natural;
    }

    function overriddenChanges(natural) {
      return hasExperienceOverrides() ? applyChangeOverrides(natural, variants, definitions) : natural;
    }

    function recompute() {
      state.set({ selectedOptimizations: overriddenSelections(baseline), changes: overriddenChanges(baselineChanges) });
    }

    function intercept(data) {
      refreshed = true;
      if (hasOwn.call(data, 'selectedOptimizations')) baseline = data.selectedOptimizations;
      if (hasOwn.call(data, 'changes')) baselineChanges = data.changes;
      if (!hasExperienceOverrides()) return {};
      return { selectedOptimizations: overriddenSelections(baseline), changes: overriddenChanges(baselineChanges) };
    }

    function setAudience(audienceId, active, experienceIds) {
      if (typeof audienceId !== 'string') throw new TypeError('overrideAudience audience id must be a string.');
      var ids = Array.isArray(experienceIds) ? experienceIds.filter(function (id) { return typeof id === 'string'; }) : [];
      if (!hasOwn.call(naturalQualification, audienceId)) {
        naturalQualification[audienceId] = profileAudiences(state.get().profile).indexOf(audienceId) !== -1;
      }
      audiences[audienceId] = { audienceId: audienceId, isActive: active, source: 'manual', experienceIds: ids.slice() };
      if (ids.length > 0) {
        ids.forEach(function (id) {
          variants[id] = { experienceId: id, variantIndex: active ? 1 : 0 };
        });
        recompute();
      }
      notify();
    }

    function setVariantOverride(experienceId, index) {
      if (typeof experienceId !== 'string') throw new TypeError('overrideVariant experience id must be a string.');
      if (!isVariantIndex(index)) throw new TypeError('overrideVariant variant index must be a non-negative integer.');
      variants[experienceId] = { experienceId: experienceId, variantIndex: index };
      recompute();
      notify();
    }

    function resetOptimizationOverride(experienceId) {
      if (!hasOwn.call(variants, experienceId)) return;
      delete variants[experienceId];
      recompute();
      notify();
    }

    function resetAudienceOverride(audienceId) {
      var record = hasOwn.call(audiences, audienceId) ? audiences[audienceId] : undefined;
      if (record === undefined && !hasOwn.call(naturalQualification, audienceId)) return;
      delete audiences[audienceId];
      delete naturalQualification[audienceId];
      if (record !== undefined) {
        record.experienceIds.forEach(function (id) {
          delete variants[id];
        });
      }
      recompute();
      notify();
    }

    function resetAll() {
      audiences = {};
      variants = {};
      naturalQualification = {};
      recompute();
      notify();
    }

    function clear() {
      audiences = {};
      variants = {};
      naturalQualification = {};
      baseline = undefined;
      baselineChanges = undefined;
      refreshed = false;
      state.set({ selectedOptimizations: undefined, changes: undefined });
    }

    function baselineIndex(experienceId) {
      if (!Array.isArray(baseline)) return 0;
      for (var i = 0; i < baseline.length; i++) {
        if (isRecord(baseline[i]) && baseline[i].experienceId === experienceId) return baseline[i].variantIndex;
      }
      return 0;
    }

    function snapshot() {
      var audienceOverrides = {};
      Object.keys(audiences).forEach(function (id) {
        audienceOverrides[id] = audiences[id].isActive;
      });
      var variantOverrides = {};
      var defaultVariantIndices = {};
      Object.keys(variants).forEach(function (id) {
        variantOverrides[id] = variants[id].variantIndex;
        defaultVariantIndices[id] = baselineIndex(id);
      });
      return {
        audienceOverrides: audienceOverrides,
        variantOverrides: variantOverrides,
        defaultAudienceQualifications: Object.assign({}, naturalQualification),
        defaultVariantIndices: defaultVariantIndices,
      };
    }

    return {
      activateAudience: function (audienceId, experienceIds) {
        setAudience(audienceId, true, experienceIds);
      },
      deactivateAudience: function (audienceId, experienceIds) {
        setAudience(audienceId, false, experienceIds);
      },
      setVariantOverride: setVariantOverride,
      resetOptimizationOverride: resetOptimizationOverride,
      resetAudienceOverride: resetAudienceOverride,
      resetAll: resetAll,
      clear: clear,
      snapshot: snapshot,
      overrides: function () {
        return { audiences: cloneJSON(audiences), selectedOptimizations: cloneJSON(variants) };
      },
      baseline: function () {
        return baseline;
      },
      audienceOverrideState: function (audienceId) {
        if (!hasOwn.call(audiences, audienceId)) return 'default';
        return audiences[audienceId].isActive ? 'on' : 'off';
      },
      isOverridden: function (experienceId) {
        return hasOwn.call(variants, experienceId);
      },
      baselineIndex: baselineIndex,
      takeRefresh: function () {
        var value = refreshed;
        refreshed = false;
        return value;
      },
      destroy: function () {
        removeInterceptor();
      },
    };
  }

  // ---- preview model ----------------------------------------------------------------------------

  var ALL_VISITORS = { id: 'ALL_VISITORS', name: 'All Visitors' };

  function linkedId(value) {
    return isRecord(value) && isRecord(value.sys) && typeof value.sys.id === 'string' ? value.sys.id : undefined;
  }

  function entryName(entry) {
    if (!guards.isResolvedEntry(entry)) return undefined;
    var fields = entry.fields;
    var candidates = [fields.internalTitle, fields.title, fields.name];
    for (var i = 0; i < candidates.length; i++) if (typeof candidates[i] === 'string') return candidates[i];
    return undefined;
  }

  function distributionOf(entry, names) {
    var config = guards.normalizeOptimizationConfig(entry.fields.nt_config);
    var first = config.components[0];
    var inline = isRecord(first) && first.type === 'InlineVariable';
    var variantCount = isRecord(first) && Array.isArray(first.variants) ? first.variants.length : 0;
    var rows = Math.max(config.distribution.length, variantCount + 1);
    var result = [];
    for (var index = 0; index < rows; index++) {
      var ref = '';
      if (!inline && isRecord(first)) {
        var target = index === 0 ? first.baseline : first.variants[index - 1];
        ref = isRecord(target) && typeof target.id === 'string' ? target.id : '';
      }
      var fraction = config.distribution[index];
      var row = { index: index, variantRef: ref, percentage: typeof fraction === 'number' ? Math.round(fraction * 100) : 0 };
      var name = ref.length > 0 && names ? entryName(names.get(ref)) : undefined;
      if (name !== undefined) row.name = name;
      result.push(row);
    }
    return result;
  }

  function currentIndex(selections, experienceId) {
    if (!Array.isArray(selections)) return 0;
    for (var i = 0; i < selections.length; i++) {
      if (isRecord(selections[i]) && selections[i].experienceId === experienceId) return selections[i].variantIndex;
    }
    return 0;
  }

  // audiences / experiences: arrays of entries; names: Map id → entry (variant titles);
  // selections: the current (overridden) selections; profile: the current profile.
  function buildPreviewModel(audienceEntries, experienceEntries, names, selections, profile, manager) {
    var qualified = profileAudiences(profile);
    var groups = new Map();
    var audienceIdBySysId = new Map();
    audienceEntries.forEach(function (entry) {
      var id = typeof entry.fields.nt_audience_id === 'string' ? entry.fields.nt_audience_id : entry.sys.id;
      audienceIdBySysId.set(entry.sys.id, id);
      audienceIdBySysId.set(id, id);
      var overrideState = manager.audienceOverrideState(id);
      var isQualified = qualified.indexOf(id) !== -1;
      groups.set(id, {
        audience: {
          id: id,
          name: typeof entry.fields.nt_name === 'string' ? entry.fields.nt_name : id,
          isQualified: isQualified,
          overrideState: overrideState,
          isActive: overrideState === 'default' ? isQualified : overrideState === 'on',
        },
        experiences: [],
      });
    });
    var sdkVariantIndices = {};
    experienceEntries.forEach(function (entry) {
      var id = experienceIdOf(entry);
      var audienceRef = linkedId(entry.fields.nt_audience);
      var audienceId = audienceRef !== undefined ? audienceIdBySysId.get(audienceRef) : undefined;
      var current = currentIndex(selections, id);
      sdkVariantIndices[id] = current;
      var row = {
        id: id,
        name: typeof entry.fields.nt_name === 'string' ? entry.fields.nt_name : id,
        type: typeof entry.fields.nt_type === 'string' ? entry.fields.nt_type : 'nt_personalization',
        audience: audienceRef !== undefined ? { id: audienceRef } : null,
        distribution: distributionOf(entry, names),
        currentVariantIndex: current,
        isOverridden: manager.isOverridden(id),
      };
      if (row.isOverridden) row.naturalVariantIndex = manager.baselineIndex(id);
      if (audienceId === undefined) {
        if (!groups.has(ALL_VISITORS.id)) {
          groups.set(ALL_VISITORS.id, {
            audience: { id: ALL_VISITORS.id, name: ALL_VISITORS.name, isQualified: true, overrideState: 'default', isActive: true },
            experiences: [],
          });
        }
        audienceId = ALL_VISITORS.id;
      }
      groups.get(audienceId).experiences.push(row);
    });
    var list = Array.from(groups.values()).sort(function (a, b) {
      if (a.audience.id === ALL_VISITORS.id) return -1;
      if (b.audience.id === ALL_VISITORS.id) return 1;
      var left = a.audience.name.toLowerCase();
      var right = b.audience.name.toLowerCase();
      return left < right ? -1 : left > right ? 1 : 0;
    });
    return {
      audiencesWithExperiences: list,
      unassociatedExperiences: [],
      hasData: audienceEntries.length > 0 || experienceEntries.length > 0,
      sdkVariantIndices: sdkVariantIndices,
    };
  }

  ns.createStateInterceptorRegistry = createInterceptorRegistry;
  ns.stateInterceptors = createInterceptorRegistry();
  ns.applyInterceptors = function (data) {
    return ns.stateInterceptors.apply(data);
  };
  ns.createExperienceDefinitions = createExperienceDefinitions;
  ns.createPreviewOverrideManager = createPreviewOverrideManager;
  ns.previewOverrides = {
    applySelectionOverrides: applySelectionOverrides,
    applyChangeOverrides: applyChangeOverrides,
    buildPreviewModel: buildPreviewModel,
    isExperienceEntry: isExperienceEntry,
    experienceIdOf: experienceIdOf,
  };
})();
