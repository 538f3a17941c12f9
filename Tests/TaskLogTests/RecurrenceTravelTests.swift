import Foundation
import Testing

/// Recurrence and the planning registers through other task apps, with the real binary and
/// real third-party tools; completion by each outside path makes exactly one next occurrence.
@Suite("recurrence travels")
struct RecurrenceTravelTests {
    let dir = TemporaryDirectory()

    /// A store with one weekly task due 2026-12-01 in list `home`; its id.
    func weekly(_ store: CLIStore) throws -> String {
        try store.ok("add", "Water plants", "--due", "2026-12-01", "--recur", "weekly", "--list", "home")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func open(_ store: CLIStore) throws -> [[String: Any]] { try store.tasks().filter { $0["done"] as? Bool == false } }

    /// After completing the weekly task: it is done, and one open task is due a week on.
    func expectOneNextOccurrence(_ store: CLIStore, _ id: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tasks = try store.tasks()
        #expect(tasks.count == 2, "\(tasks)", sourceLocation: sourceLocation)
        #expect(tasks.first { $0["id"] as? String == id }?["done"] as? Bool == true, sourceLocation: sourceLocation)
        let next = try open(store)
        #expect(next.count == 1 && next.first?["due"] as? String == "2026-12-08", "\(next)", sourceLocation: sourceLocation)
        #expect(next.first?["recur"] as? String == "every 1 weeks", sourceLocation: sourceLocation)
    }

    @Test("an iCalendar export states RRULE, RELATED-TO, DTSTART and the X- times, as Python's icalendar reads them")
    func icalendarExportReadByPython() throws {
        let store = CLIStore(path: dir.sub("s"))
        let file = dir.sub("in.ics")
        try Self.planned.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", file).contains("3 created"))
        try store.ok("add", "Gym", "--recur", "every 2 weeks")
        let exported = dir.sub("out.ics")
        try store.ok("export", "--format", "ics").write(toFile: exported, atomically: true, encoding: .utf8)
        let script = """
            import sys, icalendar
            cal = icalendar.Calendar.from_ical(open(sys.argv[1], 'rb').read())
            for t in cal.walk('VTODO'):
                rel = t.get('RELATED-TO')
                rels = rel if isinstance(rel, list) else ([rel] if rel is not None else [])
                rule = t.get('RRULE')
                print(t['SUMMARY'], '|', dict(rule) if rule else '', '|',
                      sorted((r.params.get('RELTYPE', ''), str(r)) for r in rels), '|',
                      t.decoded('DTSTART') if 'DTSTART' in t else '', '|', t.get('X-TASKLOG-WAIT', ''), '|', t.get('X-TASKLOG-START', ''))
            """
        let r = try CalDAVServerTests.run("/usr/bin/python3", ["-c", script, exported])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("Gym | {'FREQ': ['WEEKLY'], 'INTERVAL': [2]} | [] |  |  | "), "\(lines)")
        #expect(lines.contains("Plan trip | {'FREQ': ['MONTHLY']} | [('DEPENDS-ON', 'dep-1')] | 2026-12-20 | 20261215T080000Z | 20261207T100000Z"), "\(lines)")
        #expect(lines.contains("Book hotel | {'FREQ': ['WEEKLY'], 'BYDAY': ['MO', 'WE']} | [('PARENT', 'parent-1')] |  |  | "), "\(lines)")
        #expect(try store.ok("import", exported).contains("0 created, 0 changed, 4 unchanged"))
        let hotel = try #require(try store.tasks().first { $0["id"] as? String == "child-1" })
        #expect(hotel["recur"] as? String == nil, "a BYDAY rule is kept as written, not made a rule")
    }

