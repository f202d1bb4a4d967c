// swift-tools-version: 6.0
import PackageDescription

// Linux only: the engine runs on GTK's JavaScriptCore (libjavascriptcoregtk-4.1-dev, found with
// pkg-config), which Apple platforms do not have; JavaScriptHost stops a build elsewhere with a
// clear error.
let package = Package(
    name: "swift-optimization-linux",
    products: [
        // What an application imports: the client, the service and their vocabulary.
        .library(name: "Optimization", targets: ["Optimization"]),
        // The local API servers, fixtures and clocks for an application's tests.
        .library(name: "OptimizationTesting", targets: ["OptimizationTesting"]),
        // Swift over GTK's JavaScriptCore, usable on its own.
        .library(name: "JavaScriptHost", targets: ["JavaScriptHost"]),
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
        // What every layer stands on: the clock and its timers (SystemClock, ManualClock),
        // the HTTP transport protocol, durations in milliseconds. No JavaScript, no I/O of its own.
        .target(name: "HostPlatform"),
        // Swift over the JSC C API; knows nothing about optimization.
        .target(
            name: "JavaScriptHost",
            dependencies: [
                "CJavaScriptCore",
                "HostPlatform",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // JSON as the engine reads and writes it: JSONValue (ordered objects, exact numbers), a
        // strict parser, a validating index over a document's text (JSONTape), and the writer.
        .target(
            name: "OptimizationJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // HTTP for the engine, delivery and the Content Delivery API client: HTTPFetchTransport
        // (AsyncHTTPClient) with a host allow-list, request timeouts and cancellation.
        .target(
            name: "OptimizationTransport",
            dependencies: [
                "HostPlatform",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Contentful entries: ContentfulEntry (a Contentful entry indexed over its JSON), the
        // visitor's selected optimizations and the resolution of an entry to its baseline or
        // variant; ContentfulDeliverySource, a client of the Content Delivery API with a bounded,
        // revalidating cache and webhook invalidation (Contentful/); ViewTrackingController, the
        // visibility of a rendered entry turned into view events on a clock (ViewTracking/).
        .target(
            name: "OptimizationContent",
            dependencies: [
                "OptimizationJSON", "OptimizationTransport", "HostPlatform",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Delivery to the Experience and Insights APIs, with no JavaScript on the path: the
        // client's Experience queue and both faces' Insights queues, backoff with jitter,
        // Retry-After, one circuit per API, 401/403/404 disabling, the durable outbox (Outbox/: a
        // crash-safe, bounded store of accepted events in one directory) and its window, erasure,
        // and the queue reports. Its numbers live in DeliveryPolicy; every timer runs on
        // the injected HostClock.
        .target(
            name: "OptimizationDelivery",
            dependencies: [
                "HostPlatform",
                "OptimizationJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // The words every layer above delivery shares: the configuration both faces take
        // (OptimizationConfig, OptimizationAPIConfig, StorageDefaults), OptimizationError, the event
        // methods and results (EventMethod, EventResult, BlockedEvent, FeatureFlagEvaluation), and
        // the telemetry's names and bounded counters. No JavaScript: the service's delivery path
        // depends on this target, not on the engine.
        .target(
            name: "OptimizationVocabulary",
            dependencies: [
                "OptimizationDelivery",
                "OptimizationJSON",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // One JavaScript engine with JSRuntime loaded: the bridge to the shared core, document
        // transfer and the resolution memo, the push-back channel, the Experience and outbox
        // links, and the typed event methods both faces offer (EventRecording). Embeds JSRuntime/.
        .target(
            name: "OptimizationEngine",
            dependencies: [
                "OptimizationVocabulary",
                "JavaScriptHost",
                "HostPlatform",
                "OptimizationDelivery",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            plugins: ["EmbedJSRuntimePlugin"]
        ),
        // The client face: OptimizationClient, one visitor per process (kiosk, signage, set-top):
        // consent, events, view tracking, flags, merge tags, preview, persistence.
        .target(
            name: "OptimizationClientFace",
            dependencies: [
                "OptimizationEngine",
                "OptimizationVocabulary",
                "OptimizationDelivery",
                "JavaScriptHost",
                "HostPlatform",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The service's delivery path: every visitor's Insights events in sharded queues, the
        // Experience calls' circuit, the shared outbox relay (SharedOutbox), the service's metrics
        // and the instrumented transport. No JavaScript on the path.
        .target(
            name: "OptimizationServiceDelivery",
            dependencies: [
                "OptimizationDelivery",
                "OptimizationVocabulary",
                "HostPlatform",
                "OptimizationJSON",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The service face: OptimizationService, many visitors per process, one request at a
        // time per visitor (OptimizationRequest): the engine pool, the handoff, the requests' event
        // and Experience calls over OptimizationServiceDelivery.
        .target(
            name: "OptimizationServiceFace",
            dependencies: [
                "OptimizationServiceDelivery",
                "OptimizationEngine",
                "OptimizationVocabulary",
                "OptimizationDelivery",
                "JavaScriptHost",
                "HostPlatform",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // What a web framework integration needs over the service: visitor cookies and signed
        // visitor state, consent choices, replay tickets and the ledger, cross-site checks,
        // Contentful webhooks, and OpenFeature's OFREP evaluation.
        .target(
            name: "OptimizationWeb",
            dependencies: [
                "OptimizationServiceFace",
                "OptimizationEngine",
                "HostPlatform",
                "OptimizationJSON",
                "OptimizationContent",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // What `import Optimization` brings: the public declarations of every library target below
        // it, re-exported by module (Exports.swift). No code of its own.
        .target(
            name: "Optimization",
            dependencies: [
                "OptimizationServiceDelivery",
                "OptimizationClientFace",
                "OptimizationServiceFace",
                "OptimizationWeb",
                "OptimizationVocabulary",
                "OptimizationEngine",
                "OptimizationDelivery",
                "HostPlatform",
                "OptimizationJSON",
                "OptimizationContent",
                "OptimizationTransport",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // Test kit for users' and our own tests: a local Experience/Insights API server on an
        // ephemeral loopback port that records requests and injects faults.
        .target(
            name: "OptimizationTesting",
            dependencies: [
                "Optimization",
                "HostPlatform",
                "OptimizationContent",
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
                "HostPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
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
        // What the test targets share: fixtures, the test visitor data, service and client
        // makers, stream probes and the hang bound. Tests only.
        .target(
            name: "OptimizationTestSupport",
            dependencies: [
                "OptimizationServiceDelivery", "Optimization", "OptimizationClientFace", "OptimizationServiceFace", "OptimizationEngine", "OptimizationTesting", "JavaScriptHost",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Tests/OptimizationTestSupport"
        ),
        .testTarget(
            name: "HostPlatformTests",
            dependencies: ["HostPlatform"]
        ),
        .testTarget(
            name: "OptimizationJSONTests",
            dependencies: ["OptimizationJSON"]
        ),
        .testTarget(
            name: "JavaScriptHostTests",
            dependencies: ["JavaScriptHost", "CJavaScriptCore"]
        ),
        .testTarget(
            name: "OptimizationContentTests",
            dependencies: ["OptimizationContent", "OptimizationJSON", "OptimizationClientFace", "OptimizationEngine", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationTransportTests",
            dependencies: [
                "OptimizationTransport", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "OptimizationDeliveryTests",
            dependencies: ["OptimizationDelivery", "OptimizationJSON", "OutboxCrashHelper", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationEngineTests",
            dependencies: ["OptimizationServiceDelivery", "OptimizationEngine", "OptimizationDelivery", "OptimizationClientFace", "OptimizationServiceFace", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationVocabularyTests",
            dependencies: ["OptimizationVocabulary", "OptimizationEngine", "OptimizationJSON", "OptimizationTesting", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationClientFaceTests",
            dependencies: ["OptimizationServiceDelivery", "OptimizationClientFace", "OptimizationServiceFace", "OptimizationEngine", "OptimizationDelivery", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "InMemoryTracing", package: "swift-distributed-tracing")]
        ),
        .testTarget(
            name: "OptimizationServiceDeliveryTests",
            dependencies: ["OptimizationServiceDelivery", "OptimizationVocabulary", "OptimizationJSON", "OptimizationServiceFace", "OptimizationClientFace", "OptimizationEngine", "OptimizationDelivery", "OutboxCrashHelper", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "InMemoryTracing", package: "swift-distributed-tracing"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        .testTarget(
            name: "OptimizationServiceFaceTests",
            dependencies: ["OptimizationServiceDelivery", "OptimizationServiceFace", "OptimizationJSON", "OptimizationClientFace", "OptimizationEngine", "OptimizationDelivery", "OutboxCrashHelper", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "InMemoryTracing", package: "swift-distributed-tracing"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        .testTarget(
            name: "OptimizationWebTests",
            dependencies: ["OptimizationServiceDelivery", "OptimizationWeb", "OptimizationServiceFace", "OptimizationClientFace", "OptimizationEngine", "Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log"), .product(name: "MetricsTestKit", package: "swift-metrics"), .product(name: "InMemoryTracing", package: "swift-distributed-tracing"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "OptimizationTestingTests",
            dependencies: ["Optimization", "OptimizationTesting", "OptimizationTestSupport", "JavaScriptHost", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "OptimizationCLITests",
            dependencies: ["Optimization", "OptimizationCLI", "OptimizationTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
