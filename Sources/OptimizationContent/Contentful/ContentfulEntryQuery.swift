import OptimizationJSON
import OptimizationTransport
/// One entries-collection query of a ``ContentfulDeliverySource``: what to select, in which
/// locale. Hashable: it keys the cache and the single-flight table.
struct ContentfulEntryQuery: Hashable, Sendable, CustomStringConvertible {
    enum Selection: Hashable, Sendable {
        /// `sys.id=<id>`.
        case id(String)
        /// `sys.id[in]=<ids>` (one chunk, at most ``ContentfulDeliverySource/idsPerRequest``).
        case ids([String])
        /// `content_type=<type>&fields.<field>=<value>`.
        case field(contentType: String, field: String, value: String)
    }

    var selection: Selection
    /// Nil: the configured locale.
    var locale: String?

    /// The query items, without `include`/`locale` defaults (added by the requester).
    var queryItems: [(String, String)] {
        switch selection {
        case .id(let id): return [("sys.id", id)]
        case .ids(let ids): return [("sys.id[in]", ids.joined(separator: ",")), ("limit", "\(max(ids.count, 1))")]
        case .field(let type, let field, let value): return [("content_type", type), ("fields.\(field)", value), ("limit", "2")]
        }
    }

    var description: String {
        switch selection {
        case .id(let id): return "sys.id=\(id)"
        case .ids(let ids): return "sys.id[in] (\(ids.count) ids)"
        case .field(let type, let field, _): return "content_type=\(type) fields.\(field)"
        }
    }
}
