// swift-tools-version:6.0
import PackageDescription

// A separate package so that `swift test` in the root stays fast.
let package = Package(
    name: "TaskLogBenchmarks",
    dependencies: [.package(name: "TaskLog", path: "..")],
    targets: [
        .executableTarget(
            name: "tasklog-bench",
            dependencies: [.product(name: "TaskLog", package: "TaskLog")]),
        .testTarget(name: "BenchmarkTests", dependencies: ["tasklog-bench"]),
    ],
    swiftLanguageModes: [.v6]
)
