import Foundation
import Testing

/// Hostile and edge values for subtasks and dependencies, through the real binary: links to
/// the task itself or to unknown ids, a chain 10,000 deep closed into a cycle, and the JSON
/// task form's planning keys on the way in.
@Suite("subtasks: hostile values")
struct SubtaskHostileTests {
    let dir = TemporaryDirectory()

    func ok(_ s: CLIStore, _ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try CLI.run(args, store: s.path, environment: ["TZ": "UTC"])
        #expect(r.status == 0, "tasklog \(args.joined(separator: " ")): \(r)", sourceLocation: sourceLocation)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a parent or dependency that is the task itself or unknown is refused in one line, and nothing is written")
    func selfAndUnknownLinks() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try ok(s, "add", "Alone")
        let before = try ok(s, "log")
        for args in [["edit", id, "--parent", id], ["edit", id, "--depends", id]] {
            let r = try s.run(args)
            #expect(r.status == 1 && r.stderr.contains("cannot be its own") && r.stderr.split(separator: "\n").count == 1, "\(r)")
        }
        for args in [["add", "Child", "--parent", "zzzz9999"], ["add", "Child", "--depends", "zzzz9999"], ["edit", id, "--parent", "zzzz9999"]] {
            let r = try s.run(args)
            #expect(r.status == 1 && r.stderr.contains("no task matches 'zzzz9999'"), "\(r)")
        }
        #expect(try ok(s, "log") == before)
        try ok(s, "edit", id, "--no-depends", "00000000-0000-4000-8000-000000000000")
        #expect(try ok(s, "log") == before, "removing a dependency that is not there writes nothing")
    }

    @Test("a chain 10,000 deep closed into a cycle imports, lists and shows in bounded time with bounded indentation")
    func deepChain() throws {
        let s = CLIStore(path: dir.sub("s"))
        let n = 10_000
        var text = "["
        for i in 0..<n {
            if i > 0 { text += ",\n" }
            text += "{\"id\":\"c\(i)\",\"title\":\"Level \(i)\",\"parent\":\"c\((i + n - 1) % n)\"}"
        }
        text += "]"
        let file = dir.sub("chain.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        _ = try ok(s, "import", file)
        let start = Date()
        let list = try ok(s, "list")
        let shown = try ok(s, "show", "c5000")
        #expect(Date().timeIntervalSince(start) < 30)
        let rows = list.split(separator: "\n")
        #expect(rows.count == n + 1)
        let widest = rows.map { $0.utf8.count }.max() ?? 0
        #expect(widest < 120, "indentation stops at 16 levels")
        let title = try #require(rows[0].range(of: "TITLE")).lowerBound.utf16Offset(in: rows[0])
        let roots = rows.dropFirst().filter { $0.utf8.dropFirst(title).first != UInt8(ascii: " ") }
        #expect(roots.count == 1, "one link of the cycle is cut: \(roots.prefix(3))")
        #expect(shown.contains("c4999") && shown.contains("subtasks: 0/1 done"), "\(shown)")
        let refused = try s.run("done", "c0", "--json")
        #expect(refused.status == 1 && refused.stdout.hasPrefix("{\"openChildren\":"))
    }

    /// A JSON array of tasks without the times a store sets itself, by id (an import made in
    /// one commit gives every task the same creation time).
    static func withoutTimes(_ json: String) throws -> NSArray {
        let tasks = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
        let sorted = tasks.sorted { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        return sorted.map { $0.filter { !["createdAt", "updatedAt"].contains($0.key) } } as NSArray
    }

    @Test("the JSON form's planning keys import and export; a patch's meta never clears them")
    func planningKeysInJSON() throws {
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let parent = try ok(a, "add", "Parent")
        let dep = try ok(a, "add", "First")
        let child = try ok(a, "add", "Child", "--parent", parent, "--depends", dep, "--wait", "2001-01-01", "--meta", "k=v")
        try ok(a, "start", child)
        let exported = try ok(a, "export")
        let file = dir.sub("all.json")
        try Data(exported.utf8).write(to: URL(fileURLWithPath: file))
        _ = try ok(b, "import", file)
        #expect(try Self.withoutTimes(ok(b, "export")) == Self.withoutTimes(exported))
        let patch = dir.sub("patch.json")
        try Data("[{\"id\":\"\(child)\",\"meta\":{}}]".utf8).write(to: URL(fileURLWithPath: patch))
        _ = try ok(b, "import", patch)
        let t = try #require(try b.tasks().first { $0["id"] as? String == child })
        #expect(t["parent"] as? String == parent && t["depends"] as? [String] == [dep] && t["wait"] as? String == "2001-01-01")
        #expect((t["meta"] as? [String: String])?.isEmpty == true && t["start"] != nil)
        try Data("[{\"id\":\"\(child)\",\"parent\":\"\(child)\"}]".utf8).write(to: URL(fileURLWithPath: patch))
        let refused = try b.run("import", patch)
        #expect(refused.status == 1 && refused.stderr.contains("cannot be its own parent"), "\(refused)")
    }

    @Test("the independent reader, written from the Spec, lists the planning keys as the binary does")
    func independentReaderAgrees() throws {
        try IndependentReaderTests.requirePython()
        let s = CLIStore(path: dir.sub("s"))
        let parent = try ok(s, "add", "Parent", "--recur", "weekly", "--scheduled", "2026-12-24")
        let dep = try ok(s, "add", "First", "--tag", "home")
        let child = try ok(s, "add", "Child", "--parent", parent, "--depends", dep, "--wait", "2999-01-01T09:00:00Z", "--meta", "k=v", "--tag", "x")
        try ok(s, "start", child)
        try ok(s, "done", dep)
        let listing = try IndependentReaderTests.expectSameListing(s.path, "planning keys")
        #expect(listing.contains("\"parent\":\"\(parent)\",\"depends\":[\"\(dep)\"],\"wait\":\"2999-01-01T09:00:00.000Z\",\"start\":"), "\(listing)")
    }

    @Test("REST: the planning keys go in and come out at the top level; a self-parent is a 400")
    func restPlanningKeys() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("init")
        let server = try ServerProcess(store: s.path, dir: dir)
        defer { server.stop() }
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/p1", json: #"{"title":"Parent"}"#).status == 201)
        let put = HTTP.send("PUT", server.url + "/v1/tasks/c1", json: #"{"title":"Child","parent":"p1","depends":["p1"],"wait":"2999-01-01"}"#)
        #expect(put.status == 201, "\(put)")
        let patch = HTTP.send("PATCH", server.url + "/v1/tasks/c1", json: #"{"meta":{"k":"v"}}"#)
        let task = patch.json as? [String: Any]
        #expect(task?["parent"] as? String == "p1" && task?["depends"] as? [String] == ["p1"] && task?["wait"] as? String == "2999-01-01")
        #expect(task?["meta"] as? [String: String] == ["k": "v"], "\(patch)")
        let cycle = HTTP.send("PATCH", server.url + "/v1/tasks/c1", json: #"{"parent":"c1"}"#)
        #expect(cycle.status == 400 && (cycle.json as? [String: Any])?["error"] as? String == "task c1 cannot be its own parent; name another task", "\(cycle)")
    }
}
