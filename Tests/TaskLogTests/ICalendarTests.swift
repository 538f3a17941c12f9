import Foundation
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
import Testing

/// iCalendar both ways: the text layer on its own, then `tasklog export --format ics` and
/// `import` with real writers' files, checked by the Python `icalendar` library.
@Suite("iCalendar")
struct ICalendarTests {
    let dir = TemporaryDirectory()
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ical").path

    /// Debian's Python, which has the `icalendar` library (scripts/install-deps.sh).
    func python(_ args: [String]) throws -> CLIResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = args
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return CLIResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    @Test("long lines fold at 75 octets without splitting a character, and unfold back")
    func foldingRoundTrips() {
        let line = "SUMMARY:" + String(repeating: "Grüße aus Köln 🎄 ", count: 12)
        let folded = ICalendarText.folded(line)
        for physical in folded.split(separator: "\r\n") { #expect(physical.utf8.count <= 75) }
        #expect(ICalendarText.unfolded(folded).map { String($0.line) } == [line])
        let text = "a\\b; c, d\nnew line"
        #expect(ICalendarText.text(ICalendarText.escaped(text)) == text)
        #expect(ICalendarText.textList("one,two\\,three") == ["one", "two,three"])
    }

    @Test("priorities map 3/2/1 to 1/5/9 and read 1-4 high, 5 medium, 6-9 low")
    func prioritiesMap() {
        #expect([3, 2, 1].map { ICalendar.icalPriority($0) } == [1, 5, 9])
        #expect((0...9).map { ICalendar.priority($0) } == [nil, 3, 3, 3, 3, 2, 1, 1, 1, 1])
    }

    @Test("a Berlin VTIMEZONE's summer and winter rules place wall times on the right instants")
    func timeZoneRulesAreHonoured() throws {
        let text = try String(contentsOfFile: Self.fixtures + "/thunderbird.ics", encoding: .utf8)
        let calendar = try #require(try ICalendarComponent.parse(text).first)
        let zone = try #require(calendar.components.first { $0.name == "VTIMEZONE" }.flatMap(ICalendarTimeZone.init))
        func offset(_ wall: String) throws -> Int64 { zone.offset(atWall: try #require(ICalendarTime.wall(wall)).seconds) }
        #expect(try offset("20260329T015959") == 3600 && offset("20260329T030000") == 7200)
        #expect(try offset("20261025T025959") == 7200 && offset("20261025T030000") == 3600)
        #expect(try offset("19600101T000000") == 3600, "before the first onset, the first observance's offset from")
    }

    @Test("Thunderbird and Apple files import and export with every property, alarm and recurrence kept")
    func realWritersFilesRoundTrip() throws {
        for name in ["thunderbird", "apple-reminders"] {
            let store = CLIStore(path: dir.sub(name))
            let original = Self.fixtures + "/\(name).ics"
            #expect(try store.ok("import", original).contains("3 created"))
            let exported = dir.sub("\(name)-out.ics")
            try store.ok("export", "--format", "ics").write(toFile: exported, atomically: true, encoding: .utf8)
            let compared = try python([Self.fixtures + "/compare.py", original, exported])
            #expect(compared.status == 0, "\(name): \(compared)")
            #expect(try store.ok("import", exported).contains("0 created, 0 changed, 3 unchanged"))
        }
        let tasks = try CLIStore(path: dir.sub("thunderbird")).tasks()
        let passport = try #require(tasks.first { $0["title"] as? String == "Renew passport, bring photos" })
        #expect(passport["due"] as? String == "2026-12-15T16:00:00.000Z", "17:00 in Berlin in winter")
        #expect(passport["priority"] as? Int == 3 && passport["tags"] as? [String] == ["Errands", "Personal"])
        #expect(passport["notes"] as? String == "Town hall, room 2.14\nTake the old passport too.")
        let plants = try #require(tasks.first { $0["title"] as? String == "Water the plants" })
        #expect(plants["due"] as? String == "2026-07-04T09:00:00.000Z", "11:00 in Berlin in summer")
        let tax = try #require(tasks.first { $0["title"] as? String == "File the tax return" })
        #expect(tax["done"] as? Bool == true && tax["due"] as? String == "2026-10-31" && tax["priority"] as? Int == 1)
    }

    @Test("an export read by the icalendar library states every field the store holds")
    func exportReadsInTheIcalendarLibrary() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Buy milk; 2% fat, please", "--priority", "3", "--tag", "shop", "--tag", "+errands", "--due", "2026-12-24")
        let b = try store.ok("add", "Call Mum", "--list", "home", "--notes", "about\nChristmas", "--due", "2026-12-20T18:30:00Z", "--meta", "color=blue")
            .trimmingCharacters(in: .newlines)
        try store.ok("done", b)
        let file = dir.sub("out.ics")
        try store.ok("export", "--format", "ics").write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import icalendar, json, sys
            cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
            out = []
            for t in cal.walk('VTODO'):
                due = t.get('DUE')
                out.append({'uid': str(t['UID']), 'summary': str(t['SUMMARY']), 'description': str(t.get('DESCRIPTION', '')),
                  'due': due.to_ical().decode() if due else None, 'priority': int(t.get('PRIORITY', 0)),
                  'status': str(t['STATUS']), 'completed': 'COMPLETED' in t,
                  'categories': sorted(str(c) for c in t['CATEGORIES'].cats) if 'CATEGORIES' in t else [],
                  'list': str(t.get('X-TASKLOG-LIST', '')), 'meta': str(t.get('X-TASKLOG-META', ''))})
            print(json.dumps(sorted(out, key=lambda x: x['summary'])))
            """
        let read = try python(["-c", script, file])
        #expect(read.status == 0, "\(read)")
        let todos = try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [[String: Any]])
        #expect(todos.count == 2)
        let milk = todos[0]
        let mum = todos[1]
        #expect(milk["summary"] as? String == "Buy milk; 2% fat, please" && milk["due"] as? String == "20261224")
        #expect(milk["priority"] as? Int == 1 && milk["status"] as? String == "NEEDS-ACTION")
        #expect(milk["categories"] as? [String] == ["+errands", "shop"] && milk["list"] as? String == "")
        #expect(mum["uid"] as? String == b && mum["description"] as? String == "about\nChristmas")
        #expect(mum["due"] as? String == "20261220T183000Z" && mum["status"] as? String == "COMPLETED" && mum["completed"] as? Bool == true)
        #expect(mum["list"] as? String == "home" && mum["meta"] as? String == "blue")
    }

    @Test("an edited export writes only the changed fields; the same file twice writes nothing")
    func editedExportWritesOnlyChanges() throws {
        let store = CLIStore(path: dir.sub("store"))
        let id = try store.ok("add", "Draft", "--tag", "x").trimmingCharacters(in: .newlines)
        let file = dir.sub("tasks.ics")
        let text = try store.ok("export", "--format", "ics")
        try text.replacingOccurrences(of: "SUMMARY:Draft", with: "SUMMARY:Final").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", file).contains("0 created, 1 changed, 0 unchanged"))
        #expect(try store.ok("import", file).contains("0 created, 0 changed, 1 unchanged"))
        let log = try store.ok("log", "--json")
        #expect(log.components(separatedBy: "\"title\"").count - 1 == 2, "the add and one title write: \(log)")
        #expect(try store.tasks().first?["id"] as? String == id)
    }

    @Test("a cut-short file or a time zone with no VTIMEZONE is refused in one line, importing nothing")
    func badFilesAreRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Keep me")
        let cut = dir.sub("cut.ics")
        try "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:a1\r\nSUMMARY:x\r\n".write(toFile: cut, atomically: true, encoding: .utf8)
        let r = try store.run("import", cut)
        #expect(r.status == 1 && r.stderr.contains("never closed") && r.stderr.contains("nothing was imported"), "\(r)")
        let zoned = dir.sub("zoned.ics")
        try "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:a2\r\nSUMMARY:x\r\nDUE;TZID=Mars/Olympus:20261201T100000\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
            .write(toFile: zoned, atomically: true, encoding: .utf8)
        let z = try store.run("import", zoned)
        #expect(z.status == 1 && z.stderr.contains("Mars/Olympus") && z.stderr.split(separator: "\n").count == 1, "\(z)")
        #expect(try store.tasks().count == 1)
    }
}
