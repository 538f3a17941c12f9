import Foundation
import Testing

@Suite("tasklog CLI")
struct CLITests {
    let dir = TemporaryDirectory()
    var store: CLIStore { CLIStore(path: dir.sub("store")) }

    @Test("init creates the store and prints a 32-hex replica id; a second init keeps it")
    func initPrintsReplica() throws {
        let id = try store.ok("init").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        #expect(try store.ok("init").trimmingCharacters(in: .whitespacesAndNewlines) == id)
    }

    @Test("add prints only the new id and list --json prints exactly the contract's task form")
    func addThenListJSON() throws {
        let id = try store.ok("add", "Buy milk", "--priority", "2", "--tag", "shop", "--tag", "home", "--due", "2026-12-01")
            .trimmingCharacters(in: .newlines)
        #expect(id.range(of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#, options: .regularExpression) != nil)
        let r = try store.run("list", "--json")
        let json = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let pattern = #"^\[\n\{"id":"ID","title":"Buy milk","notes":null,"done":false,"completedAt":null,"priority":2,"due":"2026-12-01","tags":\["home","shop"\],"list":null,"meta":\{\},"createdAt":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","updatedAt":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\}\n\]$"#
            .replacingOccurrences(of: "ID", with: id)
        #expect(json.range(of: pattern, options: .regularExpression) != nil, "\(json)")
    }

    @Test("edit changes only the fields it is given")
    func editTouchesOnlyGivenFields() throws {
        let id = try store.ok("add", "Write report", "--notes", "draft", "--priority", "1", "--list", "work").trimmingCharacters(in: .newlines)
        try store.ok("edit", String(id.prefix(6)), "--title", "Write the report", "--meta", "color=blue")
        let t = try #require(try store.tasks().first)
        #expect(t["title"] as? String == "Write the report")
        #expect(t["notes"] as? String == "draft")
        #expect(t["priority"] as? Int == 1)
        #expect(t["list"] as? String == "work")
        #expect(t["meta"] as? [String: String] == ["color": "blue"])
        try store.ok("edit", id, "--no-priority", "--no-list", "--unset-meta", "color", "--due", "2026-12-24T18:30:00+01:00")
        let u = try #require(try store.tasks().first)
        #expect(u["priority"] is NSNull)
        #expect(u["list"] is NSNull)
        #expect(u["meta"] as? [String: String] == [:])
        #expect(u["due"] as? String == "2026-12-24T17:30:00.000Z")
        #expect(u["notes"] as? String == "draft")
    }

    @Test("done sets completedAt, reopen clears it, and repeating either succeeds")
    func doneAndReopen() throws {
        let id = try store.ok("add", "Pay rent").trimmingCharacters(in: .newlines)
        try store.ok("done", id)
        try store.ok("done", id)
        let t = try #require(try store.tasks().first)
        #expect(t["done"] as? Bool == true)
        #expect(t["completedAt"] is String)
        #expect(try store.ok("list").contains("no tasks"))
        #expect(try store.ok("list", "--done").contains("Pay rent"))
        try store.ok("reopen", id)
        try store.ok("reopen", id)
        let u = try #require(try store.tasks().first)
        #expect(u["done"] as? Bool == false)
        #expect(u["completedAt"] is NSNull)
    }

    @Test("tag +T -T adds and removes; removing an absent tag succeeds")
    func tagAddRemove() throws {
        let id = try store.ok("add", "Plant tulips", "--tag", "garden").trimmingCharacters(in: .newlines)
        try store.ok("tag", id, "+spring", "-garden", "-absent")
        #expect(try store.tasks().first?["tags"] as? [String] == ["spring"])
        #expect(try store.run("tag", id, "spring").status == 2)
    }

    @Test("rm hides a task, restore brings it back with its fields; restoring a live task succeeds")
    func removeAndRestore() throws {
        let id = try store.ok("add", "Fix bike", "--priority", "3").trimmingCharacters(in: .newlines)
        try store.ok("rm", id)
        #expect(try store.tasks().isEmpty)
        let show = try store.run("show", id)
        #expect(show.status == 1 && show.stderr.contains("restore"))
        try store.ok("restore", String(id.prefix(5)))
        try store.ok("restore", id)
        let t = try #require(try store.tasks().first)
        #expect(t["title"] as? String == "Fix bike" && t["priority"] as? Int == 3)
    }

    @Test("usage errors exit 2 with one 'tasklog: error:' line")
    func usageErrorsExitTwo() throws {
        for args in [["frobnicate"], ["list", "--sortt", "due"], ["add", "x", "--priority", "9"],
                     ["add", "x", "--due", "next next tuesday"], ["add"], ["edit"], ["list", "--limit", "-3"],
                     ["export", "--format", "xml"], ["top", "many"]] {
            let r = try store.run(args)
            #expect(r.status == 2, "\(args): \(r)")
            #expect(r.stderr.hasPrefix("tasklog: error: ") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r)")
        }
        #expect(try store.run("list", "--sortt", "due").stderr.contains("--sort"))
    }

