import Foundation
import Testing
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncRemote

/// A sync that cannot reach its folder: one line saying what to check, nothing written.
enum RefusedRemoteSync {
    /// Runs `sync` on a store that exists and on one that does not; both exit 1 with one
    /// stderr line holding `hint`, the first store is unchanged and the second not made.
    static func expectRefused(_ target: RemoteTarget, store: CLIStore, absent: String, hint: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = TemporaryDirectory.contents(store.path)
        for path in [store.path, absent] {
            let r = try CLI.run(["sync", target.url], store: path, environment: target.environment)
            let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
            #expect(r.status == 1 && lines.count == 1 && r.stdout.isEmpty, "\(r)", sourceLocation: sourceLocation)
            #expect(lines.first?.contains(hint) == true, "'\(hint)' in \(r.stderr)", sourceLocation: sourceLocation)
        }
        #expect(TemporaryDirectory.contents(store.path) == before, "the store changed", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: absent), "a store was made at \(absent)", sourceLocation: sourceLocation)
    }
}

extension RemoteSyncCLITests {
    enum Refusal: String, CaseIterable, Sendable {
        case wrongSecret, missingBucket, serverDown
    }

    @Test("a wrong secret key, a missing bucket and a server that is down each exit 1 with one line and leave the store as it was",
          arguments: Refusal.allCases)
    func refusedS3Syncs(refusal: Refusal) throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let prefix = Self.freshPrefix()
        let store = CLIStore(path: dir.sub("refused-\(refusal)"))
        try store.ok("add", "kept whatever happens")
        try RemoteTarget.s3(server, prefix: prefix, home: dir.path).syncOK(store)
        try store.ok("add", "not yet sent")
        let (target, hint) =
            switch refusal {
            case .wrongSecret: (RemoteTarget.s3(server, prefix: prefix, home: dir.path, secret: "wrong"), "check the secret key")
            case .missingBucket: (RemoteTarget.s3(server, prefix: prefix, home: dir.path, bucket: "no-such-bucket"), "create its bucket")
            case .serverDown:
                (RemoteTarget.s3(server, prefix: prefix, home: dir.path, endpoint: "http://127.0.0.1:\(try S3TestServer.freePorts(1)[0])"), "check the endpoint")
            }
        try RefusedRemoteSync.expectRefused(target, store: store, absent: dir.sub("never-\(refusal)"), hint: hint)
    }

    @Test("through a proxy failing every fifth request, two stores of 30 tasks each converge with none lost or doubled")
    func faultsConverge() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let proxy = try S3FaultTests.FaultProxy("faults", upstream: server, dir: dir)
        let target = RemoteTarget.s3(server, prefix: Self.freshPrefix(), home: dir.path, endpoint: "http://127.0.0.1:\(proxy.port)")
        let stores = ["a", "b"].map { CLIStore(path: dir.sub("faults-\($0)")) }
        for (store, name) in zip(stores, ["a", "b"]) {
            for n in 1...30 { try store.ok("add", "\(name) \(n)") }
        }
        for store in stores + stores { try target.syncOK(store) }
        let expected = ["a", "b"].flatMap { name in (1...30).map { "\(name) \($0)" } }.sorted()
        for store in stores {
            let tasks = try store.tasks()
            #expect(tasks.compactMap { $0["title"] as? String }.sorted() == expected, "\(store.path)")
            #expect(Set(tasks.compactMap { $0["id"] as? String }).count == 60)
        }
        #expect(try RemoteConvergence.summary(stores[0]) == RemoteConvergence.summary(stores[1]))
        #expect(proxy.requests.contains { $0.hasSuffix("500-after-forwarding") }, "the proxy injected faults: \(proxy.requests)")
    }

    @Test("sync --watch --interval 0.5 on two stores carries an add across within seconds, and SIGTERM ends both with 0")
    func watchCarriesAnAdd() throws {
        let target = RemoteTarget.s3(try S3ServersTrait.server(.seaweedfs), prefix: Self.freshPrefix(), home: dir.path)
        let stores = ["a", "b"].map { CLIStore(path: dir.sub("watch-\($0)")) }
        for store in stores { try store.ok("add", "before watching") }
        let outputs = ["a", "b"].map { URL(fileURLWithPath: dir.sub("watch-output-\($0)")) }
        let watchers = try zip(stores, outputs).map { store, output in
            try CLI.start(["sync", target.url, "--watch", "--interval", "0.5"], store: store.path, output: output, environment: target.environment)
        }
        defer { for w in watchers where w.isRunning { kill(w.processIdentifier, SIGKILL) } }
        sleep(1)
        let added = Date()
        try stores[0].ok("add", "seen on the other side")
        var seen = false
        while !seen && Date().timeIntervalSince(added) < 10 {
            usleep(200_000)
            seen = try stores[1].tasks().contains { $0["title"] as? String == "seen on the other side" }
        }
        #expect(seen, "not carried within 10 s")
        #expect(Date().timeIntervalSince(added) < 5, "carried after \(Date().timeIntervalSince(added)) s")
        for (watcher, output) in zip(watchers, outputs) {
            kill(watcher.processIdentifier, SIGTERM)
            let r = CLI.collect(watcher, output: output)
            #expect(r.status == 0 && r.stderr.isEmpty, "\(r)")
        }
    }

    @Test("devices s3:// shows TO GET 3 for a device three operations ahead, and names a truncated object with its reason")
    func devicesNamesWhatIsBehind() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let prefix = Self.freshPrefix()
        let target = RemoteTarget.s3(server, prefix: prefix, home: dir.path)
        let (a, b) = (CLIStore(path: dir.sub("devices-a")), CLIStore(path: dir.sub("devices-b")))
        let id = try a.ok("add", "watched").trimmingCharacters(in: .whitespacesAndNewlines)
        try target.syncOK(a)
        try target.syncOK(b)
        try a.ok("done", id)
        try a.ok("edit", id, "--title", "watched closely")
        try a.ok("tag", id, "+followed")
        try target.syncOK(a)
        let replica = try Self.thisReplica(a)
        let forged = String(repeating: "ab", count: 16)
        let segment = try #require(try server.storage(prefix: prefix).list().first { $0.key.hasSuffix(".tlog") })
        let bytes = try #require(try server.storage(prefix: prefix).read(segment.key, largest: 1 << 20))
        let key = "tasklog-\(forged)/\(forged)-0000000000000001-0000000000000003.tlog"
        try server.storage(prefix: prefix).put(Array(bytes.prefix(bytes.count / 2)), as: key)
        let r = try CLI.run(["devices", target.url], store: b.path, environment: target.environment)
        #expect(r.status == 0, "\(r)")
        let row = try #require(r.lines.first { $0.split(separator: " ").dropFirst().first.map(String.init) == String(replica.prefix(8)) }, "\(r)")
        let columns = row.split(separator: " ", omittingEmptySubsequences: true)
        #expect(columns.count >= 5 && columns[4] == "3", "TO GET in: \(row)\n\(r.stdout)")
        let why = r.lines.first { $0.contains("why:") && $0.contains(key) }
        #expect(why?.contains("is not imported: ") == true && why?.contains("damaged record at byte") == true, "\(why ?? r.stdout)")
    }

    /// The replica id of `store`, from `devices --json`.
    static func thisReplica(_ store: CLIStore) throws -> String {
        let r = try CLI.run(["devices", "--json"], store: store.path)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r)")
        let devices = try #require(json["devices"] as? [[String: Any]], "\(r)")
        return try #require(devices.first { $0["thisDevice"] as? Bool == true }?["replica"] as? String, "\(r)")
    }
}
