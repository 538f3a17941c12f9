import Foundation
import Testing

/// Runs `Spec/reader/tasklog_reader.py`, a reader written from the Spec documents alone,
/// next to the real binary: on every golden vector, on a live store with a varied history,
/// and on stores synced through a shared folder, both must print the same bytes for
/// `list --all --json` (and the same version vector).
@Suite("independent reader")
struct IndependentReaderTests {
    static let root: String = {
        var dir = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { dir.deleteLastPathComponent() }
        return dir.path
    }()

    static let reader = "\(root)/Spec/reader/tasklog_reader.py"

    /// Runs `python3 args…` to completion.
    static func python(_ args: [String]) throws -> CLIResult {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-reader-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(atPath: out.path + ".out")
            try? FileManager.default.removeItem(atPath: out.path + ".err")
        }
        _ = FileManager.default.createFile(atPath: out.path + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: out.path + ".err", contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + args
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out.path + ".out"))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: out.path + ".err"))
        try p.run()
        p.waitUntilExit()
        return CLIResult(
            status: p.terminationStatus,
            stdout: (try? String(contentsOfFile: out.path + ".out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: out.path + ".err", encoding: .utf8)) ?? "")
    }

    /// Fails (never skips) when python3 or its lz4/xxhash packages are missing.
    static func requirePython(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try? python(["-c", "import lz4.block, xxhash"])
        try #require(
            r?.status == 0,
            "python3 cannot import lz4 and xxhash, which the independent reader needs: run `pip install lz4 xxhash` (\(r?.stderr ?? "python3 did not run"))",
            sourceLocation: sourceLocation)
    }

    /// Runs the reader: `STORE [--status]`, or `--vector FILE --replica HEX --placement P --file NAME`.
    static func read(_ args: [String]) throws -> CLIResult {
        try python([reader] + args)
    }

    /// The version vector both ways: `status --json` of the binary and the reader's `--status`.
    static func versions(store: String) throws -> (swift: [String: Int]?, reader: [String: Int]?) {
        let s = try CLI.run(["status", "--json"], store: store)
        let swift = (try? JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])?["versionVector"] as? [String: Int]
        let r = try read([store, "--status"])
        let reader = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Int]
        return (swift, reader)
    }

    /// Expects the binary and the reader to list `store` identically; returns the listing.
    @discardableResult
    static func expectSameListing(_ store: String, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let swift = try CLI.run(["list", "--all", "--json"], store: store)
        let python = try read([store])
        #expect(swift.status == 0, "\(label): tasklog: \(swift)", sourceLocation: sourceLocation)
        #expect(python.status == 0, "\(label): reader: \(python)", sourceLocation: sourceLocation)
        #expect(python.stdout == swift.stdout, "\(label): the reader and tasklog differ\nreader:\n\(python.stdout)\(python.stderr)\ntasklog:\n\(swift.stdout)", sourceLocation: sourceLocation)
        let v = try versions(store: store)
        #expect(v.swift != nil && v.reader == v.swift, "\(label): version vectors differ: reader \(String(describing: v.reader)), tasklog \(String(describing: v.swift))", sourceLocation: sourceLocation)
        let n = try deviceNames(store: store)
        #expect(n.swift != nil && n.reader == n.swift, "\(label): device names differ: reader \(String(describing: n.reader)), tasklog \(String(describing: n.swift))", sourceLocation: sourceLocation)
        return swift.stdout
    }

    /// Each named device's name both ways: `devices --json` of the binary and the reader's `--devices`.
    static func deviceNames(store: String) throws -> (swift: [String: String]?, reader: [String: String]?) {
        let s = try CLI.run(["devices", "--json"], store: store)
        let devices = (try? JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])?["devices"] as? [[String: Any]]
        let swift = devices?.reduce(into: [String: String]()) { out, d in
            if let name = d["name"] as? String { out[d["replica"] as! String] = name }
        }
        let r = try read([store, "--devices"])
        return (swift, (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: String])
    }

    // MARK: golden vectors

    @Test("every golden vector reads the same in the reader and in tasklog", arguments: GoldenVectorTests.names)
    func goldenVector(name: String) throws {
        try Self.requirePython()
        let e = try GoldenVectorTests.expected(name)
        let dir = TemporaryDirectory()
        let store = dir.sub("store")
        let fm = FileManager.default
        let vector = "\(GoldenVectorTests.vectors)/\(name).tlog"
        if e.placement == "store" {
            try fm.copyItem(atPath: "\(GoldenVectorTests.vectors)/\(e.file)", toPath: store)
        } else {
            try fm.createDirectory(atPath: "\(store)/logs/\(e.replica)", withIntermediateDirectories: true)
            try "tasklog-store 1\nreplica \(e.replica)\n".write(toFile: "\(store)/tasklog-store", atomically: true, encoding: .utf8)
            try fm.copyItem(atPath: vector, toPath: "\(store)/logs/\(e.replica)/\(e.file)")
        }
        let listing = try Self.expectSameListing(store, name)
        #expect(GoldenVectorTests.taskLines(listing) == e.taskLines, "\(name)")
        let python = try Self.read([store])
        #expect(python.stderr.contains("warning:") == (e.ending == "corrupt"), "\(name): \(python.stderr)")
        if e.placement != "store" {
            let single = try Self.read(["--vector", vector, "--replica", e.replica, "--placement", e.placement, "--file", e.file])
            #expect(single.stdout == listing, "\(name): --vector mode: \(single)")
        }
    }

    // MARK: a live store

    @Test("a live store with a varied history, sealed segments and a tail")
    func liveStore() throws {
        try Self.requirePython()
        let dir = TemporaryDirectory()
        let s = CLIStore(path: dir.sub("store"))
        func id(_ out: String) -> String { out.trimmingCharacters(in: .whitespacesAndNewlines) }

        let milk = id(try s.ok(
            "add", "Buy milk", "--notes", "semi\tskimmed", "--due", "2026-12-01", "--priority", "2",
            "--tag", "shop", "--tag", "weekly", "--list", "errands", "--meta", "aisle=4", "--meta", "store=Coop"))
        let odd = id(try s.ok("add", "Café ☕ \"quoted\" back\\slash\nnew line\u{01}\r/\u{7F} 日本語 🎉", "--tag", "Zulu", "--tag", "café"))
        let meeting = id(try s.ok("add", "Meeting", "--due", "2026-12-02T09:30:00Z", "--priority", "0", "--notes", ""))
        let old = id(try s.ok("add", "Ancient", "--due", "1969-07-20"))
        try s.ok("edit", milk, "--title", "Buy oat milk", "--meta", "aisle=5", "--unset-meta", "store", "--meta", "ключ=значение")
        try s.ok("edit", meeting, "--no-due", "--priority", "3", "--list", "work", "--no-notes")
        try s.ok("tag", milk, "+dairy", "-shop")
        try s.ok("tag", odd, "-Zulu", "+émoji🎉")
        try s.ok("done", milk, meeting)
        try s.ok("reopen", meeting)
        try s.ok("rm", old)

        let file = dir.sub("import.json")
        try """
        [
        {"id":"import-1","title":"Imported one","notes":"from a file","priority":1,"due":"2027-01-01","tags":["z","a"],"list":"inbox","meta":{"k":"v","b":"\\u00e9"}},
        {"id":"Zeta.2","title":"Tab\\tand \\"quotes\\"","done":true},
        {"id":"0bb6c586-f7cd-431c-a5e1-8cd9f70d1d4f","title":"A UUID chosen by the caller","due":"2026-12-24T18:00:00.000Z"},
        {"id":"\(milk)","title":"Buy milk (imported)","tags":["dairy","import"],"meta":{"aisle":"6"}}
        ]
        """.write(toFile: file, atomically: true, encoding: .utf8)
        try s.ok("import", file)
        try Self.expectSameListing(s.path, "before compact")

        try s.ok("compact")
        try Self.expectSameListing(s.path, "right after compact")

        try s.ok("restore", old)
        try s.ok("edit", "import-1", "--title", "Imported one, edited after compact", "--no-priority", "--meta", "k=w")
        try s.ok("tag", "Zeta.2", "+later", "-none")
        try s.ok("reopen", "Zeta.2")
        try s.ok("rm", "0bb6c586-f7cd-431c-a5e1-8cd9f70d1d4f")
        try s.ok("add", "After compact", "--tag", "tail")
        try s.ok("done", odd)

        let files = s.logFiles()
        #expect(files.contains { !$0.hasSuffix("/tail.tlog") }, "a sealed segment: \(files)")
        #expect(files.contains { $0.hasSuffix("/tail.tlog") }, "a tail: \(files)")
        let listing = try Self.expectSameListing(s.path, "after more edits")
        #expect(listing.contains("\"title\":\"Ancient\""), "restored")
        #expect(!listing.contains("A UUID chosen by the caller"))
        #expect(try s.tasks().count == 7)
    }

    // MARK: synced stores

    @Test("two stores synced through a shared folder, each holding both replicas' logs")
    func syncedStores() throws {
        try Self.requirePython()
        let dir = TemporaryDirectory()
        let shared = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        try a.ok("init", "--name", "laptop")
        try b.ok("init", "--name", "Anna's phone ☎")

        try a.ok("add", "From A", "--tag", "a", "--priority", "1", "--meta", "origin=a")
        try a.ok("add", "Shared", "--due", "2026-12-05")
        try b.ok("add", "From B", "--list", "b-list", "--notes", "written on b")
        for s in [a, b, a, b] { try s.ok("sync", shared) }

        // Concurrent edits of one task on both sides, then converge again.
        try a.ok("edit", firstID(a, title: "Shared"), "--title", "Shared (A's title)")
        try b.ok("edit", firstID(b, title: "Shared"), "--title", "Shared (B's title)", "--priority", "2")
        try b.ok("tag", firstID(b, title: "From A"), "-a", "+b-tag")
        try a.ok("tag", firstID(a, title: "From A"), "+a")
        try a.ok("rm", firstID(a, title: "From B"))
        try b.ok("edit", firstID(b, title: "From B"), "--title", "From B, edited concurrently with a removal")
        try b.ok("done", firstID(b, title: "Shared (B's title)"))
        try a.ok("rename", "work laptop")
        for s in [a, b, a, b] { try s.ok("sync", shared) }

        for (name, s) in [("a", a), ("b", b)] {
            let replicas = (try? FileManager.default.contentsOfDirectory(atPath: s.full("logs")))?.filter { !$0.hasPrefix(".") } ?? []
            #expect(replicas.count == 2, "store \(name) holds \(replicas)")
        }
        let listingA = try Self.expectSameListing(a.path, "store a")
        let listingB = try Self.expectSameListing(b.path, "store b")
        #expect(listingA == listingB)
        #expect(!listingA.contains("From B"), "a removal wins over a concurrent edit")
    }

    /// The id of the live task with this title (list --all --json of the binary).
    func firstID(_ s: CLIStore, title: String) throws -> String {
        let match = try s.tasks().first { ($0["title"] as? String) == title }
        return try #require(match?["id"] as? String, "no task titled \(title)")
    }
}
