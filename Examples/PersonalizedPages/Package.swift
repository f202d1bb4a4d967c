// swift-tools-version: 6.2
import PackageDescription

// A Hummingbird 2 service that renders personalized pages with the Optimization library
// (depended on by path, so the library's own dependency graph stays small).
let package = Package(
    name: "PersonalizedPages",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "personalized-pages", targets: ["personalized-pages"]),
        .executable(name: "local-api-server", targets: ["local-api-server"]),
        .executable(name: "local-cda-server", targets: ["local-cda-server"]),
        .executable(name: "http-fuzz", targets: ["http-fuzz"]),
        .library(name: "PersonalizedPagesApp", targets: ["PersonalizedPagesApp"]),
    ],
    dependencies: [
        // Named, so the dependency reads the same whatever the clone's folder is called.
        .package(name: "swift-optimization-linux", path: "../.."),
        // Several replicas on one PostgreSQL database (--postgres): the repository's integration package.
        .package(name: "OptimizationPostgres", path: "../../Integrations/OptimizationPostgres"),
        // The Hummingbird glue (visitor-state middleware, consent, replay, webhook and OFREP routes,
        // the service's lifecycle): the repository's integration package.
        .package(name: "OptimizationHummingbird", path: "../../Integrations/OptimizationHummingbird"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // SHA-256 of the pages' inline stylesheet, for the Content-Security-Policy.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        // OpenTelemetry export (OTLP over HTTP, on when OTEL_EXPORTER_OTLP_ENDPOINT is set): the
        // executable only. The OTLPHTTP trait alone, so the gRPC exporter is not built.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        // The application: routes, page rendering, cookies, configuration. Tests build it.
        .target(
            name: "PersonalizedPagesApp",
            dependencies: [
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "OptimizationPostgres", package: "OptimizationPostgres"),
                .product(name: "OptimizationHummingbird", package: "OptimizationHummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // The HTTP/1.1 server's idle timeout (HTTP1Channel, TimeAmount).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The server spans (ServerSpanMiddleware).
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        // `personalized-pages`: flags and environment into the app's configuration.
        .executableTarget(
            name: "personalized-pages",
            dependencies: [
                "PersonalizedPagesApp",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // `local-api-server`: the library's test kit API server, for running the example locally.
        .executableTarget(
            name: "local-api-server",
            dependencies: [
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `local-cda-server`: the library's test kit Content Delivery API server, for running
        // replicas of the example with live content (scripts/load-test --replicas).
        .executableTarget(
            name: "local-cda-server",
            dependencies: [
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `http-fuzz`: a seeded hostile HTTP client (raw bytes on loopback sockets) against a
        // running `personalized-pages` (scripts/fuzz-http).
        .executableTarget(
            name: "http-fuzz",
            dependencies: [
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                // Seals pp_state values, replay tickets and OFREP targeting tokens with the app's key.
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "PersonalizedPagesTests",
            dependencies: [
                "PersonalizedPagesApp",
                // The command's option parsing and secret sources (@testable import personalized_pages).
                "personalized-pages",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "OptimizationHummingbird", package: "OptimizationHummingbird"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "PostgresTestServer", package: "OptimizationPostgres"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                // TelemetryShutdownOrderTests' stand-in for the exporters' service.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
