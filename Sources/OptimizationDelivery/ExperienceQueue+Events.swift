import OptimizationJSON

extension ExperienceQueue {
    /// The Experience queue's events in memory: one line, in insertion order (a flight sends it
    /// all). Under the queue's lock.
    struct Events: DeliveryEvents {
        /// What an accepted event brings.
        struct Entry: Sendable {
            let messageId: String
            let eventJSON: String
        }

        var items: [Queued] = []

        var count: Int { items.count }

        mutating func append(_ entry: Entry, id: UInt64, sequence: UInt64?) {
            items.append(Queued(id: id, messageId: entry.messageId, eventJSON: entry.eventJSON, sequence: sequence))
        }

        mutating func removeAll(where shouldRemove: (Queued) -> Bool) -> [Queued] {
            var removed: [Queued] = []
            items.removeAll { queued in
                guard shouldRemove(queued) else { return false }
                removed.append(queued)
                return true
            }
            return removed
        }

        mutating func removeOldest(sparing: Set<UInt64>) -> Queued? {
            guard let index = items.firstIndex(where: { !sparing.contains($0.id) }) else { return nil }
            return items.remove(at: index)
        }

        mutating func removeEverything() -> [Queued] {
            defer { items.removeAll() }
            return items
        }

        mutating func loaded() {}

        static func entry(stored record: OutboxRecord) -> Entry? {
            Entry(messageId: record.messageId, eventJSON: String(decoding: record.payload, as: UTF8.self))
        }

        static func discarded(stored record: OutboxRecord) -> Queued {
            Queued(id: 0, messageId: record.messageId, eventJSON: "{}", sequence: record.sequence)
        }
    }
}

extension ExperienceQueue.Queued: DeliveryItem {
    /// The event as a value, for reports that list dropped events.
    var eventValue: JSONValue {
        (try? JSONValue(jsonText: eventJSON)) ?? .object([:])
    }
}
