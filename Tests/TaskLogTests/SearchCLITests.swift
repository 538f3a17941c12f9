import Foundation
import TestSupport
import Testing

/// `tasklog list WORD…`, `search WORD…` and `list` with a filter read a large snapshot in
/// parts side by side, stepping over the tasks that cannot match: they print exactly what
/// the same listings print from the logs alone (Spec/cli.md, "Listing").
@Suite("search from the snapshot in parts")
struct SearchCLITests {
    let dir = TemporaryDirectory()

    /// `count` tasks as `tasklog import` reads them, varied in every field a listing shows:
    /// words in several cases and accents, control characters, tags, lists, notes, done,
    /// priorities, dates and instants past and ahead, recurrence, wait and start dates.
    static func tasks(_ count: Int, noteLength: Int = 0, seed: UInt64 = 7) -> [[String: Any]] {
        var rng = SplitMix64(seed: seed)
        let words = ["milk", "Milk", "MILK", "café", "Cafe", "bread", "naïve", "tab\there", "plan", "ünïcødé"]
        let dues = ["2026-01-02", "2099-05-06", "2026-03-01T09:30:00Z", "2099-01-01T00:00:00Z"]
        return (0..<count).map { i in
            var task: [String: Any] = [
                "id": String(format: "%08x-0000-4000-8000-%012x", i, i),
                "title": (0..<rng.int(1...4)).map { _ in rng.pick(words) }.joined(separator: " "),
                "priority": rng.int(0...3),
            ]
            if noteLength > 0 || rng.chance(0.2) { task["notes"] = rng.pick(words) + String(repeating: "n", count: noteLength) }
            if rng.chance(0.3) { task["due"] = rng.pick(dues) }
            if rng.chance(0.2) { task["tags"] = rng.chance(0.5) ? ["Home"] : ["home", "work"] }
            if rng.chance(0.2) { task["list"] = rng.pick(["work", "home"]) }
            if rng.chance(0.1) { task["done"] = true }
            if rng.chance(0.05) { task["recur"] = "every week" }
            if rng.chance(0.05) { task["wait"] = rng.pick(["2099-01-01", "2020-01-01"]) }
            if rng.chance(0.05) { task["start"] = "2026-01-01" }
            return task
        }
    }

    /// A store of `tasks`, compacted, then changed after its snapshot (done, deleted,
    /// retitled, tagged and new tasks).
    func store(_ name: String, _ tasks: [[String: Any]]) throws -> CLIStore {
        let store = CLIStore(path: dir.sub(name))
        let file = dir.sub(name + ".json")
        try JSONSerialization.data(withJSONObject: tasks).write(to: URL(fileURLWithPath: file))
        _ = try store.ok("import", file)
        _ = try store.ok("compact")
        let ids = tasks.map { $0["id"] as! String }
        _ = try store.ok("done", ids[1], ids[2])
        _ = try store.ok("rm", ids[3], ids[4])
        _ = try store.ok("edit", ids[5], "--title", "now with milk")
        _ = try store.ok("edit", ids[6], "--title", "no longer")
        _ = try store.ok("tag", ids[7], "+Home")
        _ = try store.ok("add", "milk added after the snapshot", "--tag", "home")
        return store
    }

    /// What each listing prints from the snapshot, and from the logs alone (the snapshot
    /// removed before each).
    func fromSnapshotAndLogs(_ store: CLIStore, _ listings: [[String]]) throws -> (snapshot: [String], logs: [String]) {
        func run(_ args: [String]) throws -> String {
            let r = try store.run(args)
            #expect(r.status == 0, "\(args): \(r)")
            return r.stdout
        }
        #expect(FileManager.default.fileExists(atPath: store.full("snapshot")))
        let fromSnapshot = try listings.map(run)
        let fromLogs = try listings.map { args in
            try? FileManager.default.removeItem(atPath: store.full("snapshot"))
            return try run(args)
        }
        return (fromSnapshot, fromLogs)
    }

    @Test("list WORD, search WORD and list with a filter print the same, as tables and as JSON, from a snapshot read in parts and a log after it as from the logs")
    func searchFromPartsMatchesTheLogs() throws {
        let store = try store("large", Self.tasks(5_000))
        var listings: [[String]] = [
            ["list", "milk"], ["search", "MILK", "cafe"], ["search", "naive", "--all"], ["list", "milk", "--done"],
            ["list", "--tag", "HOME"], ["list", "milk", "--list", "work"], ["list", "--overdue"], ["list", "plan", "--due-before", "2026-06-01"],
            ["list", "--due-after", "2098-01-01", "--all"], ["list", "milk", "--limit", "5"], ["list", "--waiting"], ["list"],
            ["search", "zzz"], ["search", "unicode", "tab"],
        ]
        listings += listings.map { $0 + ["--json"] }
        let (snapshot, logs) = try fromSnapshotAndLogs(store, listings)
        for (i, args) in listings.enumerated() { #expect(snapshot[i] == logs[i], "\(args)") }
        #expect(snapshot[0].contains("milk added after the snapshot") && snapshot[0].contains("now with milk"))
        #expect(snapshot[12] == "no tasks\n")
    }

    @Test("on a terminal a search's table is coloured and cut as the logs' listing's")
    func searchOnATerminalMatchesTheLogs() throws {
        let store = try store("terminal", Self.tasks(5_000))
        let environment = ["COLUMNS": "60"]
        let fromSnapshot = try store.onTerminal(["list", "milk"], environment: environment)
        try FileManager.default.removeItem(atPath: store.full("snapshot"))
        let fromLogs = try store.onTerminal(["list", "milk"], environment: environment)
        #expect(fromSnapshot == fromLogs)
        #expect(fromSnapshot.contains("\u{1B}[31m") && fromSnapshot.contains("…"))
    }

    @Test("where a task names a parent or a dependency, a search shows subtasks under their parents as the logs' listing does")
    func searchWithLinksMatchesTheLogs() throws {
        let tasks = Self.tasks(5_000)
        let store = try store("links", tasks)
        let parent = tasks[10]["id"] as! String
        _ = try store.ok("compact")
        _ = try store.ok("edit", tasks[20]["id"] as! String, "--title", "milk subtask", "--parent", parent)
        _ = try store.ok("edit", parent, "--title", "milk parent")
        let (snapshot, logs) = try fromSnapshotAndLogs(store, [["list", "milk"], ["search", "milk", "--all"], ["list", "milk", "--json"]])
        #expect(snapshot == logs)
        #expect(snapshot[0].contains("  milk subtask"), "the subtask is indented under its parent")
    }

    @Test("a JSON listing larger than a part may hold until its turn prints the same from the snapshot as from the logs")
    func largeJSONListingMatchesTheLogs() throws {
        let store = try store("long", Self.tasks(6_000, noteLength: 3_000))
        let (snapshot, logs) = try fromSnapshotAndLogs(store, [["list", "--all", "--json"], ["list", "n", "--json", "--limit", "5000"]])
        #expect(snapshot == logs)
        #expect(snapshot[0].utf8.count > 16 << 20, "the second part held more than its bound")
    }
}
