// core/experience-api.js
// Contract: the Experience API client.
//   __optimization.createExperienceApi({clientId, environment, apiVersion?, baseUrl?,
//       enabledFeatures?, preflight?, plainText?, getLocale?, statusKinds?}) →
//       {profilesUrl, profileUpsertRequest, profileAnswerOutcome, failureOutcome, features}
//     JavaScript sends nothing: the host sends the request profileUpsertRequest builds and hands
//     its answer (or its failure) back to profileAnswerOutcome (or failureOutcome).
//     plainText        false ⇒ profile upserts are sent as `application/json` (default
//                      `text/plain`, which needs no CORS preflight in browsers).
//     clientId         the tenant: the optimization client id (v1) or the space id (v2).
//     apiVersion       "v1" (default) or "v2": the routes (core/api-response.js); an empty
//                      environment takes the version's default ("main" / "master").
//     baseUrl          falsy ⇒ DEFAULT_BASE_URL; joined with or without a trailing slash.
//     enabledFeatures  a non-empty array ⇒ `options.features`, else ["ip-enrichment","location"].
//     getLocale()      read per request: `?locale=` when it returns a non-empty string.
//     preflight        true ⇒ `type=preflight` (after `locale`).
//     statusKinds      the host's delivery outcome of each HTTP status ({fallback, statuses},
//                      core/api-response.js readStatusKinds): the kind of a non-2xx answer.
//                      Without it profileAnswerOutcome throws a TypeError for a non-2xx status.
//     profilesUrl(profileId?) → `{base}/{experienceProfilesPath}[/{id}]` (v1
//                      `v2/organizations/…/profiles`, v2 `v3/spaces/…/profiles`) plus the query;
//                      path segments percent-encoded.
//     profileUpsertRequest({profileId?, events, headers?}) → {url, method: "POST", headers, body}
//                      the profile upsert to send: `Content-Type: text/plain` (see plainText),
//                      body `{"events": [...], "options": {"features": [...]}}`; update
//                      (`/profiles/{id}`) when `profileId` is a non-empty string, create
//                      otherwise; `headers` are extra request headers (e.g. `X-Force-IP` for a
//                      server's visitor address). Throws a TypeError for an empty event array.
//     profileAnswerOutcome(status, headers, bodyText) → outcome   what an answer to that request
//                      means: `headers` an object (names in any case; the host reads
//                      `Retry-After` itself). Outcomes (core/api-response.js): {ok: true,
//                      status, data: {profile, selectedOptimizations, changes}, ignoredChanges}
//                      on a 2xx with a valid envelope; {ok: false, kind: "invalid", …} on a 2xx
//                      whose body is not a valid envelope (the events reached the API:
//                      delivered, not retried); otherwise the status's kind in `statusKinds`
//                      (with the API's `code` from a v2 error envelope).
//     failureOutcome(message) → {ok: false, kind: "retry", status: 0, reason}   the
//                      outcome of that request when the host's transport failed with `message`.
//   __optimization.experienceApi = {DEFAULT_BASE_URL, DEFAULT_FEATURES, parseResponse(text),
//       applyOptimizationData(state, data)}
//     parseResponse(text, apiVersion?) → {data, ignoredChanges}; throws an Error naming what is
//                      wrong. The envelope's `error` must be null/absent or, in v1, a boolean, in
//                      v2 an object with a string `code`; it needs `data.profile` (an object with a string `id`),
//                      `data.experiences` (selections: string experienceId, number variantIndex,
//                      object variants, boolean-or-absent sticky; parsed copies always carry
//                      `sticky`, unknown keys stripped) and `data.changes`, the union of
//                      "Variable" ({key, value, meta: {experienceId, variantIndex}}: custom
//                      flags), "Experience" and "Fragment" ({id, variantId, meta: {optimizationId,
//                      variantIndex}}: the selected variant of an Experiences entity, carried
//                      through to the caller; flags never read them). A change of any other
//                      `type` is dropped on its own and counted in `ignoredChanges`; a malformed
//                      change of a known type fails the envelope.
//     applyOptimizationData(state, data) → undefined   runs the state interceptors
//                      (`__optimization.applyInterceptors` or `stateInterceptors.apply`, when
//                      present) on {profile, selectedOptimizations, changes}, then in ONE state
//                      write sets each key that is present and not deep-equal to the current value,
//                      plus experienceRequestState {status: "success"}.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/experience-api.js', {
    provides: ['createExperienceApi', 'experienceApi'],
    uses: ['apiResponse', 'applyInterceptors', 'createResponse', 'stateInterceptors'],
  });

  var DEFAULT_BASE_URL = 'https://experience.ninetailed.co/';
  var DEFAULT_FEATURES = Object.freeze(['ip-enrichment', 'location']);
  var DATA_KEYS = ['changes', 'profile', 'selectedOptimizations'];
  var hasOwn = Object.prototype.hasOwnProperty;

  function isRecord(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  }

  function isString(value) {
    return typeof value === 'string';
  }

  function isNumber(value) {
    return typeof value === 'number' && isFinite(value);
  }

  // ---- response envelope ------------------------------------------------------------------------

  function invalid(text) {
    return new Error('Experience API response is invalid: ' + text + '.');
  }

  function parseSelection(value, index) {
    if (!isRecord(value) || !isString(value.experienceId) || !isNumber(value.variantIndex) || !isRecord(value.variants)) {
      throw invalid('data.experiences[' + index + '] is not a selected optimization');
    }
    if (value.sticky !== undefined && typeof value.sticky !== 'boolean') {
      throw invalid('data.experiences[' + index + '].sticky is not a boolean');
    }
    return {
      experienceId: value.experienceId,
      variantIndex: value.variantIndex,
      variants: value.variants,
      sticky: value.sticky === true,
    };
  }

  function isChangeValue(value) {
    var type = typeof value;
    return value === null || type === 'string' || type === 'boolean' || (type === 'number' && isFinite(value)) || type === 'object';
  }

  // An Experience or Fragment change (API v2): the selected variant of an Experiences entity.
  function parseEntityChange(value, index) {
    var meta = value.meta;
    if (!isString(value.id) || !isString(value.variantId) || !isRecord(meta) || !isString(meta.optimizationId) ||
      !isNumber(meta.variantIndex)) {
      throw invalid('data.changes[' + index + '] is not an ' + value.type + ' change');
    }
    return {
      type: value.type,
      id: value.id,
      variantId: value.variantId,
      meta: { optimizationId: meta.optimizationId, variantIndex: meta.variantIndex },
    };
  }

  function parseChange(value, index) {
    if (!isRecord(value)) throw invalid('data.changes[' + index + '] is not an object');
    if (value.type === 'Experience' || value.type === 'Fragment') return parseEntityChange(value, index);
    if (value.type !== 'Variable') return undefined;
    var meta = value.meta;
    if (!isString(value.key) || !hasOwn.call(value, 'value') || !isChangeValue(value.value) || !isRecord(meta) ||
      !isString(meta.experienceId) || !isNumber(meta.variantIndex)) {
      throw invalid('data.changes[' + index + '] is not a Variable change');
    }
    return {
      key: value.key,
      type: 'Variable',
      value: value.value,
      meta: { experienceId: meta.experienceId, variantIndex: meta.variantIndex },
    };
  }

  // The envelope's `error`: v1 `boolean | null`, v2 `{code: string} | null` (absent counts as null).
  function checkEnvelopeError(error, apiVersion) {
    if (error === undefined || error === null) return;
    if (apiVersion === 'v2') {
      if (!isRecord(error) || !isString(error.code)) throw invalid('"error" is neither null nor an {code} object');
    } else if (typeof error !== 'boolean') {
      throw invalid('"error" is neither null nor a boolean');
    }
  }

  function parseResponse(text, apiVersion) {
    var body;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw invalid('the body is not JSON');
    }
    if (!isRecord(body) || !isRecord(body.data)) throw invalid('it has no "data" object');
    checkEnvelopeError(body.error, apiVersion);
    var data = body.data;
    if (!isRecord(data.profile) || !isString(data.profile.id)) throw invalid('data.profile is not a profile with a string "id"');
    if (!Array.isArray(data.experiences)) throw invalid('data.experiences is not an array');
    if (!Array.isArray(data.changes)) throw invalid('data.changes is not an array');
    var selections = data.experiences.map(parseSelection);
    var changes = [];
    var ignored = 0;
    data.changes.forEach(function (value, index) {
      var change = parseChange(value, index);
      if (change === undefined) ignored++;
      else changes.push(change);
    });
    return {
      data: { changes: changes, profile: data.profile, selectedOptimizations: selections },
      ignoredChanges: ignored,
    };
  }

  // ---- state application ------------------------------------------------------------

  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    var keysA = Object.keys(a);
    var keysB = Object.keys(b);
    if (keysA.length !== keysB.length) return false;
    for (var i = 0; i < keysA.length; i++) {
      if (!hasOwn.call(b, keysA[i]) || !deepEqual(a[keysA[i]], b[keysA[i]])) return false;
    }
    return true;
  }

  // The interceptor registry belongs to core/state-interceptors.js; it may be absent.
  function runStateInterceptors(value) {
    var result;
    if (typeof ns.applyInterceptors === 'function') result = ns.applyInterceptors(value);
    else if (ns.stateInterceptors && typeof ns.stateInterceptors.apply === 'function') result = ns.stateInterceptors.apply(value);
    else return value;
    return isRecord(result) ? result : value;
  }

  function applyOptimizationData(state, data) {
    var intercepted = runStateInterceptors({
      profile: data.profile,
      selectedOptimizations: data.selectedOptimizations,
      changes: data.changes,
    });
    var current = state.get();
    var patch = {};
    DATA_KEYS.forEach(function (key) {
      if (hasOwn.call(intercepted, key) && !deepEqual(current[key], intercepted[key])) patch[key] = intercepted[key];
    });
    patch.experienceRequestState = { status: 'success' };
    state.set(patch);
  }

  // ---- client -----------------------------------------------------------------------------------

  function createExperienceApi(options) {
    var settings = isRecord(options) ? options : {};
    var http = ns.apiResponse;
    var baseUrl = isString(settings.baseUrl) && settings.baseUrl.length > 0 ? settings.baseUrl : DEFAULT_BASE_URL;
    var clientId = String(settings.clientId);
    var apiVersion = http.resolveApiVersion(settings.apiVersion);
    var environment = isString(settings.environment) && settings.environment.length > 0 ? settings.environment : http.defaultEnvironment(apiVersion);
    var features = Array.isArray(settings.enabledFeatures) && settings.enabledFeatures.length > 0
      ? settings.enabledFeatures.slice() : DEFAULT_FEATURES.slice();
    var preflight = settings.preflight === true;
    var getLocale = typeof settings.getLocale === 'function' ? settings.getLocale : function () { return undefined; };

    var plainText = settings.plainText !== false;
    var statusKinds = settings.statusKinds;

    function query() {
      var items = [];
      var locale = getLocale();
      if (isString(locale) && locale.length > 0) items.push('locale=' + encodeURIComponent(locale));
      if (preflight) items.push('type=preflight');
      return items.length > 0 ? '?' + items.join('&') : '';
    }

    function profilePath(profileId) {
      var path = http.experienceProfilesPath(apiVersion, clientId, environment);
      return isString(profileId) && profileId.length > 0 ? path + '/' + encodeURIComponent(profileId) : path;
    }

    function profilesUrl(profileId) {
      return http.joinUrl(baseUrl, profilePath(profileId)) + query();
    }

    function parseProfileAnswer(text) {
      var parsed = parseResponse(text, apiVersion);
      return { data: parsed.data, ignoredChanges: parsed.ignoredChanges };
    }

    // The profile upsert as a request to send: {url, method: "POST", headers, body: JSON text}.
    function profileUpsertRequest(request) {
      var input = isRecord(request) ? request : {};
      if (!Array.isArray(input.events) || input.events.length === 0) {
        throw new TypeError('An Experience API request needs at least one event.');
      }
      var headers = { 'Content-Type': plainText ? 'text/plain' : 'application/json' };
      if (isRecord(input.headers)) {
        Object.keys(input.headers).forEach(function (name) {
          if (isString(input.headers[name])) headers[name] = input.headers[name];
        });
      }
      return {
        url: profilesUrl(input.profileId), method: 'POST', headers: headers,
        body: JSON.stringify({ events: input.events, options: { features: features } }),
      };
    }

    // The outcome of an answer to profileUpsertRequest's request: `status`, `headers` (an
    // object, names in any case) and the body text.
    function profileAnswerOutcome(status, headers, text) {
      var response = ns.createResponse({ status: status, headers: headers });
      if (!response.ok) {
        var outcome = http.outcomeOfStatus('Experience', response, statusKinds);
        var code = http.errorCodeOf(text);
        if (code !== undefined) outcome.code = code;
        return outcome;
      }
      try {
        return Object.assign({ ok: true, status: status }, parseProfileAnswer(text));
      } catch (error) {
        return { ok: false, kind: 'invalid', status: status, reason: error.message };
      }
    }

    // The outcome of a request that got no answer (the host's transport failed with `message`).
    function failureOutcome(message) {
      return http.outcomeOfError('Experience', new Error(String(message)));
    }

    return {
      profilesUrl: profilesUrl, profileUpsertRequest: profileUpsertRequest, profileAnswerOutcome: profileAnswerOutcome, failureOutcome: failureOutcome,
      features: features.slice(),
    };
  }

  ns.createExperienceApi = createExperienceApi;
  ns.experienceApi = Object.freeze({
    DEFAULT_BASE_URL: DEFAULT_BASE_URL,
    DEFAULT_FEATURES: DEFAULT_FEATURES,
    parseResponse: parseResponse,
    applyOptimizationData: applyOptimizationData,
  });
})();
