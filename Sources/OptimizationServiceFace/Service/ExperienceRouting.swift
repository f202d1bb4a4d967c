import OptimizationJSON
import OrderedCollections

/// Which service calls go to the Experience API, as the shared core states it in its configure
/// answer: the methods whose event always goes there (`experienceMethods`), and the calls whose
/// payload sends them there (`experiencePayloadRoutes`: a `trackView` whose `sticky` is `true`).
///
/// Swift needs the answer before the engine builds the call (it waits for the profile's earlier
/// call and asks the Experience circuit first), so it reads the rule as data rather than writing
/// it a second time. Immutable; `Sendable`.
struct ExperienceRouting: Sendable, Equatable {
    /// Where a call goes.
    enum Route: Sendable, Equatable {
        /// Only to the Insights API (or nowhere): no profile wait, no circuit.
        case insights
        /// To the Experience API, by its method.
        case experience
        /// To the Experience API, by its payload; the engine gets the request's whole profile,
        /// which the call's Insights event falls back to.
        case experienceByPayload
    }

    /// One rule of `experiencePayloadRoutes`: `method`'s call goes to the Experience API when
    /// its payload's `field` equals `equals`.
    struct PayloadRoute: Sendable, Equatable {
        let method: String
        let field: String
        let equals: JSONValue
    }

    /// The methods whose event always goes to the Experience API.
    let methods: Set<String>
    /// The calls whose payload sends them to the Experience API.
    let payloadRoutes: [PayloadRoute]

    /// No call goes to the Experience API (before the first engine started).
    static let none = ExperienceRouting(methods: [], payloadRoutes: [])

    init(methods: Set<String>, payloadRoutes: [PayloadRoute]) {
        self.methods = methods
        self.payloadRoutes = payloadRoutes
    }

    /// Reads the shared core's configure answer (`{"experienceMethods": [...],
    /// "experiencePayloadRoutes": [{method, field, equals}]}`); nil when either list is missing
    /// or malformed.
    init?(configureAnswer answer: JSONValue) {
        guard let methods = answer["experienceMethods"]?.arrayValue,
              let routes = answer["experiencePayloadRoutes"]?.arrayValue
        else { return nil }
        var names = Set<String>()
        for method in methods {
            guard let name = method.stringValue else { return nil }
            names.insert(name)
        }
        var payloadRoutes: [PayloadRoute] = []
        for route in routes {
            guard let method = route["method"]?.stringValue, let field = route["field"]?.stringValue,
                  let equals = route["equals"]
            else { return nil }
            payloadRoutes.append(PayloadRoute(method: method, field: field, equals: equals))
        }
        self.init(methods: names, payloadRoutes: payloadRoutes)
    }

    /// Where the call of `method` with `payload` goes.
    func route(_ method: String, payload: OrderedDictionary<String, JSONValue>) -> Route {
        for route in payloadRoutes where route.method == method && payload[route.field] == route.equals {
            return .experienceByPayload
        }
        return methods.contains(method) ? .experience : .insights
    }
}
