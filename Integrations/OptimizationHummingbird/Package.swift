// swift-tools-version: 6.0
import PackageDescription

// Hummingbird 2 for services that personalize with the Optimization library: a middleware that
// gives each request its OptimizationRequest from the visitor's signed state cookie, the consent,
// replay, Contentful webhook and OFREP routes, and the service's lifecycle beside the server.
// Its own package (the library is depended on by path), so the library never depends on Hummingbird.
let package = Package(
    name: "OptimizationHummingbird",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "OptimizationHummingbird", targets: ["OptimizationHummingbird"]),
    ],
    dependencies: [
        // Named, so the dependency reads the same whatever the clone's folder is called.
        .package(name: "swift-optimization-linux", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "OptimizationHummingbird",
            dependencies: [
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "OptimizationHummingbirdTests",
            dependencies: [
                "OptimizationHummingbird",
                .product(name: "Optimization", package: "swift-optimization-linux"),
                .product(name: "JavaScriptHost", package: "swift-optimization-linux"),
                .product(name: "OptimizationTesting", package: "swift-optimization-linux"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
