import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// `tasklog devices [DIR]`, `init --name` and `rename`, through the real binary: names travel
/// with the log, and beside a shared folder each device's row says what the folder holds and
/// why an edit has not arrived.
@Suite("devices")
struct DevicesTests {
    let dir = TemporaryDirectory()

    /// `devices args… --json` parsed; the devices by name.
    func devices(_ store: CLIStore, _ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> (
        byName: [String: [String: Any]], all: [String: Any]
    ) {
        let r = try store.run(["devices"] + args + ["--json"])
        #expect(r.status == 0, "\(r)", sourceLocation: sourceLocation)
        let text = r.stdout
        let all = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        let list = all["devices"] as? [[String: Any]] ?? []
        return (Dictionary(list.map { (($0["name"] as? String) ?? ($0["replica"] as! String), $0) }) { a, _ in a }, all)
    }

    func store(_ name: String, named device: String) throws -> CLIStore {
        let s = CLIStore(path: dir.sub(name))
        try s.ok("init", "--name", device)
        return s
    }

    /// The problems of a device's folder object.
    func problems(_ device: [String: Any]?) -> [[String: Any]] {
        (device?["folder"] as? [String: Any])?["problems"] as? [[String: Any]] ?? []
    }

    @Test("three stores through a folder learn each other's names; the one behind is told what it will get")
    func threeStoresOneBehind() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone, tablet) = (try store("a", named: "laptop"), try store("b", named: "phone"), try store("c", named: "tablet"))
        try laptop.ok("add", "Buy milk")
        for s in [laptop, phone, tablet, laptop] { try s.ok("sync", folder) }
        try phone.ok("add", "Call Anna")
        try phone.ok("add", "Book flights")
        try phone.ok("sync", folder)

        let local = try devices(laptop).byName
        #expect(Set(local.keys) == ["laptop", "phone", "tablet"], "\(local)")
        #expect(local["laptop"]?["thisDevice"] as? Bool == true && local["phone"]?["held"] as? Int == 1)
        #expect(local["phone"]?["lastSeen"] is String)

        let (beside, all) = try devices(laptop, folder)
        let phoneRow = try #require(beside["phone"]?["folder"] as? [String: Any])
        #expect(phoneRow["storeLacks"] as? Int == 4 && phoneRow["nextSyncBrings"] as? Int == 4, "\(phoneRow)")
        #expect(phoneRow["ranges"] as? [[Int]] == [[1, 5]] && phoneRow["folderLacks"] as? Int == 0)
        #expect(problems(beside["phone"]).isEmpty && (all["folder"] as? [String: Any])?["epoch"] is NSNull)

