import OptimizationContent

/// What one request rendered: baseline entry id → rendered entry id (`""` for an empty
/// variant), and the cache key derived from it (``OptimizationRequest/renderCacheKey``).
///
/// The key is `"ctfl-render:v1:"` + 16 hex digits of a 64-bit FNV-1a hash over the locale and
/// the sorted `baseline=rendered` pairs. It depends on nothing else: two visitors who rendered
/// the same variants in the same locale share it, whatever else their selections or profiles
/// hold. (The reference fingerprints the whole selection list instead, so visitors selected
/// into experiences that are not on the page split the cache for nothing.)
struct RenderedVariants: Sendable, Equatable {
    private(set) var variants: [String: String] = [:]

    mutating func record(baseline: String, resolved: ResolvedOptimizedEntry) {
        variants[baseline] = resolved.isEmptyVariant ? "" : (resolved.entryId ?? baseline)
    }

    func cacheKey(locale: String) -> String {
        var text = "locale=" + locale
        for (baseline, rendered) in variants.sorted(by: { $0.key < $1.key }) {
            text += "\n" + baseline + "=" + rendered
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "ctfl-render:v1:" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}
