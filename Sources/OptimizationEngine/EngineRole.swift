import OptimizationDelivery
import OptimizationJSON

/// Which face of JSRuntime an ``OptimizationRuntime`` loads and starts: the scripts it
/// evaluates, the call that starts it, and where its resolution functions live.
package enum EngineRole: Sendable {
    /// One visitor (the single-visitor client): the client scripts and the core scripts they
    /// need (``EmbeddedJSRuntime/clientScripts``), started with `__bridge.initialize(configuration)`
    /// and torn down with `__bridge.destroy()`.
    case client(configuration: JSONValue)
    /// A request-scoped engine of a service: the service scripts and the core scripts they need
    /// (``EmbeddedJSRuntime/serviceScripts``), started with `__service.configure(configuration)`.
    /// It holds no visitor and has no `__bridge`; its resolution registers contexts in the
    /// engine's own registry.
    case service(configuration: JSONValue)

    /// The JavaScript functions an engine's resolution calls (``DocumentTransfer``, the resolve
    /// path and ``DeferredContextReplay``).
    package struct ResolutionFunctions: Sendable {
        package let prepareEntry: BridgeFunction
        package let prepareSelections: BridgeFunction
        package let adoptEntry: BridgeFunction
        package let adoptSelections: BridgeFunction
        package let resolvePrepared: BridgeFunction
        package let registerDeferred: BridgeFunction
    }

    /// The embedded scripts this role loads, in load order.
    package var scripts: [EmbeddedScript] {
        switch self {
        case .client: EmbeddedJSRuntime.clientScripts
        case .service: EmbeddedJSRuntime.serviceScripts
        }
    }

    /// The configuration handed to ``start``. A service's also carries the host's delivery
    /// outcome of each HTTP status (`statusKinds`, ``DeliveryOutcome/statusKindTable``): the kind
    /// of an Experience answer the engine interprets.
    package var configuration: JSONValue {
        switch self {
        case .client(let configuration):
            return configuration
        case .service(let configuration):
            guard case .object(var members) = configuration else { return configuration }
            members["statusKinds"] = DeliveryOutcome.statusKindTable
            return .object(members)
        }
    }

    /// The call that starts an engine with ``configuration``; its exception is a configuration
    /// error.
    package var start: BridgeFunction {
        switch self {
        case .client: BridgeContract.Visitor.initialize
        case .service: BridgeContract.Service.configure
        }
    }

    /// What ``OptimizationRuntime/close(cancellingFetches:)`` calls before releasing the engine:
    /// the client's `destroy` (final flushes); nothing for a service engine, whose delivery is
    /// closed by its owner.
    package var teardown: BridgeFunction? {
        switch self {
        case .client: BridgeContract.Visitor.destroy
        case .service: nil
        }
    }

    /// The resolution functions of this role's face.
    package var resolution: ResolutionFunctions {
        switch self {
        case .client:
            ResolutionFunctions(
                prepareEntry: BridgeContract.Visitor.prepareEntry, prepareSelections: BridgeContract.Visitor.prepareSelections,
                adoptEntry: BridgeContract.Visitor.adoptEntry, adoptSelections: BridgeContract.Visitor.adoptSelections,
                resolvePrepared: BridgeContract.Visitor.resolvePrepared, registerDeferred: BridgeContract.Visitor.registerDeferred)
        case .service:
            ResolutionFunctions(
                prepareEntry: BridgeContract.Service.prepareEntry, prepareSelections: BridgeContract.Service.prepareSelections,
                adoptEntry: BridgeContract.Service.adoptEntry, adoptSelections: BridgeContract.Service.adoptSelections,
                resolvePrepared: BridgeContract.Service.resolvePrepared, registerDeferred: BridgeContract.Service.registerDeferred)
        }
    }
}
