// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for TaskLog's decoders and request handlers. A separate package so the
// root build and `swift test` stay free of sanitizer flags; build and run with `Fuzz/run.sh`.
let fuzzTargets = [
    "fuzz-segment", "fuzz-commit-payload", "fuzz-snapshot", "fuzz-folder", "fuzz-http", "fuzz-json",
    "fuzz-ical", "fuzz-caldav-request", "fuzz-multistatus", "fuzz-todotxt", "fuzz-taskwarrior", "fuzz-epoch",
]

let package = Package(
    name: "TaskLogFuzz",
    dependencies: [.package(name: "TaskLog", path: "..")],
    targets: [
        // Header-only: declares LLVMFuzzerRunDriver, which `-sanitize=fuzzer` links in.
        .systemLibrary(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        // XXH32, to repair the checksums of mutated segments (the library's own module is internal).
        .systemLibrary(
            name: "FuzzXXHash", path: "Sources/FuzzXXHash", pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]),
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CLibFuzzer", "FuzzXXHash", .product(name: "TaskLog", package: "TaskLog"),
                .product(name: "TaskLogInterop", package: "TaskLog"),
            ],
            // FuzzHarness.swift links to Tests/TaskLogTests/FuzzRegressionTests.swift: one harness
            // for the fuzzers and the regression tests; this flag leaves the tests out.
            swiftSettings: [.define("FUZZ_BUILD")]),
        // Writes the seed corpora (Fuzz/corpus/) from stores it builds through the public API.
        .executableTarget(
            name: "fuzz-seeds",
            dependencies: [
                "FuzzSupport", .product(name: "TaskLog", package: "TaskLog"), .product(name: "TaskLogInterop", package: "TaskLog"),
            ]),
    ] + fuzzTargets.map {
        .executableTarget(name: $0, dependencies: ["FuzzSupport"])
    },
    swiftLanguageModes: [.v6]
)
