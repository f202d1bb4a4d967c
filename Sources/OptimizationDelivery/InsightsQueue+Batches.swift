import OptimizationJSON
import OrderedCollections

extension InsightsQueue {
    /// The Insights queue's events in memory: one batch per profile id (profiles in the order
    /// their first event arrived, each profile's events in order), and the events held for the
    /// visitor's first profile. Under the queue's lock.
    struct Batches: DeliveryEvents {
        /// What an accepted event brings: the event, and whether it waits for the visitor's
        /// first profile.
        struct Entry: Sendable {
            var event: InsightsEvent
            var held: Bool
        }

        var buckets: OrderedDictionary<String, Bucket> = [:]
        /// Events accepted for the visitor while no profile exists (a client before its first
        /// Experience answer); they join the first profile (``visitorProfileChanged(_:)``).
        var held: [Queued] = []
        /// The visitor's current profile (a client): `id` and the object's JSON text.
        var visitorProfile: (id: String, json: String)?
        /// Events in memory, held ones included.
        private(set) var count = 0

        /// Events a flight may send (not held).
        var sendable: Int { count - held.count }

        mutating func append(_ entry: Entry, id: UInt64, sequence: UInt64?) {
            append(Queued(id: id, event: entry.event, sequence: sequence), held: entry.held)
        }

        private mutating func append(_ queued: Queued, held: Bool) {
            count += 1
            if held {
                self.held.append(queued)
                return
            }
            let profileId = queued.event.profileId
            if buckets[profileId] == nil {
                buckets[profileId] = Bucket(profileJSON: queued.event.profileJSON, events: [queued])
            } else {
                buckets[profileId]!.profileJSON = queued.event.profileJSON
                buckets[profileId]!.events.append(queued)
            }
        }

        /// Moves the held events into the batch of the visitor's profile, once one exists.
        mutating func adoptHeld() {
            guard !held.isEmpty, let profile = visitorProfile else { return }
            let adopted = held
            held.removeAll()
            count -= adopted.count
            for queued in adopted {
                var event = queued.event
                event.profileId = profile.id
                event.profileJSON = profile.json
                append(Queued(id: queued.id, event: event, sequence: queued.sequence), held: false)
            }
        }

        mutating func loaded() {
            adoptHeld()
        }

        /// Held events first, then each profile's (a profile left without events is removed).
        mutating func removeAll(where shouldRemove: (Queued) -> Bool) -> [Queued] {
            var gone: [Queued] = []
            held.removeAll { queued in
                guard shouldRemove(queued) else { return false }
                gone.append(queued)
                return true
            }
            for key in buckets.keys {
                buckets[key]!.events.removeAll { queued in
                    guard shouldRemove(queued) else { return false }
                    gone.append(queued)
                    return true
                }
                if buckets[key]!.events.isEmpty { buckets.removeValue(forKey: key) }
            }
            count -= gone.count
            return gone
        }

        /// Removes exactly these batches' events where they are still queued (erasure may have
        /// taken some).
        mutating func remove(_ batches: [Bucket]) -> [Queued] {
            var removed: [Queued] = []
            for batch in batches {
                guard let key = batch.events.first?.event.profileId, var bucket = buckets[key] else { continue }
                let sent = Set(batch.events.map(\.id))
                bucket.events.removeAll { queued in
                    guard sent.contains(queued.id) else { return false }
                    removed.append(queued)
                    return true
                }
                buckets[key] = bucket.events.isEmpty ? nil : bucket
            }
            count -= removed.count
            return removed
        }

        /// Removes one profile's batch. - Returns: how many events it held.
        mutating func removeProfile(_ profileId: String) -> Int {
            guard let bucket = buckets.removeValue(forKey: profileId) else { return 0 }
            count -= bucket.events.count
            return bucket.events.count
        }

        /// The oldest held event, else the oldest queued event that is not spared (in flight).
        mutating func removeOldest(sparing: Set<UInt64>) -> Queued? {
            if !held.isEmpty {
                count -= 1
                return held.removeFirst()
            }
            for key in buckets.keys {
                guard let index = buckets[key]!.events.firstIndex(where: { !sparing.contains($0.id) }) else { continue }
                let dropped = buckets[key]!.events.remove(at: index)
                if buckets[key]!.events.isEmpty { buckets.removeValue(forKey: key) }
                count -= 1
                return dropped
            }
            return nil
        }

        mutating func removeEverything() -> [Queued] {
            let everything = held + buckets.values.flatMap(\.events)
            held.removeAll()
            buckets.removeAll()
            count = 0
            return everything
        }

        static func entry(stored record: OutboxRecord) -> Entry? {
            InsightsEvent.stored(String(decoding: record.payload, as: UTF8.self)).map { Entry(event: $0.event, held: $0.held) }
        }

        static func discarded(stored record: OutboxRecord) -> Queued {
            let event = InsightsEvent.stored(String(decoding: record.payload, as: UTF8.self))?.event
                ?? InsightsEvent(profileId: "", profileJSON: "{}", messageId: record.messageId, consent: false, eventJSON: "{}")
            return Queued(id: 0, event: event, sequence: record.sequence)
        }
    }
}

extension InsightsQueue.Queued: DeliveryItem {
    var messageId: String { event.messageId }
    var eventValue: JSONValue { event.eventValue }
}