    @Test("unknown ids exit 1; an ambiguous prefix lists the candidates; short prefixes are refused")
    func idResolution() throws {
        try store.ok("init")
        _ = try store.run(["import", "-"], stdin: #"[{"id":"task-alpha","title":"A"},{"id":"task-beta","title":"B"}]"#)
        let amb = try store.run("done", "task")
        #expect(amb.status == 1 && amb.stderr.contains("task-alpha") && amb.stderr.contains("task-beta"), "\(amb)")
        #expect(try store.run("done", "zzzz").status == 1)
        #expect(try store.run("done", "tas").status == 1)
        try store.ok("done", "task-a")
        #expect(try store.tasks().first { $0["id"] as? String == "task-alpha" }?["done"] as? Bool == true)
    }

    @Test("list filters by tag and list, sorts by each key, and limits")
    func listFilterSortLimit() throws {
        try store.ok("add", "b-task", "--priority", "1", "--due", "2026-12-05", "--tag", "x")
        try store.ok("add", "a-task", "--priority", "3", "--list", "home")
        try store.ok("add", "c-task", "--due", "2026-12-01", "--tag", "x")
        func titles(_ extra: String...) throws -> [String] {
            let r = try store.run(["list", "--json"] + extra)
            let arr = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [[String: Any]]
            return arr.map { $0["title"] as! String }
        }
        #expect(try titles() == ["b-task", "a-task", "c-task"])
        #expect(try titles("--sort", "title") == ["a-task", "b-task", "c-task"])
        #expect(try titles("--sort", "priority") == ["a-task", "b-task", "c-task"])
        #expect(try titles("--sort", "due") == ["c-task", "b-task", "a-task"])
        #expect(try titles("--tag", "x") == ["b-task", "c-task"])
        #expect(try titles("--list", "home") == ["a-task"])
        #expect(try titles("--limit", "1") == ["b-task"])
        #expect(try store.ok("list").contains("TITLE"))
    }

    @Test("top shows the most urgent open tasks, overdue first, never done ones")
    func topOrder() throws {
        try store.ok("add", "low")
        try store.ok("add", "urgent-late", "--priority", "3", "--due", "2026-12-20")
        try store.ok("add", "urgent-soon", "--priority", "3", "--due", "2026-12-02")
        let done = try store.ok("add", "urgent-done", "--priority", "3").trimmingCharacters(in: .newlines)
        try store.ok("done", done)
        let r = try store.run("top", "--json")
        let arr = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [[String: Any]]
        #expect(arr.map { $0["title"] as! String } == ["urgent-soon", "urgent-late"])
        #expect(try store.ok("top", "5").contains("low"))
    }

    @Test("export then import into another store reproduces every task")
    func exportImportRoundTrip() throws {
        try store.ok("add", "One", "--tag", "a", "--meta", "k=v", "--notes", "n")
        let two = try store.ok("add", "Two", "--priority", "0").trimmingCharacters(in: .newlines)
        try store.ok("done", two)
        let exported = try store.ok("export")
        let other = CLIStore(path: dir.sub("other"))
        let r = try other.run(["import", "-"], stdin: exported)
        #expect(r.status == 0 && r.stdout.contains("2 created"), "\(r)")
        let strip: ([[String: Any]]) -> [NSDictionary] = { tasks in
            tasks.map { var d = $0; d["createdAt"] = nil; d["updatedAt"] = nil; d["completedAt"] = nil; return d as NSDictionary }
                .sorted { ($0["id"] as! String) < ($1["id"] as! String) }
        }
        #expect(strip(try store.tasks()) == strip(try other.tasks()))
        // Importing the same file again changes nothing.
        #expect(try other.run(["import", "-"], stdin: exported).stdout.contains("0 created, 0 changed, 2 unchanged"))
    }

    @Test("a malformed import file is refused with exit 1 and writes nothing")
    func malformedImportWritesNothing() throws {
        try store.ok("add", "keep me")
        let before = store.files()
        for bad in [#"[{"title":"x"},"#, #"[{"title":"x","colour":"red"}]"#, #"[{"notes":"no title"}]"#, #"{"title":"x"}"#,
                    #"[{"title":"x","priority":7}]"#] {
            let r = try store.run(["import", "-"], stdin: bad)
            #expect(r.status == 1 && r.stderr.contains("nothing was imported"), "\(bad): \(r)")
        }
        #expect(store.files() == before)
    }

    @Test("status --json has the contract's keys")
    func statusJSON() throws {
        try store.ok("add", "x")
        let s = try JSONSerialization.jsonObject(with: Data(try store.ok("status", "--json").utf8)) as! [String: Any]
        for key in ["replica", "versionVector", "ops", "tasks", "bytes", "segments"] { #expect(s[key] != nil, "\(key)") }
        #expect(s["tasks"] as? Int == 1 && s["ops"] as? Int == 2)
    }

    @Test("log lists operations oldest first, one JSON object a line with --json")
    func logLines() throws {
        let id = try store.ok("add", "Call mum").trimmingCharacters(in: .newlines)
        try store.ok("edit", id, "--priority", "2")
        let lines = try store.ok("log", "--json").split(separator: "\n")
        #expect(lines.count == 3)
        let last = try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as! [String: Any]
        #expect(last["op"] as? String == "set" && last["field"] as? String == "priority" && last["value"] as? Int == 2 && last["seq"] as? Int == 3)
    }

    @Test("reading commands on a store that does not exist yet show nothing and create nothing")
    func readsDoNotCreateTheStore() throws {
        #expect(try store.ok("list").contains("no tasks"))
        #expect(try store.ok("list", "--json").trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        #expect(!FileManager.default.fileExists(atPath: store.path))
        #expect(try store.run("status").status == 1)
    }

    @Test("TASKLOG_STORE selects the store when --store is absent, and --store may follow the command")
    func storeSelection() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLI.binary)
        p.arguments = ["add", "from env"]
        p.environment = ["TASKLOG_STORE": store.path, "PATH": "/usr/bin:/bin"]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let r = try CLI.run(["list", "--store", store.path, "--json"], store: nil)
        #expect(r.stdout.contains("from env"))
    }
}
