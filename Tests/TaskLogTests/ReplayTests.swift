import Foundation
import Testing

/// `tasklog replay --from DIR [--until …]` and `tasklog history ID` on real stores and folders.
@Suite("replaying logs")
struct ReplayTests {
    let dir = TemporaryDirectory()

    @Test("replay --from a shared folder rebuilds the synced state without touching the local store")
    func replayFromSharedFolder() throws {
        let shared = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        try a.ok("add", "from a", "--priority", "1")
        try b.ok("add", "from b")
        for s in [a, b, a] { try s.ok("sync", shared) }
        let local = CLIStore(path: dir.sub("local"))
        try local.ok("add", "unrelated local task")
        let before = local.files()
        let r = try local.run("replay", "--from", shared, "--json")
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == (try a.ok("list", "--all", "--json")))
        #expect(local.files() == before)
    }

    @Test("replay --until REPLICA:SEQ and --until TIME show the state as it was then")
    func replayUntil() throws {
        let a = CLIStore(path: dir.sub("a"))
        let replica = try a.ok("init").trimmingCharacters(in: .newlines)
        let id = try a.ok("add", "original").trimmingCharacters(in: .newlines)  // seq 1-2
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        usleep(5_000)
        let midway = formatter.string(from: Date())
        usleep(30_000)
        try a.ok("edit", id, "--title", "renamed")  // seq 3
        let atTwo = try a.run("replay", "--from", a.path, "--until", "\(replica.prefix(8)):2", "--json")
        #expect(atTwo.stdout.contains("\"original\""), "\(atTwo)")
        let atTime = try a.run("replay", "--from", a.path, "--until", midway, "--json")
        #expect(atTime.stdout.contains("\"original\""), "\(atTime)")
        #expect(try a.run("replay", "--from", a.path, "--json").stdout.contains("\"renamed\""))
        #expect(try a.run("replay", "--from", a.path, "--until", "zz:1").status == 2)
    }

    @Test("history lists every operation on a task and marks which write is the current value")
    func historyShowsWhyAValueWon() throws {
        let shared = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let id = try a.ok("add", "first").trimmingCharacters(in: .newlines)
        for s in [a, b] { try s.ok("sync", shared) }
        try a.ok("edit", id, "--title", "from a")
        usleep(20_000)
        try b.ok("edit", id, "--title", "from b, later")
        for s in [a, b, a] { try s.ok("sync", shared) }
        let lines = try a.ok("history", String(id.prefix(6)), "--json").split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let titles = lines.filter { $0["field"] as? String == "title" }
        #expect(titles.map { $0["value"] as? String } == ["first", "from a", "from b, later"])
        #expect(titles.map { $0["wins"] as? Bool } == [false, false, true])
        #expect(try a.run("history", "nope").status == 1)
    }
}
