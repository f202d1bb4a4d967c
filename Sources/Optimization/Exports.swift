// What `import Optimization` brings: the public declarations of every library target below it.
// A target's `public` declarations are exactly what an application may name (the DocC check
// requires each to be documented); what the targets share only among themselves is `package`.
// JavaScriptHost, Swift over JavaScriptCore, is a product of its own and is not re-exported.

// The client face: one visitor per process (OptimizationClient, ExperienceAnswer, merge tags,
// preview, storage).
@_exported import OptimizationClientFace

// The service face: many visitors per process, one request at a time per visitor
// (OptimizationService, OptimizationRequest, RequestOptions, the handoff).
@_exported import OptimizationServiceFace

// The service's shared outbox (SharedOutbox).
@_exported import OptimizationServiceDelivery

// Web framework integration: cookies, signed visitor state, consent choices, replay, webhooks, OFREP.
@_exported import OptimizationWeb

// What both faces share: configuration, OptimizationError, event methods and results, telemetry
// names (OptimizationVocabulary, which OptimizationEngine re-exports), and the engine's state
// and recording (OptimizationState, PersistedState, OptimizationStore, EventRecording).
@_exported import OptimizationVocabulary
@_exported import OptimizationEngine

// Delivery: the policy numbers, what the queues report, the durable outbox and the shared
// outbox's store protocol (the queues themselves are `package`).
@_exported import OptimizationDelivery

// Contentful entries, selections and resolution; the Content Delivery API client, its cache and
// webhooks; view tracking.
@_exported import OptimizationContent

// JSON values in every payload.
@_exported import OptimizationJSON

// HTTP: the transport, its allow-list and errors.
@_exported import OptimizationTransport

// The clock and the transport protocol every layer takes.
@_exported import HostPlatform

// JSON objects, event properties and traits are ordered dictionaries.
@_exported import struct OrderedCollections.OrderedDictionary
