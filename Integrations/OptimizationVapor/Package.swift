// swift-tools-version: 6.0
import PackageDescription

// Vapor 4 for services that personalize with the Optimization library: `app.optimization`
// configured once, the service started and stopped with the application, `req.optimization` for
// each request from the visitor's signed state cookie, and the consent, replay, Contentful webhook
// and OFREP routes. Its own package (the library is depended on by path), so the library never
// depends on Vapor.

/// A product of the library, depended on by path.
func library(_ product: String) -> Target.Dependency {
    .product(name: product, package: "swift-optimization-linux")
}

let package = Package(
    name: "OptimizationVapor",
    platforms: [.macOS(.v14)],
    products: [.library(name: "OptimizationVapor", targets: ["OptimizationVapor"])],
    dependencies: [
        // Named, so the dependency reads the same whatever the clone's folder is called. Vapor
        // brings swift-log (`Logging`) with it.
        .package(name: "swift-optimization-linux", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .target(
            name: "OptimizationVapor",
            dependencies: [library("Optimization"), library("JavaScriptHost"), .product(name: "Vapor", package: "vapor")]
        ),
        .testTarget(
            name: "OptimizationVaporTests",
            dependencies: [
                "OptimizationVapor", library("Optimization"), library("JavaScriptHost"), library("OptimizationTesting"),
                .product(name: "VaporTesting", package: "vapor"), .product(name: "Vapor", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