    @Test("a RELATED-TO naming another app's UID links the tasks and is written back as it was")
    func foreignRelationsReadBack() throws {
        let store = CLIStore(path: dir.sub("s"))
        let file = dir.sub("evolution.ics")
        let todos = [("1", "Parent", ""), ("2", "Child", "RELATED-TO:1@evo.example\r\nRELATED-TO;RELTYPE=DEPENDS-ON:3@evo.example\r\n"), ("3", "Dep", "")]
        let body = todos.map { "BEGIN:VTODO\r\nUID:\($0.0)@evo.example\r\nSUMMARY:\($0.1)\r\n\($0.2)END:VTODO\r\n" }.joined()
        try "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Evolution//EN\r\n\(body)END:VCALENDAR\r\n".write(toFile: file, atomically: true, encoding: .utf8)
        try store.ok("import", file)
        let tasks = try store.tasks()
        let parent = try #require(tasks.first { $0["title"] as? String == "Parent" }?["id"] as? String)
        let child = try #require(tasks.first { $0["title"] as? String == "Child" })
        #expect(child["parent"] as? String == parent)
        let exported = try store.ok("export", "--format", "ics")
        #expect(exported.contains("RELATED-TO:1@evo.example\r\nRELATED-TO;RELTYPE=DEPENDS-ON:3@evo.example\r\n"), "\(exported)")
        try exported.write(toFile: dir.sub("out.ics"), atomically: true, encoding: .utf8)
        #expect(try store.ok("import", dir.sub("out.ics")).contains("0 changed, 3 unchanged"))
    }

    static let planned = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//Example//Planner//EN\r
        BEGIN:VTODO\r
        UID:parent-1\r
        SUMMARY:Plan trip\r
        DTSTART;VALUE=DATE:20261220\r
        X-TASKLOG-WAIT:20261215T080000Z\r
        X-TASKLOG-START:20261207T100000Z\r
        RRULE:FREQ=MONTHLY\r
        RELATED-TO;RELTYPE=DEPENDS-ON:dep-1\r
        END:VTODO\r
        BEGIN:VTODO\r
        UID:child-1\r
        SUMMARY:Book hotel\r
        RELATED-TO:parent-1\r
        RRULE:FREQ=WEEKLY;BYDAY=MO,WE\r
        END:VTODO\r
        BEGIN:VTODO\r
        UID:dep-1\r
        SUMMARY:Get visa\r
        END:VTODO\r
        END:VCALENDAR\r

