import Foundation
import Testing

/// `top`, `today` and the widget view through the real binaries answer the same with the
/// urgency plan (`snapshot-plan`) as without it, whatever became of the file, and
/// `replay --verify` tells a damaged plan.
@Suite("urgency plan through the binaries")
struct UrgencyPlanCLITests {
    let dir = TemporaryDirectory()
    static let env = ["TZ": "UTC"]
    static let questions = [["top", "5", "--json"], ["top", "100", "--json"], ["today", "--json"], ["today", "2", "--json"]]

    /// A store with every kind of task, compacted: a snapshot and its plan.
    func plannedStore() throws -> CLIStore {
        let s = CLIStore(path: dir.sub("store"))
        let dependency = try s.ok("add", "dependency", "--priority", "2").trimmingCharacters(in: .whitespacesAndNewlines)
        for (i, due) in ["yesterday", "today", "tomorrow", "+3d", "+3w", "2020-01-01", "+2m"].enumerated() {
            try s.ok("add", "dated \(i)", "--due", due, "--priority", "\(i % 4)")
            try s.ok("add", "twin \(i)", "--due", due, "--priority", "\(i % 4)")
        }
        for p in 0...3 { try s.ok("add", "undated \(p)", "--priority", "\(p)") }
        try s.ok("add", "waiting", "--due", "yesterday", "--wait", "tomorrow")
        try s.ok("add", "scheduled", "--scheduled", "today")
        try s.ok("add", "scheduled later", "--scheduled", "+5d", "--priority", "3")
        try s.ok("add", "blocked", "--due", "yesterday", "--priority", "3", "--depends", dependency)
        let started = try s.ok("add", "started", "--due", "+1w").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("start", started)
        let done = try s.ok("add", "done", "--due", "yesterday", "--priority", "3").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("done", done)
        try s.ok("compact")
        #expect(FileManager.default.fileExists(atPath: s.full("snapshot-plan")))
        return s
    }

    /// The answers of `store` to ``questions``.
    func answers(_ store: String) throws -> [String] {
        try Self.questions.map { question in
            let r = try CLI.run(question, store: store, environment: Self.env)
            #expect(r.status == 0, "\(question): \(r)")
            return r.stdout
        }
    }

    /// The answers of a copy of `store` without its snapshot and plan: every task ranked.
    func answersOfEveryTask(_ store: CLIStore) throws -> [String] {
        let bare = dir.sub("bare-\(UUID().uuidString)")
        try FileManager.default.copyItem(atPath: store.path, toPath: bare)
        for file in ["snapshot", "snapshot-plan"] { try FileManager.default.removeItem(atPath: bare + "/" + file) }
        return try answers(bare)
    }

    /// Flips one byte of the plan file: at `at`, or `-at` bytes from its end.
    func damagePlan(_ store: CLIStore, at: Int) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store.full("snapshot-plan")))
        bytes[at >= 0 ? at : bytes.count + at] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: store.full("snapshot-plan")))
    }

    @Test("top and today answer the same with the plan, without it, damaged, and after edits since the snapshot")
    func answersMatchEveryTask() throws {
        let s = try plannedStore()
        let expected = try answersOfEveryTask(s)
        #expect(try answers(s.path) == expected)
        try FileManager.default.removeItem(atPath: s.full("snapshot-plan"))
        #expect(try answers(s.path) == expected)
        #expect(FileManager.default.fileExists(atPath: s.full("snapshot-plan")), "the plan is written afresh")
        for at in [-2, 12] {  // an entry's block, then the header
            try damagePlan(s, at: at)
            #expect(try answers(s.path) == expected, "damaged at \(at)")
        }
        let ids = try s.tasks().compactMap { $0["id"] as? String }
        try s.ok("done", ids[1])
        try s.ok("edit", ids[2], "--due", "yesterday", "--priority", "3")
        try s.ok("rm", ids[3])
        try s.ok("add", "added since", "--due", "today", "--priority", "3")
        try s.ok("stop", try #require(try s.tasks().first { $0["title"] as? String == "started" }?["id"] as? String))
        #expect(try answers(s.path) == (try answersOfEveryTask(s)))
    }

    @Test("GET /v1/top and /v1/today answer as the CLI does of every task, before and after the plan is damaged")
    func widgetViewMatches() throws {
        let s = try plannedStore()
        let expected = try answersOfEveryTask(s)
        let server = try ServerProcess(store: s.path, dir: dir, environment: Self.env)
        defer { server.stop() }
        func ids(_ text: String) -> [String] {
            ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }
        for round in 0..<2 {
            let top = HTTP.send("GET", server.url + "/v1/top?n=5")
            #expect(top.status == 200 && ids(top.body) == ids(expected[0]), "round \(round): \(top)")
            let today = HTTP.send("GET", server.url + "/v1/today")
            #expect(today.status == 200 && today.body == expected[2], "round \(round): \(today)")
            try damagePlan(s, at: -2)
        }
    }

    @Test("replay --verify passes with a right or stale plan and fails on a damaged one")
    func verifyReportsADamagedPlan() throws {
        let s = try plannedStore()
        #expect(try s.ok("replay", "--verify").contains("verified"))
        try damagePlan(s, at: -2)
        let damaged = try s.run("replay", "--verify")
        #expect(damaged.status == 1 && damaged.stderr.contains("urgency plan is damaged"), "\(damaged)")
        try s.ok("compact")
        #expect(try s.ok("replay", "--verify").contains("verified"))
        try s.ok("add", "one more")
        let other = CLIStore(path: dir.sub("other"))
        try other.ok("add", "elsewhere", "--due", "today")
        try other.ok("compact")
        try FileManager.default.removeItem(atPath: s.full("snapshot-plan"))
        try FileManager.default.copyItem(atPath: other.full("snapshot-plan"), toPath: s.full("snapshot-plan"))
        #expect(try s.ok("replay", "--verify").contains("verified"), "a stale plan is not used, so not wrong")
    }
}
