// core/merge-tags.js
// Contract: `__optimization.mergeTags` — merge-tag values of rich text
// for a profile.
//   isMergeTagEntry(v)          a resolved entry (guards.isResolvedEntry) of content type
//                               nt_mergetag with string nt_name and nt_mergetag_id, and
//                               nt_fallback a string or absent (null counts as absent).
//   isProfile(v)                the full Profile schema (id, stableId strings; random
//                               number; audiences string[]; traits object; location GeoLocation —
//                               optional string fields, countryCode exactly 2 chars, coordinates
//                               {latitude, longitude} numbers; session SessionStatistics with a
//                               Page landingPage). Unknown extra keys are allowed.
//   normalizeSelectors(id) → string[]   split on "_" into p0..pn; candidate i = (p0..p(i-1)
//                               joined by ".") + "." + (pi..pn joined by "_"), empty halves
//                               dropped: "a_b_c" → ["a_b_c", "a.b_c", "a.b.c"].
//   getValueFromProfile(id, profile) → string | undefined   walks the profile (own properties of
//                               objects and arrays, "."-separated, empty segments ignored) for each
//                               selector in order and takes the FIRST PRESENT value (not
//                               undefined, null or ""): a string, number or boolean gives
//                               String(value) — 0 and false included — an object or
//                               array gives undefined (the caller falls back).
//   resolve(entry, profile) → string | undefined   not a merge-tag entry ⇒ warn-log, undefined;
//                               a profile failing isProfile ⇒ warn-log, nt_fallback (may be
//                               undefined); else getValueFromProfile(nt_mergetag_id) ?? nt_fallback.
// Logs never include profile data.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/merge-tags.js', {
    provides: ['mergeTags'],
    uses: ['guards', 'host'],
  });
  var host = ns.host;
  var guards = ns.guards;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isOptionalString(value) {
    return value === undefined || typeof value === 'string';
  }

  function isNumber(value) {
    return typeof value === 'number' && value === value;
  }

  function fallbackOf(entry) {
    var fallback = entry.fields.nt_fallback;
    return typeof fallback === 'string' ? fallback : undefined;
  }

  function isMergeTagEntry(value) {
    if (!guards.isResolvedEntry(value) || value.sys.contentType.sys.id !== 'nt_mergetag') return false;
    var fields = value.fields;
    return typeof fields.nt_name === 'string' && typeof fields.nt_mergetag_id === 'string' &&
      (fields.nt_fallback === undefined || fields.nt_fallback === null || typeof fields.nt_fallback === 'string');
  }

  function isStringRecord(value) {
    if (!isRecord(value)) return false;
    var keys = Object.keys(value);
    for (var i = 0; i < keys.length; i++) if (typeof value[keys[i]] !== 'string') return false;
    return true;
  }

  function isPage(value) {
    return isRecord(value) && typeof value.path === 'string' && isStringRecord(value.query) &&
      typeof value.referrer === 'string' && typeof value.search === 'string' &&
      isOptionalString(value.title) && typeof value.url === 'string';
  }

  var LOCATION_STRINGS = ['city', 'postalCode', 'region', 'regionCode', 'country', 'continent', 'timezone'];

  function isGeoLocation(value) {
    if (!isRecord(value)) return false;
    for (var i = 0; i < LOCATION_STRINGS.length; i++) {
      if (!isOptionalString(value[LOCATION_STRINGS[i]])) return false;
    }
    if (value.countryCode !== undefined && (typeof value.countryCode !== 'string' || value.countryCode.length !== 2)) return false;
    if (value.coordinates !== undefined) {
      var c = value.coordinates;
      if (!isRecord(c) || !isNumber(c.latitude) || !isNumber(c.longitude)) return false;
    }
    return true;
  }

  function isSession(value) {
    return isRecord(value) && typeof value.id === 'string' && typeof value.isReturningVisitor === 'boolean' &&
      isPage(value.landingPage) && isNumber(value.count) && isNumber(value.activeSessionLength) &&
      isNumber(value.averageSessionLength);
  }

  function isProfile(value) {
    if (!isRecord(value) || typeof value.id !== 'string' || typeof value.stableId !== 'string') return false;
    if (!isNumber(value.random) || !Array.isArray(value.audiences)) return false;
    for (var i = 0; i < value.audiences.length; i++) if (typeof value.audiences[i] !== 'string') return false;
    return isRecord(value.traits) && isGeoLocation(value.location) && isSession(value.session);
  }

  function normalizeSelectors(id) {
    var parts = String(id).split('_');
    var selectors = [];
    for (var i = 0; i < parts.length; i++) {
      var head = parts.slice(0, i).join('.');
      var tail = parts.slice(i).join('_');
      selectors.push(head.length > 0 && tail.length > 0 ? head + '.' + tail : head.length > 0 ? head : tail);
    }
    return selectors;
  }

  function walk(profile, selector) {
    var segments = selector.split('.');
    var current = profile;
    for (var i = 0; i < segments.length; i++) {
      var segment = segments[i];
      if (segment.length === 0) continue;
      if (current === null || typeof current !== 'object') return undefined;
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = current[segment];
    }
    return current;
  }

  function isPresent(value) {
    return value !== undefined && value !== null && value !== '';
  }

  function getValueFromProfile(id, profile) {
    var selectors = normalizeSelectors(id);
    for (var i = 0; i < selectors.length; i++) {
      var value = walk(profile, selectors[i]);
      if (!isPresent(value)) continue;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
      return undefined;
    }
    return undefined;
  }

  function resolve(entry, profile) {
    if (!isMergeTagEntry(entry)) {
      host.log('warn', 'Merge tag value requested for a value that is not a valid nt_mergetag entry.');
      return undefined;
    }
    if (!isProfile(profile)) {
      host.log('warn', 'Merge tag "' + entry.sys.id + '": the profile is missing or invalid; using the fallback.');
      return fallbackOf(entry);
    }
    var value = getValueFromProfile(entry.fields.nt_mergetag_id, profile);
    return value !== undefined ? value : fallbackOf(entry);
  }

  ns.mergeTags = {
    isMergeTagEntry: isMergeTagEntry,
    isProfile: isProfile,
    normalizeSelectors: normalizeSelectors,
    getValueFromProfile: getValueFromProfile,
    resolve: resolve,
  };
})();
