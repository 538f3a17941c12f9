import Foundation
import TestSupport
import Testing

/// Sync through shared folders, driven through the real binary on real folders.
@Suite("folder sync")
struct FolderSyncTests {
    let dir = TemporaryDirectory()

    func replica(_ name: String) -> CLIStore { CLIStore(path: dir.sub(name)) }

    func folder(_ name: String) throws -> String { try dir.folder(name) }

    func json(_ s: CLIStore) throws -> String { try s.ok("list", "--all", "--json") }

    func id(_ out: String) -> String { out.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Replicas a and c each add a task and publish it into `shared`; b has not synced yet.
    func twoPublishers(_ shared: String) throws -> (CLIStore, CLIStore, CLIStore) {
        let (a, b, c) = (replica("a"), replica("b"), replica("c"))
        try a.ok("add", "from a")
        try a.ok("sync", shared)
        try c.ok("add", "from c")
        try c.ok("sync", shared)
        return (a, b, c)
    }

    func hashes(of path: String) -> [String: Data] { TemporaryDirectory.contents(path) }

    @Test("two and three replicas converge through one folder to byte-identical JSON")
    func threeReplicasOneFolder() throws {
        let shared = try folder("shared")
        let (a, b, c) = (replica("a"), replica("b"), replica("c"))
        try a.ok("add", "from a", "--tag", "x")
        try b.ok("add", "from b", "--priority", "2")
        try c.ok("add", "from c")
        for s in [a, b, c, a, b] { try s.ok("sync", shared) }
        let expected = try json(a)
        #expect(try json(b) == expected && json(c) == expected)
        #expect(try a.tasks().count == 3)
    }

    @Test("relaying: A and C never share a folder, yet converge through B (A ↔ f1 ↔ B ↔ f2 ↔ C)")
    func chainOfFolders() throws {
        let (f1, f2) = (try folder("f1"), try folder("f2"))
        let (a, b, c) = (replica("a"), replica("b"), replica("c"))
        try a.ok("add", "from a")
        try c.ok("add", "from c")
        try a.ok("sync", f1)
        try b.ok("sync", f1)
        try b.ok("sync", f2)
        try c.ok("sync", f2)
        try b.ok("sync", f2)
        try b.ok("sync", f1)
        try a.ok("sync", f1)
        #expect(try json(a) == json(c))
        #expect(try json(a) == json(b))
        #expect(try a.tasks().count == 2)
    }

    @Test("concurrent edits of different fields of one task both survive")
    func differentFieldsBothSurvive() throws {
        let shared = try folder("shared")
        let (a, b) = (replica("a"), replica("b"))
        let t = id(try a.ok("add", "shared task"))
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        try a.ok("edit", t, "--priority", "3")
        try b.ok("edit", t, "--title", "renamed on b")
        for s in [a, b, a] { try s.ok("sync", shared) }
        for s in [a, b] {
            let task = try #require(try s.tasks().first)
            #expect(task["priority"] as? Int == 3 && task["title"] as? String == "renamed on b")
        }
    }

    @Test("concurrent edits of the same field converge to the later write on every replica")
    func sameFieldLaterWriteWins() throws {
        let shared = try folder("shared")
        let (a, b, c) = (replica("a"), replica("b"), replica("c"))
        let t = id(try a.ok("add", "original"))
        for s in [a, b, c] { try s.ok("sync", shared) }
        try b.ok("edit", t, "--title", "earlier from b")
        usleep(20_000)
        try c.ok("edit", t, "--title", "later from c")
        usleep(20_000)
        try a.ok("edit", t, "--notes", "unrelated")
        for s in [c, b, a, c, b] { try s.ok("sync", shared) }
        for s in [a, b, c] {
            #expect(try s.tasks().first?["title"] as? String == "later from c")
        }
        #expect(try json(a) == json(b) && json(b) == json(c))
    }

    @Test("a tag added on one replica while removed on another stays (add wins)")
    func tagAddWins() throws {
        let shared = try folder("shared")
        let (a, b) = (replica("a"), replica("b"))
        let t = id(try a.ok("add", "tagged", "--tag", "home"))
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        try a.ok("tag", t, "-home")
        try b.ok("tag", t, "+home", "+new")
        for s in [a, b, a] { try s.ok("sync", shared) }
        for s in [a, b] { #expect(try s.tasks().first?["tags"] as? [String] == ["home", "new"]) }
    }

    @Test("a delete wins over a concurrent edit, and restore shows the edit")
    func deleteVersusConcurrentEdit() throws {
        let shared = try folder("shared")
        let (a, b) = (replica("a"), replica("b"))
        let t = id(try a.ok("add", "doomed"))
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        try a.ok("rm", t)
        try b.ok("edit", t, "--title", "edited meanwhile")
        for s in [a, b, a] { try s.ok("sync", shared) }
        #expect(try a.tasks().isEmpty && b.tasks().isEmpty)
        try b.ok("restore", t)
        for s in [b, a] { try s.ok("sync", shared) }
        for s in [a, b] { #expect(try s.tasks().first?["title"] as? String == "edited meanwhile") }
    }

    @Test("syncing again moves nothing and duplicates nothing")
    func repeatedSyncIsIdempotent() throws {
        let shared = try folder("shared")
        let (a, b) = (replica("a"), replica("b"))
        try a.ok("add", "one")
        try b.ok("add", "two")
        for s in [a, b, a] { try s.ok("sync", shared) }
        let before = hashes(of: shared)
        let state = try json(a)
        for s in [a, b, a, b] {
            let out = try s.ok("sync", shared)
            #expect(out.contains("received 0 operations") && out.contains("sent 0 operations"), "\(out)")
        }
        #expect(hashes(of: shared) == before)
        #expect(try json(a) == state && a.tasks().count == 2)
        let status = try JSONSerialization.jsonObject(with: Data(try a.ok("status", "--json").utf8)) as! [String: Any]
        #expect(status["ops"] as? Int == 4)
    }

    @Test("a folder littered by sync clients and damaged copies: junk skipped with a note, everything valid imported, retried later")
    func litteredFolder() throws {
        let shared = try folder("shared")
        let (a, b, c) = try twoPublishers(shared)
        // Junk of every kind a sync client or a person leaves behind.
        let ns = "tasklog-" + id(try a.ok("init"))
        let junk = ["desktop.ini", "README.txt", "\(ns)/.x.tlog.icloud", "\(ns)/.syncthing.abc.tlog.tmp", "\(ns)/~lock.tlog",
                    "\(ns)/seg (conflicted copy 2026-11-30).tlog", "\(ns)/seg.sync-conflict-20261130-1.tlog"]
        for j in junk { try Data("junk".utf8).write(to: URL(fileURLWithPath: (shared as NSString).appendingPathComponent(j))) }
        // C's file is cut short mid-copy.
        let cns = (shared as NSString).appendingPathComponent("tasklog-" + id(try c.ok("init")))
        let cfile = try #require(try FileManager.default.contentsOfDirectory(atPath: cns).first)
        let cpath = (cns as NSString).appendingPathComponent(cfile)
        let full = try Data(contentsOf: URL(fileURLWithPath: cpath))
        try full.prefix(full.count - 7).write(to: URL(fileURLWithPath: cpath))
        let before = hashes(of: shared)
        let r = try b.run("sync", shared)
        #expect(r.status == 0, "\(r)")
        for j in junk { #expect(r.stderr.contains("skipped") && r.stderr.contains((j as NSString).lastPathComponent), "\(j): \(r.stderr)") }
        #expect(r.stderr.contains(cfile) && r.stderr.contains("next sync"), "\(r.stderr)")
        #expect(try b.tasks().map { $0["title"] as! String } == ["from a"])
        // Nothing b did not write was changed or removed.
        for (k, v) in before { #expect(hashes(of: shared)[k] == v, "\(k) changed") }
        // The copy finishes; the next sync picks it up.
        try full.write(to: URL(fileURLWithPath: cpath))
        try b.ok("sync", shared)
        #expect(Set(try b.tasks().map { $0["title"] as! String }) == ["from a", "from c"])
    }

    @Test("random interleavings of edits and syncs across three replicas end identical", arguments: [1, 2, 3] as [UInt64])
    func randomInterleavingsConverge(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let shared = try folder("shared-\(seed)")
        let stores = [replica("r\(seed)a"), replica("r\(seed)b"), replica("r\(seed)c")]
        var ids: [String] = []
        for _ in 0..<36 {
            let s = stores[Int(rng.next() % 3)]
            let known = try s.tasks().map { $0["id"] as! String }
            let roll = rng.next() % 10
            switch roll {
            case 0, 1: ids.append(id(try s.ok("add", "task \(ids.count)")))
            case 2: if let t = known.randomElement(using: &rng) { try s.ok("edit", t, "--title", "t\(rng.next() % 5)") }
            case 3: if let t = known.randomElement(using: &rng) { try s.ok("edit", t, "--priority", "\(rng.next() % 4)") }
            case 4: if let t = known.randomElement(using: &rng) { try s.ok("tag", t, "+g\(rng.next() % 3)", "-g\(rng.next() % 3)") }
            case 5: if let t = known.randomElement(using: &rng) { try s.ok("done", t) }
            case 6: if let t = known.randomElement(using: &rng) { try s.ok("rm", t) }
            default: try s.ok("sync", shared)
            }
        }
        for _ in 0..<2 { for s in stores { try s.ok("sync", shared) } }
        let expected = try json(stores[0])
        for s in stores { #expect(try json(s) == expected, "seed \(seed)") }
    }

    @Test("a store restored from an old backup imports its own operations first and never reuses sequence numbers")
    func restoredBackupDoesNotReuseSequenceNumbers() throws {
        let shared = try folder("shared")
        let a = replica("a")
        try a.ok("add", "before backup")
        let backup = dir.sub("backup")
        try FileManager.default.copyItem(atPath: a.path, toPath: backup)
        try a.ok("add", "after backup")
        try a.ok("sync", shared)
        try FileManager.default.removeItem(atPath: a.path)
        try FileManager.default.moveItem(atPath: backup, toPath: a.path)
        #expect(try a.tasks().count == 1)
        try a.ok("sync", shared)
        #expect(try a.tasks().count == 2)
        try a.ok("add", "after restore")
        try a.ok("sync", shared)
        let b = replica("b")
        try b.ok("sync", shared)
        #expect(Set(try b.tasks().map { $0["title"] as! String }) == ["before backup", "after backup", "after restore"])
        let seqs = try a.ok("log", "--json").split(separator: "\n").map {
            (try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any])["seq"] as! Int
        }
        #expect(seqs == Array(1...6))
    }

    @Test("a replica merges its own small published files; other readers still get every operation")
    func publishedFilesAreMerged() throws {
        let shared = try folder("shared")
        let (a, b) = (replica("a"), replica("b"))
        for i in 0..<12 {
            try a.ok("add", "task \(i)")
            try a.ok("sync", shared)
        }
        let ns = try #require(try FileManager.default.contentsOfDirectory(atPath: shared).first)
        let files = try FileManager.default.contentsOfDirectory(atPath: (shared as NSString).appendingPathComponent(ns))
        #expect(files.count < 8, "\(files)")
        try b.ok("sync", shared)
        #expect(try b.tasks().count == 12)
    }

    @Test("a segment with a damaged byte is skipped with a note naming it; the other replicas' segments still import")
    func damagedSegmentInFolder() throws {
        let shared = try folder("shared")
        let (_, b, c) = try twoPublishers(shared)
        let cns = (shared as NSString).appendingPathComponent("tasklog-" + id(try c.ok("init")))
        let cfile = try #require(try FileManager.default.contentsOfDirectory(atPath: cns).first)
        let cpath = (cns as NSString).appendingPathComponent(cfile)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: cpath))
        bytes[bytes.count - 3] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: cpath))
        let r = try b.run("sync", shared)
        #expect(r.status == 0 && r.stderr.contains("skipped") && r.stderr.contains(cfile) && r.stderr.contains("damaged"), "\(r)")
        #expect(try b.tasks().map { $0["title"] as! String } == ["from a"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: cpath)) == bytes, "a file b did not write was changed")
    }

    @Test("a store folder copied to a second device and written on both forks; syncing resolves it, reports it and keeps every task on both")
    func copiedStoreForkIsResolved() throws {
        let shared = try folder("shared")
        let a = replica("a")
        try a.ok("add", "before the copy")
        try FileManager.default.copyItem(atPath: a.path, toPath: dir.sub("copy"))
        let copy = replica("copy")
        try a.ok("add", "written on the original")
        try copy.ok("add", "written on the copy")
        try a.ok("sync", shared)
        let r = try copy.run("sync", shared)
        #expect(r.status == 0 && r.stderr.contains("fork of replica") && r.stderr.contains("resolved"), "\(r)")
        try a.ok("sync", shared)
        let all: Set<String> = ["before the copy", "written on the original", "written on the copy"]
        #expect(Set(try copy.tasks().map { $0["title"] as! String }) == all)
        #expect(Set(try a.tasks().map { $0["title"] as! String }) == all)
        // Exactly one of the two copies went on under a new replica id, and both keep writing.
        #expect(try id(a.ok("init")) != id(copy.ok("init")))
        try a.ok("add", "after, on the original")
        try copy.ok("add", "after, on the copy")
        for _ in 0..<2 {
            try a.ok("sync", shared)
            try copy.ok("sync", shared)
        }
        #expect(try a.ok("list", "--all", "--json") == copy.ok("list", "--all", "--json"))
        #expect(try a.tasks().count == 5)
        #expect(try a.run("replay", "--verify").status == 0)
    }

    @Test("sync of a folder that does not exist fails with exit 1 and advice")
    func missingFolder() throws {
        let r = try replica("a").run("sync", dir.sub("nowhere"))
        #expect(r.status == 1 && r.stderr.contains("does not exist"), "\(r)")
    }
}
