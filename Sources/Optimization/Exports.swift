// The durable outbox is part of this library's API (OptimizationClient.Environment.outbox,
// OptimizationService.Options.outbox): importing Optimization imports it.
@_exported import EventOutbox
