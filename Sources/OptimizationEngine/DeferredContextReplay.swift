import JavaScriptHost
import Logging
import OptimizationContent
import OptimizationJSON

/// Replays, into one engine's context registry, the registrations of resolves its runtime served
/// from the ``ResolutionMemo`` (see there). Installed as the engine's entry hook, so it runs with
/// the engine lock held before anything else enters JavaScript.
package final class DeferredContextReplay: Sendable {
    private struct PairKey: Hashable {
        let entry: Int
        let selections: Int
    }

    private let registerDeferred: JavaScriptFunction
    private let documents: DocumentTransfer
    private let memo: ResolutionMemo.Storage
    private let logger: Logger

    package init(registerDeferred: JavaScriptFunction, documents: DocumentTransfer, memo: ResolutionMemo.Storage, logger: Logger) {
        self.registerDeferred = registerDeferred
        self.documents = documents
        self.memo = memo
        self.logger = logger
    }

    /// Registers what is pending, in order and at the times noted; returns at once when nothing
    /// is. A failure is logged (without visitor data) and drops those registrations: their views
    /// are then sent without the optional `optimization` enrichment of the local event stream.
    package func run() {
        let pending = memo.state.withLock { $0.takeDeferred() }
        guard !pending.isEmpty else { return }
        var pairs: [(entry: ContentfulEntry, selections: SelectedOptimizations?)] = []
        var pairIndex: [PairKey: Int] = [:]
        // The batch text is written directly: `{"pairs":[[e,s],…],"records":[p,t,"id",…]}`.
        var records = ""
        records.reserveCapacity(pending.count * 64)
        for registration in pending {
            let key = PairKey(entry: registration.pair.entry.handle, selections: registration.pair.selections?.handle ?? 0)
            let index: Int
            if let known = pairIndex[key] {
                index = known
            } else {
                index = pairs.count
                pairIndex[key] = index
                pairs.append((registration.pair.entry, registration.pair.selections))
            }
            if !records.isEmpty { records += "," }
            records += String(index)
            records += ","
            records += (JSONNumber(registration.time) ?? JSONNumber(0)).text
            records += ","
            JSONValue.appendStringLiteral(registration.id, to: &records)
        }
        let pairTexts = pairs.map { pair in
            "[\(pair.entry.handle),\(pair.selections.map { String($0.handle) } ?? "null")]"
        }
        let batch = "{\"pairs\":[" + pairTexts.joined(separator: ",") + "],\"records\":[" + records + "]}"
        do {
            // Each round hands over at most one missing document; the pairs have two each.
            for _ in 0...(2 * pairs.count) {
                let result = try registerDeferred.call(.json(batch)).stringValue ?? ""
                if result.isEmpty { return }
                guard result.count > 2, let index = Int(result.dropFirst(2)), pairs.indices.contains(index) else {
                    throw OptimizationError.bridgeError("unexpected registerDeferred answer \(result.prefix(40))")
                }
                if result.hasPrefix("?e") {
                    try documents.handOver(pairs[index].entry)
                } else if result.hasPrefix("?s"), let selections = pairs[index].selections {
                    try documents.handOver(selections)
                } else {
                    throw OptimizationError.bridgeError("unexpected registerDeferred answer \(result.prefix(40))")
                }
            }
            throw OptimizationError.bridgeError("registerDeferred kept asking for documents")
        } catch {
            logger.error("optimization contexts of cached resolutions could not be registered",
                         metadata: ["error": "\(error)", "count": "\(pending.count)"])
        }
    }
}
