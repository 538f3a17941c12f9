import Foundation
import Testing

/// What `sync` says about the tasks it changed, through the real binary.
@Suite("what sync says")
struct SyncSummaryTests {
    let dir = TemporaryDirectory()

    func replica(_ s: CLIStore) throws -> String {
        let status = try JSONSerialization.jsonObject(with: Data(try s.ok("status", "--json").utf8)) as? [String: Any]
        return try #require(status?["replica"] as? String)
    }

    /// Two stores that share `folder` and hold "Buy milk" and "Call mum", made on `a`.
    func pair() throws -> (a: CLIStore, b: CLIStore, folder: String, milk: String, mum: String) {
        let folder = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let milk = try a.ok("add", "Buy milk").trimmingCharacters(in: .whitespacesAndNewlines)
        let mum = try a.ok("add", "Call mum").trimmingCharacters(in: .whitespacesAndNewlines)
        try a.ok("sync", folder)
        try b.ok("init")
        #expect(try b.onTerminal(["sync", folder]) == "2 tasks added\n")
        return (a, b, folder, milk, mum)
    }

    @Test("on a terminal, sync counts the tasks it changed and names this device's edit that a later one from another device superseded")
    func terminalSummaryNamesSupersededEdits() throws {
        let (a, b, folder, milk, mum) = try pair()
        try a.ok("edit", milk, "--title", "Buy oat milk")
        usleep(20_000)  // b's edit is the later one
        try b.ok("edit", milk, "--title", "Buy almond milk")
        try b.ok("rm", mum)
        try b.ok("add", "Bake bread")
        try b.ok("sync", folder)
        let said = try a.onTerminal(["sync", folder])
        #expect(said == "1 task updated, 1 added, 1 removed; 1 edit of 'Buy oat milk' superseded by a later one from replica \(try replica(b).prefix(8)); sent 1 operation from here\n")
        #expect(try a.onTerminal(["sync", folder]) == "no tasks changed\n")
        #expect(try a.ok("show", milk, "--json").contains("Buy almond milk"))
    }

    @Test("on a terminal, a sync that only publishes this device's edits says how many it sent")
    func terminalSummarySaysWhatWasSent() throws {
        let (a, _, folder, milk, _) = try pair()
        try a.ok("edit", milk, "--priority", "1")
        #expect(try a.onTerminal(["sync", folder]) == "no tasks changed; sent 1 operation from here\n")
    }

    @Test("an edit the other device had already received is not called superseded")
    func seenEditIsNotSuperseded() throws {
        let (a, b, folder, milk, _) = try pair()
        try a.ok("edit", milk, "--priority", "2")
        try a.ok("sync", folder)
        try b.ok("sync", folder)
        try b.ok("edit", milk, "--priority", "3")
        try b.ok("done", milk)
        try b.ok("sync", folder)
        #expect(try a.onTerminal(["sync", folder]) == "1 task completed\n")
    }

    @Test("piped, sync prints only what it moved, as it always did; --verbose adds what changed in tasks first")
    func pipedOutputIsUnchanged() throws {
        let (a, b, folder, _, _) = try pair()
        try b.ok("add", "Bake bread")
        let sent = try b.ok("sync", folder)
        #expect(sent.hasPrefix("received 0 operations (0 bytes in 0 files); sent 2 operations (") && sent.split(separator: "\n").count == 1, "\(sent)")
        let verbose = try a.ok("sync", folder, "--verbose").split(separator: "\n")
        #expect(verbose.count == 2 && verbose[0] == "1 task added" && verbose[1].hasPrefix("received 2 operations ("), "\(verbose)")
        let onTerminal = try b.onTerminal(["sync", folder, "--verbose"]).split(separator: "\n")
        #expect(onTerminal.count == 2 && onTerminal[0] == "no tasks changed" && onTerminal[1].hasPrefix("received 0 operations"), "\(onTerminal)")
    }

    @Test("sync --json prints one object: operations, bytes and files each way, tasks by change, and superseded edits with their fields")
    func jsonSummary() throws {
        let (a, b, folder, milk, _) = try pair()
        try a.ok("edit", milk, "--title", "Buy oat milk", "--priority", "1")
        usleep(20_000)
        try b.ok("edit", milk, "--title", "Buy almond milk", "--priority", "2")
        try b.ok("sync", folder)
        let r = try a.run("sync", folder, "--json")
        #expect(r.status == 0 && r.stdout.split(separator: "\n").count == 1, "\(r)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let received = try #require(object["received"] as? [String: Int])
        #expect(received["operations"] == 2 && received["files"] == 1 && received["bytes"]! > 0)
        #expect((object["sent"] as? [String: Int])?["operations"] == 2)
        #expect(object["tasks"] as? [String: Int] == ["added": 0, "updated": 1, "completed": 0, "removed": 0, "restored": 0])
        let superseded = try #require(object["superseded"] as? [[String: Any]])
        #expect(superseded.count == 1)
        #expect(superseded.first?["id"] as? String == milk && superseded.first?["title"] as? String == "Buy oat milk")
        #expect(superseded.first?["fields"] as? [String] == ["title", "priority"])
        #expect(superseded.first?["by"] as? String == (try replica(b)))
    }

    @Test("over HTTP, an edit the peer never received and a later edit there superseded is named")
    func httpSyncNamesSupersededEdits() throws {
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let milk = try a.ok("add", "Buy milk").trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try ServerProcess(store: a.path, dir: dir)
        defer { server.stop() }
        try b.ok("init")
        #expect(try b.onTerminal(["sync", server.url, "--token", "sekrit"]) == "1 task added\n")
        try b.ok("edit", milk, "--notes", "two litres")
        usleep(20_000)
        try a.ok("edit", milk, "--notes", "one litre")
        let said = try b.onTerminal(["sync", server.url, "--token", "sekrit"])
        #expect(said == "1 task updated; 1 edit of 'Buy milk' superseded by a later one from replica \(try replica(a).prefix(8)); sent 1 operation from here\n")
    }
}
