// benchmarks/json-call-baseline.js
// Contract: `__optimization.jsonCallBaseline(entryText, selectionsText)` → JSON text
// {entry, selectedOptimization?, isEmptyVariant?: true}. The per-call JSON pattern that
// `optimization bench` compares the engine against: both documents arrive as JSON text and are
// parsed here (`JSON.parse`), resolved with the shared resolver, and the result is stringified
// (`JSON.stringify`); nothing is cached between calls. A single entry or a CDA collection
// (items[0] is the baseline); `selectionsText` may be "null". Throws a SyntaxError on invalid JSON.
// For measurement only: never loaded into a production engine (it is not in JSRuntime/manifest.json);
// the benchmark loads it into its own engine. Hosts resolve through __bridge.resolvePrepared.
(function () {
  'use strict';
  var ns = globalThis.__optimization.declare('benchmarks/json-call-baseline.js', { provides: ['jsonCallBaseline'], uses: ['resolver'] });
  var resolver = ns.resolver;

  ns.jsonCallBaseline = function jsonCallBaseline(entryText, selectionsText) {
    var result = resolver.resolveOptimizedEntry(JSON.parse(entryText), JSON.parse(selectionsText));
    var output = { entry: result.entry };
    if (result.selectedOptimization !== undefined) output.selectedOptimization = result.selectedOptimization;
    if (result.isEmptyVariant) output.isEmptyVariant = true;
    return JSON.stringify(output);
  };
})();
