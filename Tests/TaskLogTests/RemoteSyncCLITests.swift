import Foundation
import Testing
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncRemote

/// A remote folder the real `tasklog` binary syncs with: its target and the environment
/// that reaches it (keys or password, and a home of its own so no real ~/.aws or ~/.netrc
/// is read).
struct RemoteTarget {
    let url: String
    let environment: [String: String]

    /// `s3://tasklog/<prefix>` on `server`, through `endpoint` when given (a proxy or nothing).
    static func s3(_ server: S3TestServer, prefix: String, home: String, endpoint: String? = nil, secret: String? = nil, bucket: String = S3TestServer.bucket) -> RemoteTarget {
        RemoteTarget(
            url: "s3://\(bucket)/\(prefix)",
            environment: [
                "AWS_ACCESS_KEY_ID": S3TestServer.accessKey, "AWS_SECRET_ACCESS_KEY": secret ?? server.secret,
                "AWS_ENDPOINT_URL": endpoint ?? server.endpoint, "AWS_REGION": "us-east-1", "HOME": home,
            ])
    }

    /// `webdav://me@127.0.0.1:PORT/<prefix>/<folder>/` on `server` (or a port nothing listens on).
    static func webDAV(_ server: WebDAVServer, folder: String, home: String, password: String = WebDAVServer.password, port: Int? = nil) -> RemoteTarget {
        RemoteTarget(
            url: "webdav://\(WebDAVServer.user)@127.0.0.1:\(port ?? server.port)\(server.prefix)/\(folder)/",
            environment: ["TASKLOG_WEBDAV_PASSWORD": password, "HOME": home])
    }

    /// `tasklog sync URL extra…` on `store`.
    @discardableResult
    func sync(_ store: CLIStore, _ extra: [String] = []) throws -> CLIResult {
        try CLI.run(["sync", url] + extra, store: store.path, environment: environment)
    }

    /// `tasklog sync URL extra…` on `store`, which must succeed.
    @discardableResult
    func syncOK(_ store: CLIStore, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        let r = try sync(store, extra)
        #expect(r.status == 0, "sync \(url) from \(store.path): \(r)", sourceLocation: sourceLocation)
        return r
    }
}

/// A small seeded generator (SplitMix64), so a failing random run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random rounds of edits and syncs on several stores sharing one remote folder.
enum RemoteConvergence {
    /// Runs `rounds` random steps on `count` fresh stores, then syncs every store twice in
    /// turn; the stores.
    static func run(_ target: RemoteTarget, stores count: Int, rounds: Int, seed: UInt64, in dir: TemporaryDirectory) throws -> [CLIStore] {
        var rng = SeededGenerator(state: seed)
        let stores = (0..<count).map { CLIStore(path: dir.sub("store-\(seed)-\($0)")) }
        for (n, store) in stores.enumerated() { try store.ok("add", "first of store \(n)") }
        for round in 0..<rounds {
            let store = stores[Int.random(in: 0..<count, using: &rng)]
            try step(Int.random(in: 0..<6, using: &rng), round: round, store: store, target: target, rng: &rng)
        }
        for _ in 0..<2 { for store in stores { try target.syncOK(store) } }
        return stores
    }

    /// One random step: add, edit, done, delete or sync (an add when there is nothing to change).
    private static func step(_ action: Int, round: Int, store: CLIStore, target: RemoteTarget, rng: inout SeededGenerator) throws {
        if action == 5 {
            try target.syncOK(store)
            return
        }
        let tasks = try store.tasks()
        let open = tasks.filter { ($0["done"] as? Bool) == false }
        guard action >= 2, let task = (action == 3 ? open : tasks).randomElement(using: &rng), let id = task["id"] as? String else {
            try store.ok("add", "task of round \(round)")
            return
        }
        switch action {
        case 2: try store.ok("edit", id, "--title", "edited in round \(round)")
        case 3: try store.ok("done", id)
        default: try store.ok("rm", id)
        }
    }

    /// What must agree between stores: each task's id, title and done flag, sorted.
    static func summary(_ store: CLIStore) throws -> [String] {
        try store.tasks().map { "\($0["id"] ?? "") | \($0["title"] ?? "") | \($0["done"] ?? "")" }.sorted()
    }

    /// Expects every store to list the same tasks as the first.
    static func expectSame(_ stores: [CLIStore], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let first = try summary(stores[0])
        #expect(first.count > stores.count, "the rounds made tasks: \(first)", sourceLocation: sourceLocation)
        for store in stores.dropFirst() {
            #expect(try summary(store) == first, "\(store.path) differs from \(stores[0].path)", sourceLocation: sourceLocation)
        }
    }
}

/// `tasklog sync s3://…` through the real binary, against SeaweedFS and `rclone serve s3`
/// started once for the suite.
@Suite("tasklog sync s3:// from the command line", .s3Servers)
struct RemoteSyncCLITests {
    let dir = TemporaryDirectory()

    static func freshPrefix() -> String { "cli-\(UInt32.random(in: 0...UInt32.max))" }

