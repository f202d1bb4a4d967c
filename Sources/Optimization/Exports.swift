// What `import Optimization` brings, by symbol: the types an application names. Everything else
// in these targets is internal to the library, however public it is for the targets above it.
// A type listed here brings its members and its extensions from its own target.

// The client face: one visitor per process.
@_exported import struct OptimizationClientFace.ExperienceAnswer
@_exported import enum OptimizationClientFace.ExperienceAnswerError
@_exported import enum OptimizationClientFace.MergeTags
@_exported import struct OptimizationClientFace.MergeTagValues
@_exported import class OptimizationClientFace.OptimizationClient
@_exported import class OptimizationClientFace.FileOptimizationStore
@_exported import class OptimizationClientFace.InMemoryOptimizationStore
@_exported import enum OptimizationClientFace.OptimizationStorage
@_exported import struct OptimizationClientFace.PreviewState

// The service face: many visitors per process, one request at a time per visitor.
@_exported import struct OptimizationServiceFace.OptimizationHandoff
@_exported import struct OptimizationServiceFace.CacheSafetyWarning
@_exported import enum OptimizationServiceFace.OptimizationHandoffError
@_exported import class OptimizationServiceFace.OptimizationRequest
@_exported import class OptimizationServiceFace.OptimizationService
@_exported import struct OptimizationServiceFace.RequestOptions
@_exported import struct OptimizationServiceFace.RequestConsent
@_exported import struct OptimizationServiceDelivery.SharedOutbox

// Web framework integration: cookies, signed visitor state, consent choices, replay, webhooks, OFREP.
@_exported import struct OptimizationWeb.OFREPConfiguration
@_exported import enum OptimizationWeb.OFREPConfigurationError
@_exported import enum OptimizationWeb.OFREPErrorCode
@_exported import class OptimizationWeb.OFREPEvaluator
@_exported import struct OptimizationWeb.OFREPRequest
@_exported import struct OptimizationWeb.OFREPResponse
@_exported import struct OptimizationWeb.SignedValueCodec
@_exported import struct OptimizationWeb.VisitorState
@_exported import struct OptimizationWeb.VisitorStateCodec
@_exported import enum OptimizationWeb.VisitorStateKeyError
@_exported import struct OptimizationWeb.VisitorStateKeys
@_exported import enum OptimizationWeb.ConsentChoice
@_exported import enum OptimizationWeb.ContentfulWebhookAuthentication
@_exported import struct OptimizationWeb.ContentfulWebhookReceiver
@_exported import enum OptimizationWeb.CrossSiteRequestCheck
@_exported import struct OptimizationWeb.OptimizationReplayTickets
@_exported import class OptimizationWeb.OptimizationRequestState
@_exported import protocol OptimizationWeb.ReplayLedger
@_exported import class OptimizationWeb.InMemoryReplayLedger
@_exported import class OptimizationWeb.ReplayIssuanceLimit
@_exported import enum OptimizationWeb.ReplayClaim
@_exported import enum OptimizationWeb.VisitorNonce
@_exported import class OptimizationWeb.ConsentWithdrawals
@_exported import enum OptimizationWeb.OFREPTargetingToken
@_exported import struct OptimizationWeb.ReplayTicket
@_exported import struct OptimizationWeb.VisitorCookieReading
@_exported import struct OptimizationWeb.VisitorCookies

// Configuration both faces take.
@_exported import struct OptimizationVocabulary.OptimizationAPIConfig
@_exported import struct OptimizationVocabulary.OptimizationConfig
@_exported import enum OptimizationVocabulary.OptimizationAPIVersion
@_exported import enum OptimizationVocabulary.OptimizationLogLevel
@_exported import struct OptimizationVocabulary.StorageDefaults

// Results, errors, state and the typed event methods both faces share.
@_exported import struct OptimizationVocabulary.BlockedEvent
@_exported import enum OptimizationVocabulary.EventMethod
@_exported import protocol OptimizationEngine.EventRecording
@_exported import enum OptimizationVocabulary.EventOutcome
@_exported import enum OptimizationVocabulary.EventBlockReason
@_exported import struct OptimizationVocabulary.EventResult
@_exported import struct OptimizationEngine.ExperienceNode
@_exported import enum OptimizationVocabulary.OptimizationError
@_exported import struct OptimizationEngine.OptimizationState
@_exported import struct OptimizationEngine.PersistedState
@_exported import protocol OptimizationEngine.OptimizationStore
@_exported import enum OptimizationVocabulary.OptimizationTelemetry

