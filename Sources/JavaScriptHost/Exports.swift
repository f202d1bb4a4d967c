// An engine's configuration names a clock: a user of JavaScriptHost gets it, and the HTTP
// transport types the hosts deliver with, with `import JavaScriptHost`, without importing the
// platform target.
@_exported import protocol HostPlatform.HostClock
@_exported import protocol HostPlatform.HostTimer
@_exported import struct HostPlatform.SystemClock
@_exported import class HostPlatform.ManualClock
@_exported import protocol HostPlatform.FetchTransport
@_exported import struct HostPlatform.FetchRequest
@_exported import struct HostPlatform.FetchResponse
@_exported import struct HostPlatform.UnconfiguredFetchTransport
@_exported import enum HostPlatform.FetchTransportError
