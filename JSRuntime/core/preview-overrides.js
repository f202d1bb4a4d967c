// core/preview-overrides.js
// Contract: preview overrides of audiences and variants. They apply through the state
// interceptor hook (core/state-interceptors.js), derive changes from the experience definitions
// (core/experience-definitions.js) and publish the preview model (core/preview-model.js).
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
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/preview-overrides.js', {
    provides: ['createPreviewOverrideManager', 'previewOverrides'],
    uses: ['buildPreviewModel', 'cloneJSON', 'experienceEntries', 'guards', 'host', 'stateInterceptors'],
  });
  var host = ns.host;
  var guards = ns.guards;
  var cloneJSON = ns.cloneJSON;

  var hasOwn = Object.prototype.hasOwnProperty;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function messageOf(error) {
    return error instanceof Error ? error.message : String(error);
  }

  function isVariantIndex(value) {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0;
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

  ns.createPreviewOverrideManager = createPreviewOverrideManager;
  ns.previewOverrides = {
    applySelectionOverrides: applySelectionOverrides,
    applyChangeOverrides: applyChangeOverrides,
    buildPreviewModel: ns.buildPreviewModel,
    isExperienceEntry: ns.experienceEntries.isExperienceEntry,
    experienceIdOf: ns.experienceEntries.experienceIdOf,
  };
})();
