// swift-tools-version: 6.0
import PackageDescription

// The benchmarks live in their own package so the main package stays free of anything but itself.
let package = Package(
    name: "replica-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "replica", path: "..")],
    targets: [
        .executableTarget(
            name: "replica-bench",
            dependencies: [
                .product(name: "Replica", package: "replica"),
                .product(name: "ReplicaSQLite", package: "replica"),
                .product(name: "ReplicaFileTree", package: "replica"),
                .product(name: "ReplicaPostgres", package: "replica"),
                .product(name: "ReplicaPostgresHome", package: "replica"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