// Delivery: the policy numbers and what the queue reports (the queues themselves are internal).
@_exported import enum OptimizationDelivery.DeliveryOutcome
@_exported import struct OptimizationDelivery.DeliveryPolicy
@_exported import enum OptimizationDelivery.DeliveryQueueError
@_exported import enum OptimizationDelivery.InsightsEndpoint
@_exported import enum OptimizationDelivery.QueueEventType
@_exported import struct OptimizationDelivery.QueueEvent
@_exported import struct OptimizationDelivery.QueueFlushPolicy
@_exported import struct OptimizationDelivery.QueuePolicy

// The durable outbox (OptimizationClient.Environment.outbox) and the shared outbox's store protocol.
@_exported import class OptimizationDelivery.DurableOutbox
@_exported import enum OptimizationDelivery.EventQueueKind
@_exported import typealias OptimizationDelivery.EventQueue
@_exported import struct OptimizationDelivery.OutboxConfiguration
@_exported import struct OptimizationDelivery.OutboxDropReport
@_exported import enum OptimizationDelivery.OutboxDurability
@_exported import enum OptimizationDelivery.OutboxError
@_exported import struct OptimizationDelivery.OutboxEvent
@_exported import struct OptimizationDelivery.OutboxRecord
@_exported import struct OptimizationDelivery.OutboxRecovery
@_exported import enum OptimizationDelivery.OutboxRecoveryIssue
@_exported import struct OptimizationDelivery.SharedOutboxErasures
@_exported import protocol OptimizationDelivery.SharedOutboxStore

// Contentful entries, selections and resolution.
@_exported import class OptimizationContent.ContentfulEntry
@_exported import enum OptimizationContent.ContentfulEntryError
@_exported import struct OptimizationContent.ResolvedOptimizedEntry
@_exported import struct OptimizationContent.SelectedOptimizations
@_exported import enum OptimizationContent.SelectedOptimizationsError

// Contentful's Content Delivery API client, its cache and webhooks.
@_exported import struct OptimizationContent.ContentfulCachePolicy
@_exported import struct OptimizationContent.ContentfulDeliveryConfiguration
@_exported import enum OptimizationContent.ContentfulDeliveryError
@_exported import class OptimizationContent.ContentfulDeliverySource
@_exported import struct OptimizationContent.ContentfulEntryBatch
@_exported import enum OptimizationContent.ContentfulEntryId
@_exported import protocol OptimizationContent.ContentfulEntryStore
@_exported import struct OptimizationContent.ContentfulEntryStoreKey
@_exported import struct OptimizationContent.ContentfulStoredEntry
@_exported import struct OptimizationContent.ContentfulInvalidation
@_exported import enum OptimizationContent.ContentfulWebhookError
@_exported import struct OptimizationContent.ContentfulWebhookRequest
@_exported import struct OptimizationContent.ContentfulWebhookVerifier

// View tracking's payloads and options.
@_exported import struct OptimizationContent.TrackViewPayload
@_exported import struct OptimizationContent.TrackClickPayload
@_exported import class OptimizationContent.ViewTrackingController
@_exported import struct OptimizationContent.ViewTrackingOptions
@_exported import enum OptimizationContent.ViewTrackingError

// JSON values in every payload.
@_exported import struct OptimizationJSON.JSONError
@_exported import struct OptimizationJSON.JSONNumber
@_exported import enum OptimizationJSON.JSONValue

// HTTP: the transport, its allow-list and errors.
@_exported import enum OptimizationTransport.HTTPTransportError
@_exported import typealias OptimizationTransport.DeliveryError
@_exported import class OptimizationTransport.HTTPFetchTransport
@_exported import struct OptimizationTransport.HostAllowList
@_exported import enum OptimizationTransport.OptimizationLibrary

// The clock and the transport protocol every layer takes.
@_exported import struct HostPlatform.FetchRequest
@_exported import struct HostPlatform.FetchResponse
@_exported import protocol HostPlatform.FetchTransport
@_exported import struct HostPlatform.UnconfiguredFetchTransport
@_exported import enum HostPlatform.FetchTransportError
@_exported import protocol HostPlatform.HostClock
@_exported import protocol HostPlatform.HostTimer
@_exported import struct HostPlatform.SystemClock
@_exported import class HostPlatform.ManualClock

// JSON objects, event properties and traits are ordered dictionaries.
@_exported import struct OrderedCollections.OrderedDictionary
