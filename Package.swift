// swift-tools-version: 6.0
import PackageDescription

// Linux only: the engine runs on GTK's JavaScriptCore (libjavascriptcoregtk-4.1-dev, found with
// pkg-config), which Apple platforms do not have; JavaScriptHost stops a build elsewhere with a
// clear error.
let package = Package(
    name: "swift-optimization-linux",
    products: [
        .library(name: "Optimization", targets: ["Optimization"]),
        .library(name: "JavaScriptHost", targets: ["JavaScriptHost"]),
        .library(name: "EventOutbox", targets: ["EventOutbox"]),
        .library(name: "OptimizationJSON", targets: ["OptimizationJSON"]),
        .library(name: "OptimizationContent", targets: ["OptimizationContent"]),
        .library(name: "OptimizationTransport", targets: ["OptimizationTransport"]),
        .library(name: "ContentfulDelivery", targets: ["ContentfulDelivery"]),
        .library(name: "ViewTracking", targets: ["ViewTracking"]),
        .library(name: "OptimizationTesting", targets: ["OptimizationTesting"]),
        .executable(name: "optimization", targets: ["OptimizationCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        // Only a module map and a shim header over GTK's JavaScriptCore C API.
        .systemLibrary(
            name: "CJavaScriptCore",
            pkgConfig: "javascriptcoregtk-4.1",
            providers: [.apt(["libjavascriptcoregtk-4.1-dev"])]
        ),
        // Swift over the JSC C API; knows nothing about optimization.
        .target(
            name: "JavaScriptHost",
            dependencies: [
                "CJavaScriptCore",
                "OptimizationJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // JSON as the engine reads and writes it: JSONValue (ordered objects, exact numbers), a
        // strict parser, a validating index over a document's text (JSONTape), and the writer.
        .target(
            name: "OptimizationJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // The content the engine resolves: ContentfulEntry (a Contentful entry indexed over its
        // JSON), the visitor's selected optimizations, and the resolution of an entry to its
        // baseline or variant.
        .target(
            name: "OptimizationContent",
            dependencies: ["OptimizationJSON", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // HTTP for the engine and the Contentful client: HTTPFetchTransport (AsyncHTTPClient) with
        // a host allow-list, request timeouts and cancellation.
        .target(
            name: "OptimizationTransport",
            dependencies: [
                "JavaScriptHost",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // A client of Contentful's Content Delivery API: fetches entries (with their links) into
        // a bounded cache with revalidation and invalidation, as ContentfulEntry values.
        .target(
            name: "ContentfulDelivery",
            dependencies: [
                "OptimizationContent", "OptimizationJSON", "OptimizationTransport", "JavaScriptHost",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // View tracking: turns the visibility of a rendered entry into view events (dwell time,
        // duration updates, a final update), on an injected clock.
        .target(
            name: "ViewTracking",
            dependencies: [
                "OptimizationContent", "OptimizationJSON", "JavaScriptHost",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // The durable outbox: a crash-safe, bounded store of accepted events waiting for
        // delivery, in one directory (segment files, acknowledgements, recovery).
        .target(
            name: "EventOutbox",
            dependencies: [
                "JavaScriptHost",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Delivery to the Experience and Insights APIs, with no JavaScript on the path: the
        // Insights queue (per-profile batches, flush rules), backoff with jitter, Retry-After,
        // one circuit per API, 401/403/404 disabling, the durable outbox's window, erasure, and
        // the queue reports. Its numbers live in DeliveryPolicy; every timer runs on the
        // injected HostClock.
        .target(
            name: "OptimizationDelivery",
            dependencies: [
                "JavaScriptHost",
                "EventOutbox",
                "OptimizationJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // One JavaScript engine with JSRuntime loaded: the bridge to the shared core, document
        // transfer and the resolution memo, the push-back channel, the outbox and persistence
        // links. Embeds JSRuntime/. Shared by both faces: the vocabulary a user meets (OptimizationError,
        // EventResult, EventMethod, …) is public and re-exported by Optimization; the rest is package-scoped.
        .target(
            name: "OptimizationEngine",
            dependencies: [
                "JavaScriptHost",
                "EventOutbox",
                "OptimizationDelivery",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            plugins: ["EmbedJSRuntimePlugin"]
        ),
        // The public façade: OptimizationClient (one visitor) and OptimizationService (many).
        .target(
            name: "Optimization",
            dependencies: [
                "OptimizationEngine",
                "OptimizationDelivery",
                "JavaScriptHost",
                "EventOutbox",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                "ContentfulDelivery",
                "ViewTracking",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Test kit for users' and our own tests: a local Experience/Insights API server on an
        // ephemeral loopback port that records requests and injects faults.
        .target(
            name: "OptimizationTesting",
            dependencies: [
                "Optimization",
                "JavaScriptHost",
                "ContentfulDelivery",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The `optimization` executable.
        .executableTarget(
            name: "OptimizationCLI",
            dependencies: [
                "Optimization",
                "JavaScriptHost",
                "CommandLineReporting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // How the `optimization` executable reports a failure: `error: …` on stderr and a sysexits code.
        .target(
            name: "CommandLineReporting",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Build-time: turns JSRuntime/ (its roles, in the load order JSRuntime/load-order.js
        // computes, run in JavaScriptCore) into Swift source, so every product carries its
        // JavaScript and the binary works when copied anywhere.
        .executableTarget(name: "EmbedJSRuntimeTool", dependencies: ["CJavaScriptCore"], path: "Plugins/EmbedJSRuntimeTool"),
        .plugin(
            name: "EmbedJSRuntimePlugin",
            capability: .buildTool(),
            dependencies: ["EmbedJSRuntimeTool"]
        ),
        // Test support for the outbox crash test: appends scripted events to a DurableOutbox until
        // the test kills it with SIGKILL.
        .executableTarget(
            name: "OutboxCrashHelper",
            dependencies: ["Optimization", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationJSONTests",
            dependencies: ["OptimizationJSON"]
        ),
        .testTarget(
            name: "EventOutboxTests",
            dependencies: ["EventOutbox", "JavaScriptHost", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "ContentfulDeliveryTests",
            dependencies: [
                "ContentfulDelivery", "Optimization", "OptimizationTesting", "JavaScriptHost",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "OptimizationDeliveryTests",
            dependencies: [
                "OptimizationDelivery", "JavaScriptHost", "EventOutbox", "OptimizationJSON", "OptimizationTesting",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "JavaScriptHostTests",
            dependencies: ["JavaScriptHost", "CJavaScriptCore"]
        ),
        .testTarget(
            name: "OptimizationTests",
            dependencies: [
                "Optimization", "JavaScriptHost", "OptimizationTesting", "OutboxCrashHelper",
                "OptimizationJSON", "OptimizationContent", "OptimizationTransport", "ContentfulDelivery", "EventOutbox", "ViewTracking",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "OptimizationCLITests",
            dependencies: ["Optimization", "OptimizationCLI", "OptimizationTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
