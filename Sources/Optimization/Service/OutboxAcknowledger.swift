import JavaScriptHost

/// What an answered Insights request means for the durable outbox (docs/outbox.md): a 2xx
/// delivered the events it carried, another 4xx dropped them for good (the queue does not retry
/// them), 401/403/404 disabled delivery (the queue discards everything it holds); those are
/// acknowledged. Retries (408/429/5xx, transport errors) acknowledge nothing.
enum OutboxAcknowledger {
    static func acknowledge(_ request: FetchRequest, outcome: String, in outbox: DurableOutbox) {
        switch outcome {
        case "success", "drop":
            outbox.acknowledge(messageIds: messageIds(in: request.body))
        case "disable":
            try? outbox.purge()
        default:
            break
        }
    }

    /// The `messageId`s of an Insights body (`[{profile, events: [...]}, …]`).
    static func messageIds(in body: String?) -> [String] {
        guard let body, let batches = try? JSONValue(jsonText: body).arrayValue else { return [] }
        return batches.flatMap { batch in
            (batch["events"]?.arrayValue ?? []).compactMap { $0["messageId"]?.stringValue }
        }
    }
}
