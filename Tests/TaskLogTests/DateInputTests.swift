import Foundation
import Testing

/// Dates as people type them, through the real binary under a fixed time zone with daylight
/// saving time. Expected values come from Foundation's calendar, not from the parser.
@Suite("dates people type")
struct DateInputTests {
    let dir = TemporaryDirectory()
    static let zone = "America/New_York"
    let environment = ["TZ": DateInputTests.zone]

    var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: Self.zone)!
        return c
    }

    func day(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    func days(_ n: Int, from date: Date = Date()) -> String { day(calendar.date(byAdding: .day, value: n, to: date)!) }

    /// The next day after today that falls on `weekday` (1 is Sunday).
    func next(_ weekday: Int) -> String {
        let today = calendar.component(.weekday, from: Date())
        let ahead = (weekday - today + 7) % 7
        return days(ahead == 0 ? 7 : ahead)
    }

    /// `add --due text` then `show --json`: the due it stored.
    func due(_ text: String, _ store: CLIStore) throws -> String? {
        let add = try CLI.run(["add", "task", "--due", text], store: store.path, environment: environment)
        #expect(add.status == 0, "--due \(text): \(add)")
        let id = add.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = try CLI.run(["show", id, "--json"], store: store.path, environment: environment)
        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        return object?["due"] as? String
    }

    @Test("every date form lands on the day or instant it names in the local time zone")
    func everyFormLandsWhereItSays() throws {
        let store = CLIStore(path: dir.sub("s"))
        let now = Date()
        let c = calendar
        let endOfMonth = c.date(byAdding: DateComponents(month: 1, day: -1), to: c.date(from: c.dateComponents([.year, .month], from: now))!)!
        let year = c.component(.year, from: now)
        let christmas = c.date(from: DateComponents(year: year, month: 12, day: 24))!
        let nextChristmas = day(christmas) >= day(now) ? day(christmas) : day(c.date(byAdding: .year, value: 1, to: christmas)!)
        let sunday = c.component(.weekday, from: now) == 1 ? days(0) : next(1)
        let expected: [(String, String)] = [
            ("today", days(0)), ("tomorrow", days(1)), ("yesterday", days(-1)), ("friday", next(6)), ("Mon", next(2)),
            ("next week", next(2)), ("eow", sunday), ("eom", day(endOfMonth)), ("+3d", days(3)), ("+2w", days(14)),
            ("in 3 days", days(3)), ("+1m", day(c.date(byAdding: .month, value: 1, to: now)!)), ("12-24", nextChristmas),
            ("2026-12-24", "2026-12-24"), ("2026-12-24 09:00", "2026-12-24T14:00:00.000Z"),
            ("2026-12-24T09:00", "2026-12-24T14:00:00.000Z"), ("2026-07-04T09:30:15", "2026-07-04T13:30:15.000Z"),
            ("2026-12-24T09:00:00Z", "2026-12-24T09:00:00.000Z"), ("2026-12-24T09:00:00+01:00", "2026-12-24T08:00:00.000Z"),
        ]
        for (text, want) in expected {
            #expect(try due(text, store) == want, "--due \(text)")
        }
        let bad = try CLI.run(["add", "x", "--due", "someday"], store: store.path, environment: environment)
        #expect(bad.status == 2 && bad.stderr.contains("--due takes a date such as today"), "\(bad)")
    }

    /// `day` (as `days` gives it) at a local time, as `show --json` prints an instant.
    func instant(_ day: String, hour: Int, minute: Int) -> String {
        let f = ISO8601DateFormatter()
        f.timeZone = calendar.timeZone
        f.formatOptions = [.withFullDate]
        let date = calendar.date(bySettingHour: hour, minute: minute, second: 0, of: f.date(from: day)!)!
        let utc = ISO8601DateFormatter()
        utc.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return utc.string(from: date)
    }

    @Test("the binary reads next WEEKDAY, a date then a time, M/D by LC_ALL, and priorities by name")
    func newFormsThroughTheBinary() throws {
        let store = CLIStore(path: dir.sub("s"))
        let year = calendar.component(.year, from: Date())
        let twentieth = day(calendar.date(from: DateComponents(year: year, month: 12, day: 20))!)
        let nextTwentieth = twentieth >= days(0) ? twentieth : "\(year + 1)-12-20"
        #expect(try due("next tue", store) == next(3))
        #expect(try due("fri 17:30", store) == instant(next(6), hour: 17, minute: 30))
        #expect(try due("tomorrow 9:05pm", store) == instant(days(1), hour: 21, minute: 5))
        for (locale, text) in [("en_US.UTF-8", "12/20"), ("en_GB.UTF-8", "20/12")] {
            let add = try CLI.run(["add", "t", "--due", text, "--priority", "high", "--json"], store: store.path, environment: ["TZ": Self.zone, "LC_ALL": locale])
            let task = try JSONSerialization.jsonObject(with: Data(add.stdout.utf8)) as? [String: Any]
            #expect(task?["due"] as? String == nextTwentieth && task?["priority"] as? Int == 3, "\(locale): \(add)")
            let id = try #require(task?["id"] as? String)
            #expect(try CLI.run(["edit", id, "--priority", "low"], store: store.path).status == 0)
            #expect(try CLI.run(["show", id, "--json"], store: store.path).stdout.contains("\"priority\":1"))
        }
        for bad in ["99:99", "13/45", "next next", "tomorrow 25:00", String(repeating: "x", count: 50_000)] {
            let r = try CLI.run(["add", "x", "--due", bad], store: store.path, environment: environment)
            let lines = r.stderr.split(separator: "\n")
            #expect(r.status == 2 && lines.count == 1 && lines[0].contains("tomorrow 9:00, fri 5:30pm") && lines[0].count < 400, "\(r.stderr.prefix(300))")
        }
        let urgent = try CLI.run(["add", "x", "--priority", "urgent"], store: store.path)
        #expect(urgent.status == 2 && urgent.stderr.contains("none, low, medium or high"), "\(urgent)")
    }

    @Test("list --overdue, --due-before and --due-after pick by local day; top puts overdue tasks first; tables mark them")
    func overdueFirstAndMarked() throws {
        let store = CLIStore(path: dir.sub("s"))
        let add = { (args: [String]) throws in
            #expect(try CLI.run(["add"] + args, store: store.path, environment: self.environment).status == 0)
        }
        try add(["late", "--due", "yesterday"])
        try add(["now", "--due", "today", "--priority", "1"])
        try add(["later", "--due", "+3w", "--priority", "3"])
        try add(["undated", "--priority", "2"])
        func titles(_ args: String...) throws -> [String] {
            let r = try CLI.run(args + ["--json"], store: store.path, environment: environment)
            return ((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []).map { $0["title"] as! String }
        }
        #expect(try titles("list", "--overdue") == ["late"])
        #expect(try titles("list", "--due-before", "tomorrow") == ["late", "now"])
        #expect(try titles("list", "--due-after", "today") == ["later"])
        #expect(try titles("top", "3") == ["late", "now", "later"])
        let table = try CLI.run(["list"], store: store.path, environment: environment).stdout
        #expect(table.contains("\(days(-1)) (overdue)") && table.contains("\(days(0)) (today)"), "\(table)")
        #expect(!table.contains("\u{1B}["), "no colour when piped")
        #expect(!table.split(separator: "\n").contains { $0.hasSuffix(" ") }, "no trailing spaces")
    }

    @Test("show prints due, created and updated times in local time without milliseconds; --json keeps UTC")
    func showPrintsLocalTimes() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try CLI.run(["add", "call", "--due", "2026-12-24T09:00"], store: store.path, environment: environment).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = try CLI.run(["show", id], store: store.path, environment: environment).stdout
        #expect(shown.contains("2026-12-24 09:00") && !shown.contains("Z\n"), "\(shown)")
        let created = try #require(shown.split(separator: "\n").first { $0.hasPrefix("created:") })
        #expect(created.contains(days(0)) && created.split(separator: ":").count == 4, "\(created)")
        let json = try CLI.run(["show", id, "--json"], store: store.path, environment: environment).stdout
        #expect(json.contains("\"due\":\"2026-12-24T14:00:00.000Z\""), "\(json)")
    }
}
