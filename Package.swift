// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "TaskLog",
    products: [
        .library(name: "TaskLog", targets: ["TaskLog", "TaskSyncHTTP", "TaskSyncRemote", "TaskSync", "TaskStore", "TaskModel", "OpLogFormat", "CRDTCore"]),
        // The other task apps' formats and the CalDAV server and bridge (the fuzz targets use them).
        .library(name: "TaskLogInterop", targets: ["TaskInterchange", "TaskCalDAV"]),
        .executable(name: "tasklog", targets: ["tasklog"]),
        .executable(name: "tasklog-http", targets: ["tasklog-http"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4", path: "Sources/CLZ4", pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]),
        .systemLibrary(
            name: "CXXHash", path: "Sources/CXXHash", pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CXML2", path: "Sources/CXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // statx(2) for the link count and size of a file, without reading its times.
        .systemLibrary(name: "CFileStatus", path: "Sources/CFileStatus"),
        // A cache prefetch hint (a compiler builtin; nothing is linked).
        .systemLibrary(name: "CPrefetch", path: "Sources/CPrefetch"),
        // Values only: clocks, ids, registers, sets. No I/O.
        .target(name: "CRDTCore"),
        // Bytes <-> records: varints, checksums, LZ4 blocks, segment headers. Knows nothing of tasks.
        .target(name: "OpLogFormat", dependencies: ["CLZ4", "CXXHash"]),
        // Tasks, operations, the commit codec and the materialised state (a fold of operations).
        .target(name: "TaskModel", dependencies: ["CRDTCore", "OpLogFormat", "CPrefetch"]),
        // Files on disk: per-replica logs, the tail, snapshots, the lock, the TaskStore API.
        .target(name: "TaskStore", dependencies: ["TaskModel", "OpLogFormat", "CRDTCore", "CFileStatus"]),
        // Sync through shared folders.
        .target(name: "TaskSync", dependencies: ["TaskStore", "TaskModel", "CRDTCore", "OpLogFormat", "CFileStatus", "CSodium"]),
        // The HTTP peer: server on libmicrohttpd, client on libcurl, tokens with libsodium; the widget
        // view ranks tasks as `top` does (TaskPlanning).
        .target(
            name: "TaskSyncHTTP",
            dependencies: ["TaskSync", "TaskPlanning", "TaskStore", "TaskModel", "CRDTCore", "CMicroHTTPD", "CCurl", "CSodium"]),
        // Shared folders in remote storage: S3 buckets and WebDAV folders over libcurl, one retry layer.
        .target(
            name: "TaskSyncRemote",
            dependencies: ["TaskSync", "TaskSyncHTTP", "TaskStore", "CRDTCore", "BoundedXML", "CSodium"]),
        // A deterministic simulator of replicas, folders, links and faults, driven by a seed (for tests).
        .target(name: "TaskSim", dependencies: ["TaskSyncHTTP", "TaskSync", "TaskStore", "TaskModel", "CRDTCore", "TestSupport"]),
        // XML read with libxml2 within stated bounds: WebDAV, CalDAV and S3 bodies.
        .target(name: "BoundedXML", dependencies: ["CXML2"]),
        // Other task apps' formats, both ways: iCalendar, todo.txt, Taskwarrior.
        .target(name: "TaskInterchange", dependencies: ["TaskModel", "CRDTCore", "OpLogFormat"]),
        // The CalDAV server in `tasklog serve`: every list a VTODO collection (XML read with libxml2).
        .target(
            name: "TaskCalDAV",
            dependencies: ["TaskSyncHTTP", "TaskInterchange", "TaskStore", "TaskModel", "CRDTCore", "OpLogFormat", "BoundedXML", "CXML2"]),
        // The web page `tasklog serve` offers at `/`: HTML, CSS and JavaScript held in the binary.
        .target(name: "WebPage", dependencies: ["TaskSyncHTTP"]),
        // How people state tasks: dates as typed, quick add, today and urgency.
        .target(name: "TaskPlanning", dependencies: ["TaskStore", "TaskModel", "CRDTCore"]),
        // What an app imports: `import TaskLog` re-exports the store, the model and sync.
        .target(name: "TaskLog", dependencies: ["TaskPlanning", "TaskSyncHTTP", "TaskSync", "TaskStore", "TaskModel", "CRDTCore"]),
        // The README's library example, built and run by the tests.
        .executableTarget(name: "tasklog-example", dependencies: ["TaskLog"], path: "Examples/GettingStarted"),
        // The doc comments' examples, built and run by the tests.
        .executableTarget(name: "tasklog-doc-snippets", dependencies: ["TaskLog"], path: "Examples/DocSnippets"),
        // The command line: parsing and every command but the HTTP ones.
        .target(name: "TaskLogCLI", dependencies: ["TaskPlanning", "TaskInterchange", "TaskSync", "TaskStore", "TaskModel", "CRDTCore"]),
        // The thin executables: `tasklog`, and `tasklog-http` for serve and sync http://, so
        // that `tasklog` starts without loading the HTTP libraries.
        .executableTarget(name: "tasklog", dependencies: ["TaskLogCLI"]),
        .executableTarget(name: "tasklog-http", dependencies: ["TaskLogCLI", "TaskSyncHTTP", "TaskSyncRemote", "TaskCalDAV", "WebPage"]),
        .target(name: "TestSupport", dependencies: ["TaskModel", "CRDTCore", "OpLogFormat"], path: "Tests/TestSupport"),
        // A process that commits a non-durable burst through the library, for kill -9 tests.
        .executableTarget(name: "tasklog-burst", dependencies: ["TaskStore"], path: "Tests/BurstWriter"),
        .testTarget(
            name: "TaskLogTests",
            dependencies: [
                "TestSupport", "TaskLogCLI", "TaskPlanning", "TaskInterchange", "TaskCalDAV", "WebPage", "TaskSyncHTTP", "TaskSyncRemote", "TaskSync", "TaskStore", "TaskModel", "CRDTCore", "OpLogFormat",
                "tasklog", "tasklog-http", "tasklog-burst", "tasklog-example", "tasklog-doc-snippets", "TaskSim",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
