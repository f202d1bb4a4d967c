// bridge/insights-api.js
// Contract: the Insights API client.
//   __optimization.createInsightsApi({clientId, environment, apiVersion?, baseUrl?, host?}) → {sendBatches, eventsUrl}
//     baseUrl        falsy ⇒ DEFAULT_BASE_URL (`__optimization.insightsApi.DEFAULT_BASE_URL`),
//                    joined with or without a trailing slash.
//     eventsUrl      `{base}/{insightsEventsPath}`: v1 `v1/organizations/{clientId}/environments/{env}/events`,
//                    v2 `v2/spaces/{spaceId}/environments/{env}/events` (core/api-response.js).
//     sendBatches(batches) → Promise<outcome>   POST with `Content-Type: application/json` and the
//                    body `[{profile, events}, …]` (one element per profile id). Never rejects for
//                    HTTP or transport failures (outcomes of core/api-response.js; any 2xx is
//                    {ok: true, status}, the body is not read); rejects with a TypeError only for
//                    an empty batch list.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('bridge/insights-api.js', {
    provides: ['createInsightsApi', 'insightsApi'],
    uses: ['apiResponse', 'host'],
  });

  var DEFAULT_BASE_URL = 'https://ingest.insights.ninetailed.co/';

  function createInsightsApi(options) {
    var settings = options !== null && typeof options === 'object' ? options : {};
    var host = settings.host || ns.host;
    var http = ns.apiResponse;
    var baseUrl = typeof settings.baseUrl === 'string' && settings.baseUrl.length > 0 ? settings.baseUrl : DEFAULT_BASE_URL;
    var url = http.joinUrl(baseUrl, http.insightsEventsPath(settings.apiVersion, settings.clientId, settings.environment));

    function sendBatches(batches) {
      if (!Array.isArray(batches) || batches.length === 0) {
        return Promise.reject(new TypeError('An Insights API request needs at least one batch.'));
      }
      var body = JSON.stringify(batches);
      return host.fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body }).then(function (response) {
        return response.ok ? { ok: true, status: response.status } : http.outcomeOfResponse('Insights', response, host.now());
      }, function (error) {
        return http.outcomeOfError('Insights', error);
      });
    }

    return { sendBatches: sendBatches, eventsUrl: url };
  }

  ns.createInsightsApi = createInsightsApi;
  ns.insightsApi = Object.freeze({ DEFAULT_BASE_URL: DEFAULT_BASE_URL });
})();