        """

    @Test("a CalDAV client's PUT of the VTODO with STATUS:COMPLETED makes one next occurrence; the same PUT again none")
    func caldavCompletionMakesOneOccurrence() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try weekly(store)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let path = "/dav/home/home/\(id).ics"
        let fetched = try server.dav("GET", path, scratch: dir)
        #expect(fetched.status == 200 && fetched.body.contains("RRULE:FREQ=WEEKLY\r\n"), "\(fetched)")
        let completed = fetched.body.replacingOccurrences(of: "STATUS:NEEDS-ACTION", with: "STATUS:COMPLETED")
        for _ in 0..<2 {
            let put = try server.dav("PUT", path, body: completed, headers: ["Content-Type: text/calendar"], scratch: dir)
            #expect(put.status == 204, "\(put)")
        }
        try expectOneNextOccurrence(store, id)
    }

    @Test("an x line for a recurring task in a todo.txt import makes one next occurrence, also imported twice or on two devices")
    func todoTxtCompletionMakesOneOccurrence() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let id = try weekly(a)
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        let line = try a.ok("export", "--format", "todotxt").trimmingCharacters(in: .newlines)
        #expect(line.contains(" due:2026-12-01 rec:+1w "), "\(line)")
        let file = dir.sub("done.txt")
        try ("x 2026-12-02 " + line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try a.ok("import", file).contains("1 next occurrence made"))
        #expect(try !a.ok("import", file).contains("next occurrence"))
        try b.ok("import", file)
        for s in [a, b, a] { try s.ok("sync", shared) }
        for s in [a, b] { try expectOneNextOccurrence(s, id) }
    }

    @Test("a recurrence tool's done line and copy with the same uuid import as the completion and its one next occurrence")
    func todoTxtToolCopyIsTheNextOccurrence() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try weekly(store)
        let line = try store.ok("export", "--format", "todotxt").trimmingCharacters(in: .newlines)
        let copy = line.replacingOccurrences(of: "due:2026-12-01", with: "due:2026-12-09")
        let file = dir.sub("done.txt")
        try ("x 2026-12-02 " + line + "\n" + copy + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", file).contains("2 tasks: 1 created, 1 changed"))
        #expect(try store.ok("import", file).contains("0 created, 0 changed, 2 unchanged"))
        let next = try open(store)
        #expect(try store.tasks().count == 2 && next.count == 1 && next.first?["due"] as? String == "2026-12-09", "\(next)")
        #expect(next.first?["series"] as? String == id)
    }

    @Test("REST: PATCH done true makes the next occurrence; a PUT stating done again makes none")
    func restCompletionMakesOneOccurrence() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try weekly(store)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        #expect(HTTP.send("PATCH", server.url + "/v1/tasks/\(id)", json: #"{"done":true}"#).status == 200)
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/\(id)", json: #"{"done":true}"#).status == 200)
        try expectOneNextOccurrence(store, id)
    }

    @Test("Taskwarrior reads back recur, wait, scheduled and start, and its recurring template stays one")
    func taskwarriorRoundTripsRecurrence() throws {
        let tw = try Taskwarrior(dir: dir, name: "first")
        _ = try tw.run("add", "Pay rent", "due:2026-12-01", "recur:monthly")
        _ = try tw.run("add", "Gym", "due:2026-12-02", "recur:2weeks", "wait:2026-11-30", "scheduled:2026-12-01")
        _ = try tw.run("add", "Read")
        _ = try tw.run("3", "start")
        let source = dir.sub("source.json")
        try tw.run("export").write(toFile: source, atomically: true, encoding: .utf8)
        let store = CLIStore(path: dir.sub("store"))
        #expect(try store.ok("import", source).contains("3 created"))
        let tasks = try store.tasks()
        let gym = try #require(tasks.first { $0["title"] as? String == "Gym" })
        #expect(gym["done"] as? Bool == true, "a template is kept done, so it makes no occurrence itself")
        #expect(gym["recur"] as? String == "every 2 weeks" && gym["wait"] as? String == "2026-11-30")
        let (before, after) = try TaskwarriorAttributeTests.throughSecondTaskwarrior(store, source: source, dir: dir)
        #expect(before.count == 3 && Set(before.keys) == Set(after.keys))
        try TaskwarriorAttributeTests.expectSameFields(before, after)
        #expect(try store.ok("import", dir.sub("back.json")).contains("0 created, 0 changed, 3 unchanged"))
    }

    @Test("a Taskwarrior export that completes an occurrence and holds Taskwarrior's next one makes no second")
    func taskwarriorsOwnNextOccurrenceIsTheOne() throws {
        let store = CLIStore(path: dir.sub("s"))
        let template = #"{"uuid":"9f4a01b9-b885-458d-b8b6-99bd835d89a4","description":"Gym","status":"recurring","due":"20261201T000000Z","recur":"weekly","mask":"-","rtype":"periodic"}"#
        func child(_ uuid: String, _ status: String, _ due: String, _ imask: Int) -> String {
            #"{"uuid":"\#(uuid)","description":"Gym","status":"\#(status)","due":"\#(due)","recur":"weekly","parent":"9f4a01b9-b885-458d-b8b6-99bd835d89a4","imask":\#(imask),"rtype":"periodic"}"#
        }
        let first = "[" + template + "," + child("459d4224-676c-4347-9de4-664d8decb436", "pending", "20261201T000000Z", 0) + "]"
        try first.write(toFile: dir.sub("first.json"), atomically: true, encoding: .utf8)
        try store.ok("import", dir.sub("first.json"))
        let second = "[" + template + "," + child("459d4224-676c-4347-9de4-664d8decb436", "completed", "20261201T000000Z", 0) + ","
            + child("970b2dc1-2f11-4c96-9fb6-9113297b2fb1", "pending", "20261208T000000Z", 1) + "]"
        try second.write(toFile: dir.sub("second.json"), atomically: true, encoding: .utf8)
        #expect(try !store.ok("import", dir.sub("second.json")).contains("next occurrence"))
        let next = try open(store)
        #expect(next.count == 1 && next.first?["id"] as? String == "970b2dc1-2f11-4c96-9fb6-9113297b2fb1", "\(next)")
        #expect(try store.tasks().count == 3)
    }

    @Test("list marks a recurring task after its due date")
    func listShowsTheMarker() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try weekly(store)
        try store.ok("add", "Once", "--due", "2026-12-01")
        let listed = try store.ok("list").split(separator: "\n")
        #expect(listed.contains { $0.hasPrefix(id.prefix(8)) && $0.contains("2026-12-01") && $0.contains(" ↻") }, "\(listed)")
        #expect(listed.contains { $0.contains("Once") && !$0.contains("↻") }, "\(listed)")
    }
}
