// core/preview-model.js
// Contract: `__optimization.buildPreviewModel(audiences, experiences, names, selections, profile,
// manager)` → the preview panel's model, published as `previewOverrides.buildPreviewModel`
// (core/preview-overrides.js); `manager` is a preview override manager.
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
  var ns = globalThis.__optimization.declare('core/preview-model.js', {
    provides: ['buildPreviewModel'],
    uses: ['experienceEntries', 'guards'],
  });
  var guards = ns.guards;
  var experienceIdOf = ns.experienceEntries.experienceIdOf;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function profileAudiences(profile) {
    return isRecord(profile) && Array.isArray(profile.audiences) ? profile.audiences : [];
  }

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

  ns.buildPreviewModel = buildPreviewModel;
})();