    @Test("three stores converge through one bucket prefix over seeded random rounds", arguments: S3TestServer.Kind.allCases)
    func threeStoresConverge(kind: S3TestServer.Kind) throws {
        let target = RemoteTarget.s3(try S3ServersTrait.server(kind), prefix: Self.freshPrefix(), home: dir.path)
        let stores = try RemoteConvergence.run(target, stores: 3, rounds: 40, seed: 37, in: dir)
        try RemoteConvergence.expectSame(stores)
    }

    @Test("ten stores converge through one SeaweedFS prefix over seeded random rounds")
    func tenStoresConverge() throws {
        let target = RemoteTarget.s3(try S3ServersTrait.server(.seaweedfs), prefix: Self.freshPrefix(), home: dir.path)
        let stores = try RemoteConvergence.run(target, stores: 10, rounds: 40, seed: 1037, in: dir)
        try RemoteConvergence.expectSame(stores)
    }

    /// The proxy's requests made while `body` runs (it logs each once answered).
    static func requests(of proxy: S3FaultTests.FaultProxy, during body: () throws -> Void) rethrows -> [String] {
        let before = proxy.requests.count
        try body()
        usleep(100_000)
        return Array(proxy.requests.dropFirst(before))
    }

    @Test("an idle sync makes one request and writes nothing, with one store and with ten")
    func idleSyncIsOneRequest() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let proxy = try S3FaultTests.FaultProxy("clean", upstream: server, dir: dir)
        let target = RemoteTarget.s3(server, prefix: Self.freshPrefix(), home: dir.path, endpoint: "http://127.0.0.1:\(proxy.port)")
        let stores = (0..<10).map { CLIStore(path: dir.sub("idle-\($0)")) }
        try stores[0].ok("add", "alone")
        // The publishing sync changes the marker, so the next one lists once more (Spec/sync-folder.md).
        for _ in 0..<2 { try target.syncOK(stores[0]) }
        let alone = try Self.requests(of: proxy) { try target.syncOK(stores[0]) }
        #expect(alone.count == 1 && alone[0].hasPrefix("GET "), "\(alone)")
        for (n, store) in stores.enumerated().dropFirst() { try store.ok("add", "from store \(n)") }
        for _ in 0..<2 { for store in stores { try target.syncOK(store) } }
        for store in stores {
            let idle = try Self.requests(of: proxy) { try target.syncOK(store) }
            #expect(idle.count == 1, "\(store.path): \(idle)")
            #expect(!idle.contains { $0.hasPrefix("PUT ") || $0.hasPrefix("DELETE ") || $0.hasPrefix("POST ") }, "\(idle)")
        }
    }

    @Test("a prefix with 1,100 foreign objects still syncs: pages followed, each foreign name noted, nothing lost")
    func foreignObjectsAcrossPages() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let prefix = Self.freshPrefix()
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            let storage = server.storage(prefix: prefix)
            for n in stride(from: part, to: 1100, by: 4) { _ = try? storage.put(Array("not ours \(n)".utf8), as: "foreign-\(n).txt") }
        }
        let target = RemoteTarget.s3(server, prefix: prefix, home: dir.path)
        let (a, b) = (CLIStore(path: dir.sub("foreign-a")), CLIStore(path: dir.sub("foreign-b")))
        for n in 1...3 { try a.ok("add", "past the foreign \(n)") }
        try target.syncOK(a)
        let joined = try target.syncOK(b)
        #expect(try b.tasks().map { $0["title"] as? String }.compactMap { $0 }.sorted() == (1...3).map { "past the foreign \($0)" })
        let notes = joined.stderr.split(separator: "\n").filter { $0.contains("skipped s3://tasklog/\(prefix)/foreign-") }
        #expect(notes.count == 1100, "\(joined.stderr.prefix(600))")
        let left = try server.storage(prefix: prefix).list().map(\.key)
        #expect(left.filter { $0.hasPrefix("foreign-") }.count == 1100, "no foreign object was removed")
    }

    @Test("--encrypt leaves no task title in any object, and a second store joins with the passphrase file")
    func encryptedBucketHidesTitles() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let prefix = Self.freshPrefix()
        let target = RemoteTarget.s3(server, prefix: prefix, home: dir.path)
        let passphrase = dir.sub("passphrase")
        try "correct horse battery staple\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        let (a, b) = (CLIStore(path: dir.sub("secret-a")), CLIStore(path: dir.sub("secret-b")))
        let title = "renew the passport at the consulate"
        try a.ok("add", title)
        try target.syncOK(a, ["--encrypt", "--passphrase-file", passphrase])
        try a.ok("add", title + " again")
        try target.syncOK(a)
        let storage = server.storage(prefix: prefix)
        let keys = try storage.list().map(\.key) + [S3Storage.markerKey]
        #expect(keys.count >= 3, "\(keys)")
        for key in keys {
            let bytes = try #require(try storage.read(key, largest: 1 << 24), "\(key) is gone")
            #expect(Data(bytes).range(of: Data("passport".utf8)) == nil, "\(key) holds a title in plain text")
        }
        try target.syncOK(b, ["--passphrase-file", passphrase])
        #expect(try b.tasks().compactMap { $0["title"] as? String }.sorted() == [title, title + " again"])
    }
}
