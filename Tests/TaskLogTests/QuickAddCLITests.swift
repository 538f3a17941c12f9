import Foundation
@_spi(Engine) import TaskModel
@testable import TaskPlanning
import Testing

/// `tasklog add -q` as people type it, each field read back through `show --json`, in UTC with
/// month-first dates; expected dates are the date forms' own reading of the same words now.
@Suite("quick add through the CLI")
struct QuickAddCLITests {
    let dir = TemporaryDirectory()
    static let environment = ["TZ": "UTC", "LC_ALL": "C"]

    /// `run args…` in UTC.
    func run(_ store: String, _ args: [String]) throws -> CLIResult {
        try CLI.run(args, store: store, environment: Self.environment)
    }

    /// What the date forms read for `text` now, in UTC.
    static func date(_ text: String) -> String? {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return DateInput.parse(text, now: now, zone: FixedOffsetZone(hours: 0), dayFirst: false)?.description
    }

    /// A field of the task form, or of its meta for the planning registers.
    static func field(_ task: [String: Any], _ key: String) -> Any? {
        if let v = task[key], !(v is NSNull) { return v }
        return (task["meta"] as? [String: Any])?[key]
    }

    /// The task `add -q text` made, read back with `show --json`.
    func quickAdded(_ text: String, in store: String) throws -> [String: Any] {
        let add = try run(store, ["add", "-q", text])
        #expect(add.status == 0, "\(text): \(add)")
        let show = try run(store, ["show", add.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any], "\(show)")
    }

    struct Line {
        var text: String
        var title: String
        var due: String? = nil
        var tags: [String] = []
        var list: String? = nil
        var priority: Int? = nil
        var recur: String? = nil
        var wait: String? = nil
        var scheduled: String? = nil
    }

    static let lines: [Line] = [
        Line(text: "Buy milk tomorrow #shop +groceries !2 every week", title: "Buy milk", due: date("tomorrow"), tags: ["shop"], list: "groceries", priority: 2, recur: "every 1 weeks"),
        Line(text: "Call Tom about Friday's meeting", title: "Call Tom about Friday's meeting"),
        Line(text: "Pay rent monthly due:eom !high +home", title: "Pay rent", due: date("eom"), list: "home", priority: 3, recur: "every 1 months"),
        Line(text: "Dentist fri 17:30 #health", title: "Dentist", due: date("fri 17:30"), tags: ["health"]),
        Line(text: "Submit report by next tuesday #work !1", title: "Submit report", due: date("next tuesday"), tags: ["work"], priority: 1),
        Line(text: "Water plants every 3 days", title: "Water plants", recur: "every 3 days"),
        Line(text: "Renew passport in 2 weeks wait:+1w #admin", title: "Renew passport", due: date("in 2 weeks"), tags: ["admin"], wait: date("+1w")),
        Line(text: "Plan trip sched:12/20 +travel", title: "Plan trip", list: "travel", scheduled: date("12/20")),
        Line(text: "Read \"Friday Night Lights\" #books !low", title: "Read \"Friday Night Lights\"", tags: ["books"], priority: 1),
        Line(text: "Gym every monday #health #daily", title: "Gym", due: date("monday"), tags: ["daily", "health"], recur: "every 1 weeks"),
        Line(text: "Buy \\#shop stuff \\tomorrow \\!2", title: "Buy #shop stuff tomorrow !2"),
    ]

    @Test("ten typical lines and an escaped one give every field as stated, read back by show --json")
    func typicalLines() throws {
        let store = dir.sub("s")
        for line in Self.lines {
            let t = try quickAdded(line.text, in: store)
            #expect(t["title"] as? String == line.title, "\(line.text)")
            #expect(t["due"] as? String == line.due, "\(line.text)")
            #expect(t["tags"] as? [String] == line.tags, "\(line.text)")
            #expect(t["list"] as? String == line.list, "\(line.text)")
            #expect(t["priority"] as? Int == line.priority, "\(line.text)")
            #expect(Self.field(t, PlanningKey.recur) as? String == line.recur, "\(line.text)")
            #expect(Self.field(t, PlanningKey.wait) as? String == line.wait, "\(line.text)")
            #expect(Self.field(t, PlanningKey.scheduled) as? String == line.scheduled, "\(line.text)")
        }
        let plain = try run(store, ["add", "Buy", "milk", "tomorrow", "#shop", "--json"])
        let literal = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any]
        #expect(literal?["title"] as? String == "Buy milk tomorrow #shop" && literal?["due"] is NSNull, "plain add stays literal")
    }

    @Test("huge text, control characters and bad markers are refused and write nothing; shell syntax is title text")
    func hostileText() throws {
        let store = dir.sub("h")
        let refused = [
            String(repeating: "x", count: 100_000), "Buy milk\nrm -rf /", "Red \u{1B}[31mtext", "Tab\there",
            "Buy !urgent", "Read \"Dune tomorrow", "#only +markers", "Two +lists +here",
        ]
        for text in refused {
            let r = try run(store, ["add", "--quick", text])
            #expect(r.status == 2 && r.stderr.hasPrefix("tasklog: error: --quick: ") && r.stderr.split(separator: "\n").count == 1, "\(r)")
        }
        #expect(try run(store, ["add", "-q", "x", "--due", "today"]).status == 2)
        #expect(try run(store, ["list", "--all", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let shell = "Run $(touch owned) `touch owned`; ls | cat && echo hi > owned"
        #expect(try quickAdded(shell, in: store)["title"] as? String == shell)
        #expect(!FileManager.default.fileExists(atPath: dir.sub("owned")) && !FileManager.default.fileExists(atPath: "owned"))
    }
}
