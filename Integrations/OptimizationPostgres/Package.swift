// swift-tools-version: 6.0
import PackageDescription

// PostgreSQL for services that run several replicas of the Optimization library: a shared entry
// store and an invalidation bus for ContentfulDeliverySource, and a shared event outbox store.
// Its own package (the library is depended on by path), so the library never depends on PostgresNIO.
let package = Package(
    name: "OptimizationPostgres",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "OptimizationPostgres", targets: ["OptimizationPostgres"]),
        .library(name: "PostgresTestServer", targets: ["PostgresTestServer"]),
    ],
    dependencies: [
        // Named, so the dependency reads the same whatever the clone's folder is called.
        .package(name: "swift-optimization-linux", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // The PostgreSQL parts: configuration, schema migration, the entry store and invalidation
        // bus of ContentfulDeliverySource, the outbox store, metrics.
        .target(
            name: "OptimizationPostgres",
            dependencies: [
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // A private PostgreSQL server for tests: initdb into a temporary directory, a free
        // loopback port, a non-root OS user; stopped and removed when done.
        .target(name: "PostgresTestServer"),
        // Test support for the shared outbox's takeover test: a replica that claims events and
        // waits to be killed with SIGKILL.
        .executableTarget(
            name: "outbox-crash-helper",
            dependencies: [
                "OptimizationPostgres",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "OptimizationPostgresTests",
            dependencies: [
                "OptimizationPostgres", "PostgresTestServer", "outbox-crash-helper",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
