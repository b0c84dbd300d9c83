// swift-tools-version:6.1
// A Swift app's view of Quire: swift-openapi-generator's build plugin turns the repository's openapi.yaml
// (symlinked into the target) into typed `Components.Schemas` and a `Client`, and `GeneratedClientLoop`
// drives a whole session loop through them against a live `quire serve` (scripts/test/client-test).
import PackageDescription

let package = Package(
    name: "GeneratedClient",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "GeneratedClientLoop",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        )
    ],
    swiftLanguageModes: [.v6]
)