        try laptop.ok("add", "Water plants")
        let text = try laptop.ok("devices", folder)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("DEVICE") == true && lines.count == 4, "\(text)")
        let laptopLine = try #require(lines.first { $0.hasPrefix("laptop (this)") })
        #expect(laptopLine.split(separator: " ", omittingEmptySubsequences: true).contains("2"), "to send: \(laptopLine)")
        try laptop.ok("sync", folder)
        #expect((try devices(laptop, folder).byName["phone"]?["folder"] as? [String: Any])?["storeLacks"] as? Int == 0)
    }

    @Test("a truncated file in the folder is named under its device with the reason")
    func truncatedFileIsNamed() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone) = (try store("a", named: "laptop"), try store("b", named: "phone"))
        try phone.ok("add", "Call Anna")
        try phone.ok("sync", folder)
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tlog") }
        let file = try #require(files.first)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/" + file))
        try handle.truncate(atOffset: 50)
        try handle.close()

        let row = try devices(laptop, folder).byName
        let problem = try #require(problems(row.values.first { ($0["thisDevice"] as? Bool) == false }).first)
        #expect(problem["kind"] as? String == "skippedFile" && (problem["path"] as? String)?.hasSuffix(file) == true, "\(problem)")
        #expect(problem["first"] as? Int == 1 && !(problem["message"] as? String ?? "").isEmpty)
        let text = try laptop.ok("devices", folder)
        #expect(text.contains("why: ") && text.contains(file) && text.contains("not imported"), "\(text)")
    }

    @Test("operations no file holds are named as missing, and the later ones wait")
    func missingRange() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone) = (try store("a", named: "laptop"), try store("b", named: "phone"))
        try phone.ok("add", "one")
        try phone.ok("sync", folder)
        let first = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tlog") }
        try phone.ok("add", "two")
        try phone.ok("sync", folder)
        for f in first { try FileManager.default.removeItem(atPath: folder + "/" + f) }

        let row = try #require(try devices(laptop, folder).byName.values.first { ($0["thisDevice"] as? Bool) == false })
        let missing = try #require(problems(row).first { $0["kind"] as? String == "missingOperations" }, "\(row)")
        // The second file starts with the commit the first ended with (sent again for forks).
        let held = (row["folder"] as? [String: Any])?["ranges"] as? [[Int]]
        let start = try #require(held?.first?.first, "\(row)")
        #expect(missing["first"] as? Int == 1 && missing["last"] as? Int == start - 1 && held == [[start, 5]], "\(missing)")
        #expect((row["folder"] as? [String: Any])?["nextSyncBrings"] as? Int == 0)
        #expect(try laptop.ok("devices", folder).contains("why: operation\(start > 2 ? "s 1-\(start - 1)" : " 1") \(start > 2 ? "are" : "is") in no usable file"))
    }

    @Test("a folder rekeyed after this store last synced says which key epoch it lacks")
    func rekeyedFolderLacksTheEpoch() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone) = (try store("a", named: "laptop"), try store("b", named: "phone"))
        let old = dir.sub("old"), new = dir.sub("new")
        try "correct horse\n".write(toFile: old, atomically: true, encoding: .utf8)
        try "battery staple\n".write(toFile: new, atomically: true, encoding: .utf8)
        try phone.ok("sync", folder, "--encrypt", "--passphrase-file", old)
        try laptop.ok("sync", folder, "--passphrase-file", old)
        try phone.ok("sync", folder, "--rekey", "--passphrase-file", new)
        try phone.ok("add", "Secret plan")
        try phone.ok("sync", folder)

        let (rows, all) = try devices(laptop, folder)
        let folderProblems = (all["folder"] as? [String: Any])?["problems"] as? [[String: Any]] ?? []
        let epoch = try #require(folderProblems.first { $0["kind"] as? String == "keyEpochMissing" }, "\(all)")
        #expect(epoch["epoch"] as? Int == 2 && epoch["known"] as? Int == 1)
        #expect(problems(rows["phone"]).contains { $0["kind"] as? String == "skippedFile" }, "\(rows)")
        #expect(try laptop.ok("devices", folder).contains("folder: the folder was rekeyed to key epoch 2"))
    }

    @Test("files of a copied store that kept writing are named as a fork")
    func forkIsNamed() throws {
        let folder = try dir.folder("shared")
        let laptop = try store("a", named: "laptop")
        try laptop.ok("add", "one")
        try laptop.ok("sync", folder)
        let copy = CLIStore(path: dir.sub("copy"))
        try FileManager.default.copyItem(atPath: laptop.path, toPath: copy.path)
        try copy.ok("add", "written by the copy")
        try copy.ok("sync", folder)
        try laptop.ok("add", "written by the original")

        let me = try #require(try devices(laptop, folder).byName["laptop"])
        let fork = try #require(problems(me).first { $0["kind"] as? String == "fork" }, "\(me)")
        #expect(fork["seq"] as? Int == 4 && (fork["namespace"] as? String)?.hasPrefix("tasklog-") == true, "\(fork)")
    }

    @Test("a hostile name (escapes, controls, 1 MB) arrives bounded to 64 bytes and is shown escaped")
    func hostileNameIsBounded() throws {
        let folder = try dir.folder("shared")
        let laptop = try store("a", named: "laptop")
        let hostilePath = dir.sub("h")
        let hostile = "\u{1b}]0;owned\u{7}\u{1b}[31m\u{202e}x" + String(repeating: "\u{1b}[2J", count: 1 << 18)
        do {
            let h = try TaskStore.open(at: hostilePath)
            try h.commit([.deviceName(hostile)])
            h.waitForMaintenance()
        }
        try CLIStore(path: hostilePath).ok("sync", folder)
        try laptop.ok("sync", folder)

        let row = try #require(try devices(laptop).byName.values.first { ($0["thisDevice"] as? Bool) == false })
        let name = try #require(row["name"] as? String)
        #expect(name.utf8.count <= 64 && !name.unicodeScalars.contains(where: DeviceName.isControl), "\(name.debugDescription)")
        #expect(name.hasPrefix("\u{FFFD}]0;owned"))
        for text in [try laptop.ok("devices"), try laptop.ok("devices", folder), try laptop.ok("log")] {
            #expect(!text.unicodeScalars.contains { DeviceName.isControl($0) && $0 != "\n" } && text.utf8.count < 4096)
        }
        let refused = try laptop.run("rename", "\u{1b}[31mred")
        #expect(refused.status == 2 && refused.stderr.contains("control characters") && !refused.stderr.contains("\u{1b}"), "\(refused)")
        let long = try laptop.run("rename", String(repeating: "x", count: 65))
        #expect(long.status == 2 && long.stderr.contains("at most 64 bytes"), "\(long)")
    }

    @Test("names survive the snapshot; a snapshot of the version before names is rebuilt without a warning")
    func namesInTheSnapshot() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone) = (try store("a", named: "laptop"), try store("b", named: "phone"))
        for s in [phone, laptop] { try s.ok("sync", folder) }
        try laptop.ok("compact")
        let snapshot = laptop.full("snapshot")
        var bytes = try #require(FileManager.default.contents(atPath: snapshot))
        #expect(bytes[4] == 3)
        #expect(Set(try devices(laptop).byName.keys) == ["laptop", "phone"])
        bytes[4] = 1
        try bytes.write(to: URL(fileURLWithPath: snapshot))
        let r = try laptop.run("devices")
        #expect(r.status == 0 && r.stderr.isEmpty && r.stdout.contains("phone"), "\(r)")
        let verified = try laptop.run("replay", "--verify")
        #expect(verified.status == 0 && verified.stdout.contains("no saved state"), "\(verified)")
    }

    @Test("renames converge: every store shows the newest name, whatever it saw before")
    func renameConverges() throws {
        let folder = try dir.folder("shared")
        let (laptop, phone, tablet) = (try store("a", named: "laptop"), try store("b", named: "phone"), try store("c", named: "tablet"))
        for s in [laptop, phone] { try s.ok("sync", folder) }
        #expect(try devices(phone).byName["laptop"] != nil)
        try laptop.ok("rename", "work", "laptop")
        try laptop.ok("rename", "old", "laptop")
        try laptop.ok("sync", folder)
        for s in [tablet, phone, laptop] { try s.ok("sync", folder) }
        for s in [laptop, phone, tablet] {
            #expect(Set(try devices(s).byName.keys) == ["old laptop", "phone", "tablet"], "\(s.path)")
        }
        #expect(try laptop.ok("rename", "old", "laptop").contains("now named old laptop"))
        let renames = try laptop.ok("log").split(separator: "\n").filter { $0.contains("  name \"") && $0.hasSuffix("laptop\"") }
        #expect(renames.count == 3, "the same name again writes nothing: \(renames)")
    }
}
