// swift-tools-version: 6.1
import PackageDescription

// The library's benchmarks, a package of their own so that no user of the library depends on the
// benchmark harness or the allocation counter:
//   - OperationBenchmarks (Benchmarks/OperationBenchmarks): the operations one at a time on
//     ordo-one/benchmark, their allocations checked against Thresholds/ (BENCHMARKS.md);
//   - `optimization-bench` (Sources/OptimizationBenchmarks): every figure, one JSON object.
// The library is depended on by path and only through its products Optimization,
// OptimizationTesting and JavaScriptHost.
let package = Package(
    name: "OptimizationBenchmarks",
    products: [
        .executable(name: "optimization-bench", targets: ["OptimizationBenchmarks"]),
    ],
    dependencies: [
        // Named, so the dependency reads the same whatever the clone's folder is called.
        .package(name: "swift-optimization-linux", path: ".."),
        // Its malloc counting (the MallocInterposer trait) is what the thresholds check.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // The same interposer, for `optimization-bench`'s own allocation counter (op_*_allocs).
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // What both measure: the bench entry and selections, the operations, a service on the
        // test kit's loopback API server.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `optimization-bench`: resolve, engine start, the service, view tracking, the outbox and
        // the per-operation figures; one JSON object.
        .executableTarget(
            name: "OptimizationBenchmarks",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
        // The harness's benchmarks (`swift package benchmark`).
        .executableTarget(
            name: "OperationBenchmarks",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
            ],
            path: "Benchmarks/OperationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Runs the built `optimization-bench`.
        .testTarget(
            name: "OptimizationBenchmarksTests",
            dependencies: [
                "OptimizationBenchmarks",
                .product(name: "Optimization", package: "swift-optimization-linux"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
