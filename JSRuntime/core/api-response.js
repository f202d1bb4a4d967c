// core/api-response.js
// Contract: `__optimization.apiResponse`, what the Experience and Insights clients share:
// URL joining, the API routes and the delivery outcome of an HTTP answer. Pure functions;
// nothing here sends or logs. The kind of each HTTP status is the host's (Swift
// `DeliveryOutcome.kind(ofStatus:)`, which delivers): the host hands its table over at
// configure time (`statusKinds`), and nothing here classifies a status itself.
//   joinUrl(base, path) → string      trailing slashes of `base` and leading slashes of `path` are
//                                     trimmed and exactly one "/" is put between them, so a base
//                                     works with or without a trailing slash.
//   readStatusKinds(value, fail) → {fallback, statuses}   the host's table of status kinds:
//                                     `fallback` and each value of `statuses` ("<status>" →
//                                     kind) one of "success", "retry", "drop", "disable"; a
//                                     frozen copy. Throws `fail(text)` (text names what is
//                                     wrong) for anything else.
//   kindOf(statusKinds, status) → kind   `statuses[status]`, else `fallback`.
//   outcomeOfStatus(apiName, response, statusKinds) → outcome for a non-2xx response (see
//                                     below), of the status's kind in `statusKinds`; throws a
//                                     TypeError without a table. How long to wait before a retry
//                                     (`Retry-After`, backoff) is the host's: nothing here reads it.
//   errorCodeOf(text) → string | undefined   the `code` of a body text (at most 64 KiB) that is
//                                     an API envelope whose `error` is `{code: string}` (v2; a
//                                     v1 envelope's boolean `error` carries none).
//   API versions: resolveApiVersion(value) → "v1" | "v2" ("v2" only when asked for);
//     defaultEnvironment(version) → "main" (v1) | "master" (v2);
//     experienceProfilesPath(version, tenantId, environment) → "v2/organizations/{id}/environments/
//       {env}/profiles" (v1) | "v3/spaces/{id}/environments/{env}/profiles" (v2);
//     segments percent-encoded; the tenant is the client id (v1) or the space id (v2).
//   readTenant(config, fail) → {clientId, apiVersion, environment}   the tenant keys of a bridge or
//     service configuration: `spaceId` (v2) or `clientId` (v1), a string (non-empty when
//     `requireNonEmpty`); both given must be equal. `apiVersion` "v1" | "v2" when given, else "v2"
//     with a `spaceId` and "v1" without. `environment` a string when given; absent or empty ⇒ the
//     version's default. `fail(text)` builds the Error thrown for a wrong key (text names it).
//   outcomeOfError(apiName, error) → {ok: false, kind: "retry", status: 0, reason}
// Outcomes: {ok: true, status, …} | {ok: false, kind: "retry"|"drop"|"disable"|"invalid", status,
// reason}. Reasons name the API and the status, never the URL (paths carry profile ids, and
// visitor data is logged at debug only).
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('core/api-response.js', { provides: ['apiResponse'] });

  function joinUrl(base, path) {
    var left = String(base);
    var right = String(path);
    while (left.length > 0 && left.charAt(left.length - 1) === '/') left = left.slice(0, -1);
    while (right.length > 0 && right.charAt(0) === '/') right = right.slice(1);
    return left + '/' + right;
  }

  var KINDS = Object.freeze(['success', 'retry', 'drop', 'disable']);

  function readStatusKinds(value, fail) {
    var isKind = function (kind) { return KINDS.indexOf(kind) >= 0; };
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !isKind(value.fallback) ||
      value.statuses === null || typeof value.statuses !== 'object' || Array.isArray(value.statuses)) {
      throw fail('"statusKinds" must be {fallback, statuses} of the kinds ' + KINDS.join(', ') + '.');
    }
    var statuses = {};
    Object.keys(value.statuses).forEach(function (status) {
      if (!/^[1-5]\d\d$/.test(status) || !isKind(value.statuses[status])) {
        throw fail('"statusKinds.statuses" must map HTTP statuses to the kinds ' + KINDS.join(', ') + '.');
      }
      statuses[status] = value.statuses[status];
    });
    return Object.freeze({ fallback: value.fallback, statuses: Object.freeze(statuses) });
  }

  function kindOf(statusKinds, status) {
    var kind = statusKinds.statuses[String(status)];
    return kind === undefined ? statusKinds.fallback : kind;
  }

  function messageOf(error) {
    if (error instanceof Error) return error.message;
    return String(error);
  }

  function statusLabel(response) {
    return response.statusText ? response.status + ' ' + response.statusText : String(response.status);
  }

  function outcomeOfStatus(apiName, response, statusKinds) {
    if (statusKinds === null || typeof statusKinds !== 'object') {
      throw new TypeError(apiName + ' API answered ' + response.status + ', and the host handed over no status kinds.');
    }
    var status = response.status;
    var kind = kindOf(statusKinds, status);
    var outcome = { ok: false, kind: kind, status: status, reason: apiName + ' API answered ' + statusLabel(response) };
    if (kind === 'success') return { ok: true, status: status };
    return outcome;
  }

  // `error.code` of a v2 envelope; undefined for anything else.
  function errorCodeOf(text) {
    if (typeof text !== 'string' || text.length === 0 || text.length > 65536) return undefined;
    var envelope;
    try {
      envelope = JSON.parse(text);
    } catch (error) {
      return undefined;
    }
    var error = envelope !== null && typeof envelope === 'object' ? envelope.error : undefined;
    var code = error !== null && typeof error === 'object' ? error.code : undefined;
    return typeof code === 'string' && code.length > 0 ? code : undefined;
  }

  var ROUTES = Object.freeze({
    v1: Object.freeze({ tenant: 'organizations', experience: 'v2', environment: 'main' }),
    v2: Object.freeze({ tenant: 'spaces', experience: 'v3', environment: 'master' }),
  });

  function resolveApiVersion(value) {
    return value === 'v2' ? 'v2' : 'v1';
  }

  function defaultEnvironment(version) {
    return ROUTES[resolveApiVersion(version)].environment;
  }

  function tenantPath(prefix, route, tenantId, environment) {
    return prefix + '/' + route.tenant + '/' + encodeURIComponent(String(tenantId)) + '/environments/' +
      encodeURIComponent(typeof environment === 'string' && environment.length > 0 ? environment : route.environment);
  }

  function experienceProfilesPath(version, tenantId, environment) {
    var route = ROUTES[resolveApiVersion(version)];
    return tenantPath(route.experience, route, tenantId, environment) + '/profiles';
  }

  function readTenant(config, fail, requireNonEmpty) {
    var spaceId = config.spaceId;
    var clientId = config.clientId;
    var accepted = function (value) {
      return typeof value === 'string' && (!requireNonEmpty || value.length > 0);
    };
    if (spaceId !== undefined && spaceId !== null && !accepted(spaceId)) throw fail('"spaceId" must be a ' + (requireNonEmpty ? 'non-empty ' : '') + 'string.');
    if (clientId !== undefined && clientId !== null && !accepted(clientId)) throw fail('"clientId" must be a ' + (requireNonEmpty ? 'non-empty ' : '') + 'string.');
    var hasSpace = accepted(spaceId);
    var hasClient = accepted(clientId);
    if (!hasSpace && !hasClient) throw fail('must include a ' + (requireNonEmpty ? 'non-empty ' : '') + 'string "spaceId" (or the deprecated "clientId").');
    if (hasSpace && hasClient && spaceId !== clientId) throw fail('"spaceId" and "clientId" name different tenants.');
    var version = config.apiVersion;
    if (version !== undefined && version !== null && version !== 'v1' && version !== 'v2') throw fail('"apiVersion" must be "v1" or "v2" when provided.');
    var apiVersion = version === 'v1' || version === 'v2' ? version : hasSpace ? 'v2' : 'v1';
    var environment = config.environment;
    if (environment !== undefined && environment !== null && typeof environment !== 'string') throw fail('"environment" must be a string when provided.');
    return {
      clientId: hasSpace ? spaceId : clientId,
      apiVersion: apiVersion,
      environment: typeof environment === 'string' && environment.length > 0 ? environment : defaultEnvironment(apiVersion),
    };
  }

  function outcomeOfError(apiName, error) {
    return { ok: false, kind: 'retry', status: 0, reason: apiName + ' API request failed: ' + messageOf(error) };
  }

  ns.apiResponse = Object.freeze({
    joinUrl: joinUrl,
    readStatusKinds: readStatusKinds,
    kindOf: kindOf,
    outcomeOfStatus: outcomeOfStatus,
    outcomeOfError: outcomeOfError,
    errorCodeOf: errorCodeOf,
    resolveApiVersion: resolveApiVersion,
    defaultEnvironment: defaultEnvironment,
    experienceProfilesPath: experienceProfilesPath,
    readTenant: readTenant,
  });
})();
