// Types of these targets are part of this library's API (JSONValue in every payload, the durable
// outbox in OptimizationClient.Environment.outbox and OptimizationService.Options.outbox):
// importing Optimization imports them.
@_exported import EventOutbox
@_exported import OptimizationJSON
