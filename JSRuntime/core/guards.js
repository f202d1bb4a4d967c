// core/guards.js
// Contract: `__optimization.guards`, pure shape checks of Contentful data. None
// of them throws on JSON-shaped data, recurses into consumer fields or allocates (except
// normalizeOptimizationConfig).
//   isRecord(v)                 typeof "object", not null, not an array (null-prototype objects count).
//   isResolvedEntry(v)          sys.type "Entry", sys.id string, sys.contentType.sys.id string,
//                               metadata and fields records.
//   isEntryLink(v)              sys.type "Link", sys.linkType "Entry", sys.id string.
//   followEntryLink(index, v)   `index` (a Map of sys.id → entry, or null) resolves an entry link to
//                               its target; anything else, or a target not in the index, is
//                               returned unchanged.
//   isAudienceEntry(v)          resolved entry of content type nt_audience with a string
//                               nt_audience_id (nt_name / nt_description optional strings).
//   isOptimizationConfig(v)     nt_config object: distribution number[]?, traffic number?,
//                               sticky boolean?, components Component[]? (extra keys ignored).
//   isOptimizationComponent(v)  EntryReplacement (type absent or "EntryReplacement"; baseline
//                               {id string, hidden boolean?}; variants [{id string, hidden boolean?}])
//                               or InlineVariable (type "InlineVariable", key string, valueType
//                               Boolean|Number|Object|String, baseline {value}, variants [{value}],
//                               value = string | boolean | null | number | plain object).
//   isEntryReplacementComponent(v)
//   isOptimizationEntry(v, index?)  resolved nt_experience entry whose fields pass the schema:
//                               nt_name string, nt_type nt_experiment|nt_personalization,
//                               nt_experience_id string, nt_description string|null|absent,
//                               nt_config null|absent|valid, nt_audience null|absent|entry link|valid
//                               audience entry, nt_variants absent or an array of entry links or
//                               resolved entries. Links are followed through `index` first, so an
//                               included but malformed audience invalidates the entry.
//   normalizeOptimizationConfig(v)  → {distribution, traffic, components, sticky}: a missing/null
//                               config gives {[], 0, [], false}; missing/null keys are filled,
//                               arrays are copied, extra keys dropped.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/guards.js', { provides: ['guards'] });

  var EXPERIENCE_TYPES = { nt_experiment: true, nt_personalization: true };
  var VALUE_TYPES = { Boolean: true, Number: true, Object: true, String: true };

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isOptionalString(value) {
    return value === undefined || typeof value === 'string';
  }

  function isOptionalBoolean(value) {
    return value === undefined || typeof value === 'boolean';
  }

  function isNumber(value) {
    return typeof value === 'number' && value === value;
  }

  function isResolvedEntry(value) {
    if (!isRecord(value)) return false;
    var sys = value.sys;
    if (!isRecord(sys) || sys.type !== 'Entry' || typeof sys.id !== 'string') return false;
    var contentType = sys.contentType;
    if (!isRecord(contentType) || !isRecord(contentType.sys) || typeof contentType.sys.id !== 'string') {
      return false;
    }
    return isRecord(value.metadata) && isRecord(value.fields);
  }

  function isEntryLink(value) {
    if (!isRecord(value)) return false;
    var sys = value.sys;
    return isRecord(sys) && sys.type === 'Link' && sys.linkType === 'Entry' && typeof sys.id === 'string';
  }

  function followEntryLink(index, value) {
    if (index === null || index === undefined || !isEntryLink(value)) return value;
    var target = index.get(value.sys.id);
    return target === undefined ? value : target;
  }

  function contentTypeOf(entry) {
    return entry.sys.contentType.sys.id;
  }

  function isAudienceEntry(value) {
    if (!isResolvedEntry(value) || contentTypeOf(value) !== 'nt_audience') return false;
    var fields = value.fields;
    return typeof fields.nt_audience_id === 'string' &&
      isOptionalString(fields.nt_name) && isOptionalString(fields.nt_description);
  }

  function isNumberArray(value) {
    if (!Array.isArray(value)) return false;
    for (var i = 0; i < value.length; i++) if (!isNumber(value[i])) return false;
    return true;
  }

  function isVariableValue(value) {
    return value === null || typeof value === 'string' || typeof value === 'boolean' ||
      isNumber(value) || isRecord(value);
  }

  function isReplacementVariant(value) {
    return isRecord(value) && typeof value.id === 'string' && isOptionalBoolean(value.hidden);
  }

  function isEntryReplacementComponent(value) {
    if (!isRecord(value) || (value.type !== undefined && value.type !== 'EntryReplacement')) return false;
    if (!isReplacementVariant(value.baseline) || !Array.isArray(value.variants)) return false;
    for (var i = 0; i < value.variants.length; i++) {
      if (!isReplacementVariant(value.variants[i])) return false;
    }
    return true;
  }

  function isInlineVariableComponent(value) {
    if (!isRecord(value) || value.type !== 'InlineVariable') return false;
    if (typeof value.key !== 'string' || VALUE_TYPES[value.valueType] !== true) return false;
    if (!isRecord(value.baseline) || !isVariableValue(value.baseline.value)) return false;
    if (!Array.isArray(value.variants)) return false;
    for (var i = 0; i < value.variants.length; i++) {
      var variant = value.variants[i];
      if (!isRecord(variant) || !isVariableValue(variant.value)) return false;
    }
    return true;
  }

  function isOptimizationComponent(value) {
    return isEntryReplacementComponent(value) || isInlineVariableComponent(value);
  }

  function isOptimizationConfig(value) {
    if (!isRecord(value)) return false;
    if (value.distribution !== undefined && !isNumberArray(value.distribution)) return false;
    if (value.traffic !== undefined && !isNumber(value.traffic)) return false;
    if (!isOptionalBoolean(value.sticky)) return false;
    if (value.components !== undefined) {
      if (!Array.isArray(value.components)) return false;
      for (var i = 0; i < value.components.length; i++) {
        if (!isOptimizationComponent(value.components[i])) return false;
      }
    }
    return true;
  }

  function isOptimizationEntry(value, index) {
    if (!isResolvedEntry(value) || contentTypeOf(value) !== 'nt_experience') return false;
    var fields = value.fields;
    if (typeof fields.nt_name !== 'string' || EXPERIENCE_TYPES[fields.nt_type] !== true ||
      typeof fields.nt_experience_id !== 'string') {
      return false;
    }
    if (fields.nt_description !== undefined && fields.nt_description !== null &&
      typeof fields.nt_description !== 'string') {
      return false;
    }
    if (fields.nt_config !== undefined && fields.nt_config !== null && !isOptimizationConfig(fields.nt_config)) {
      return false;
    }
    if (fields.nt_audience !== undefined && fields.nt_audience !== null) {
      var audience = followEntryLink(index, fields.nt_audience);
      if (!isEntryLink(audience) && !isAudienceEntry(audience)) return false;
    }
    var variants = fields.nt_variants;
    if (variants !== undefined) {
      if (!Array.isArray(variants)) return false;
      for (var i = 0; i < variants.length; i++) {
        var variant = followEntryLink(index, variants[i]);
        if (!isEntryLink(variant) && !isResolvedEntry(variant)) return false;
      }
    }
    return true;
  }

  function normalizeOptimizationConfig(value) {
    var config = isRecord(value) ? value : {};
    return {
      distribution: Array.isArray(config.distribution) ? config.distribution.slice() : [],
      traffic: config.traffic === undefined || config.traffic === null ? 0 : config.traffic,
      components: Array.isArray(config.components) ? config.components.slice() : [],
      sticky: config.sticky === undefined || config.sticky === null ? false : config.sticky,
    };
  }

  ns.guards = {
    isRecord: isRecord,
    isResolvedEntry: isResolvedEntry,
    isEntryLink: isEntryLink,
    followEntryLink: followEntryLink,
    isAudienceEntry: isAudienceEntry,
    isOptimizationConfig: isOptimizationConfig,
    isOptimizationComponent: isOptimizationComponent,
    isEntryReplacementComponent: isEntryReplacementComponent,
    isOptimizationEntry: isOptimizationEntry,
    normalizeOptimizationConfig: normalizeOptimizationConfig,
  };
})();
