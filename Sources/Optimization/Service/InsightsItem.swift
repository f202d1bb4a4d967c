/// One Insights event on its way from a request's engine to the service's delivery queue: the
/// `{profile, event}` object exactly as the engine serialized it, and the profile id that picks
/// its delivery shard (every event of a profile goes to the same shard, so a profile's events
/// stay in order and are batched together).
struct InsightsItem: Sendable {
    /// `profile.id` of the item ("" when it has none).
    var profileId: String
    /// The item's JSON text, `{"profile": …, "event": …}`.
    var jsonText: String
}
