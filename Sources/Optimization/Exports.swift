// Types of these targets are part of this library's API (JSONValue in every payload, entries and
// selections in every resolution, the durable outbox in OptimizationClient.Environment.outbox,
// the HTTP transport and the Contentful source in the configurations), and OrderedDictionary
// (JSON objects, event properties and traits): importing Optimization imports them.
@_exported import ContentfulDelivery
@_exported import EventOutbox
@_exported import OptimizationDelivery
@_exported import OptimizationContent
@_exported import OptimizationEngine
@_exported import OptimizationJSON
@_exported import OptimizationTransport
@_exported import ViewTracking
@_exported import OrderedCollections
