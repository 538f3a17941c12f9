import Foundation
import Testing

/// The commands that name tasks, run through the real binary on a store with a snapshot and a
/// log after it (read through the task index) and on a copy without the snapshot (the state
/// rebuilt from the logs): both print and write the same, and so does `undo` after each.
@Suite("named commands through the index")
struct NamedCommandCLITests {
    let dir = TemporaryDirectory()
    /// `value` with the clock's readings (instants, and the log's `hlc`) blanked: they differ
    /// between two runs of one command.
    static func withoutClock(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            return object.filter { $0.key != "hlc" }.mapValues(withoutClock)
        }
        if let array = value as? [Any] { return array.map(withoutClock) }
        if let text = value as? String, text.range(of: #"^\d{4}-\d\d-\d\dT[0-9:.]+Z$"#, options: .regularExpression) != nil {
            return "instant"
        }
        return value
    }

    /// Output with each JSON document (the whole text, or each line) stripped of clock keys.
    static func comparable(_ text: String) -> String {
        func normal(_ piece: String) -> String? {
            guard let data = piece.data(using: .utf8), let json = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed),
                let back = try? JSONSerialization.data(withJSONObject: withoutClock(json), options: [.sortedKeys, .fragmentsAllowed])
            else { return nil }
            return String(decoding: back, as: UTF8.self)
        }
        if let whole = normal(text) { return whole }
        return text.split(separator: "\n").map { normal(String($0)) ?? String($0) }.joined(separator: "\n")
    }

    /// What a store shows of itself: every task, the deleted ones, and the log.
    static func contents(_ store: CLIStore) throws -> [String] {
        try [["list", "--all", "--json"], ["list", "--deleted", "--json"], ["log", "--json"]].map { args in
            let r = try store.run(args)
            return "\(r.status) " + comparable(r.stdout)
        }
    }

    /// Runs `args` on both stores, then `undo` on both, expecting the same each time.
    func expectSame(_ a: CLIStore, _ b: CLIStore, _ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for command in [args, ["undo", "--json"]] {
            let (ra, rb) = (try a.run(command), try b.run(command))
            #expect(ra.status == rb.status && ra.stderr == rb.stderr, "\(command): \(ra) vs \(rb)", sourceLocation: sourceLocation)
            #expect(Self.comparable(ra.stdout) == Self.comparable(rb.stdout), "\(command)", sourceLocation: sourceLocation)
            #expect(try Self.contents(a) == Self.contents(b), "\(command)", sourceLocation: sourceLocation)
        }
    }

    /// A store with a snapshot and a log after it, and the tasks' ids by title.
    func store() throws -> (CLIStore, [String: String]) {
        let a = CLIStore(path: dir.sub("indexed"))
        var ids: [String: String] = [:]
        func add(_ title: String, _ extra: String...) throws {
            let r = try a.run(["add", title] + extra)
            #expect(r.status == 0, "\(r)")
            ids[title] = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for i in 0..<6 { try add("plain \(i)") }
        try add("tagged", "--tag", "home", "--tag", "work")
        try add("daily", "--recur", "daily")
        try add("weekly", "--recur", "weekly", "--due", "2030-01-07")
        try add("parent")
        try add("child", "--parent", ids["parent"]!)
        try add("grandchild", "--parent", ids["child"]!)
        try add("needs 0")
        try add("needs 1", "--depends", ids["needs 0"]!)
        try add("gone")
        try add("gone later")
        try a.ok("rm", ids["gone"]!)
        try a.ok("compact")
        try a.ok("tag", ids["tagged"]!, "+later", "-work")
        try a.ok("rm", ids["gone later"]!)
        try add("later")
        return (a, ids)
    }

    @Test("tag, rm and restore, done and reopen, done of recurring and parent tasks, edit links, start, stop and edit give through the index what they give loaded, and undo after each")
    func commandsThroughTheIndexMatchTheLoadedState() throws {
        let (a, id) = try store()
        let b = CLIStore(path: dir.sub("loaded"))
        try FileManager.default.copyItem(atPath: a.path, toPath: b.path)
        try FileManager.default.removeItem(atPath: b.full("snapshot"))
        #expect(FileManager.default.fileExists(atPath: a.full("snapshot")))
        let commands: [[String]] = [
            ["tag", id["tagged"]!, "+x", "-home", "--json"],
            ["tag", id["later"]!, "+y", "--json"],
            ["rm", id["plain 1"]!], ["restore", id["plain 1"]!, "--json"],
            ["restore", String(id["gone later"]!.prefix(8)), "--json"], ["restore", id["gone"]!],
            ["done", id["plain 2"]!], ["reopen", id["plain 2"]!, "--json"],
            ["done", id["daily"]!, "--json"], ["done", id["weekly"]!, id["plain 3"]!, "--json"],
            ["done", id["parent"]!, "--json"], ["done", id["parent"]!, "--force", "--json"],
            ["edit", id["parent"]!, "--parent", id["grandchild"]!], ["edit", id["plain 4"]!, "--parent", id["grandchild"]!, "--json"],
            ["edit", id["needs 0"]!, "--depends", id["needs 1"]!], ["edit", id["plain 5"]!, "--depends", id["needs 1"]!, "--json"],
            ["edit", id["needs 1"]!, "--no-depends", id["needs 0"]!, "--json"],
            ["start", id["plain 0"]!, "--json"], ["edit", id["plain 0"]!, "--title", "renamed", "--start", "--json"],
            ["tag", "00000000-0000-4000-8000-000000000000", "+z"], ["restore", "zzzz"],
        ]
        for command in commands { try expectSame(a, b, command) }
        try expectSame(a, b, ["start", id["plain 0"]!])
        try expectSame(a, b, ["stop", id["plain 0"]!, "--json"])
    }
}
