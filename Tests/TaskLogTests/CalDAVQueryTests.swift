import Foundation
import Testing

/// `calendar-query` filters (RFC 4791, 9.7 to 9.9) and discovery, through real HTTP to
/// `tasklog serve` (Spec/interop.md, "CalDAV server").
@Suite("CalDAV calendar-query")
struct CalDAVQueryTests {
    let dir = TemporaryDirectory()

    /// A calendar-query asking for display names, with `inner` inside the VTODO comp-filter.
    static func query(_ inner: String) -> String {
        "<c:calendar-query xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><d:displayname/></d:prop>"
            + "<c:filter><c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\">\(inner)</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
    }

    static func textMatch(_ text: String, _ attributes: String = "") -> String {
        "<c:prop-filter name=\"SUMMARY\"><c:text-match \(attributes)>\(text)</c:text-match></c:prop-filter>"
    }

    static func range(_ start: String?, _ end: String?) -> String {
        "<c:time-range" + (start.map { " start=\"\($0)\"" } ?? "") + (end.map { " end=\"\($0)\"" } ?? "") + "/>"
    }

    /// The titles a query on the `home` collection answers, or the status and body when not 207.
    func titles(_ server: ServerProcess, _ inner: String) throws -> Set<String> {
        let answer = try server.dav("REPORT", "/dav/home/home/", body: Self.query(inner), headers: ["Depth: 1"], scratch: dir)
        guard answer.status == 207 else { throw CLIHarnessError("\(answer.status) \(answer.body)") }
        return Set(answer.body.components(separatedBy: "<d:displayname>").dropFirst().compactMap { $0.components(separatedBy: "</d:displayname>").first })
    }

    func serve(_ tasks: [[String]]) throws -> (CLIStore, ServerProcess) {
        let store = CLIStore(path: dir.sub("store"))
        for task in tasks {
            let r = try store.run(["add"] + task + ["--list", "home"])
            #expect(r.status == 0, "\(r)")
        }
        return (store, try ServerProcess(store: store.path, dir: dir))
    }

    @Test("text-match folds case in any script by default; i;octet does not; an unknown collation gets 403 supported-collation")
    func textMatchCollations() throws {
        let (_, server) = try serve([["Aller à l'école"], ["Buy milk"]])
        defer { server.stop() }
        #expect(try titles(server, Self.textMatch("ÉCOLE")) == ["Aller à l'école"])
        #expect(try titles(server, Self.textMatch("ÉCOLE", "collation=\"i;unicode-casemap\"")) == ["Aller à l'école"])
        #expect(try titles(server, Self.textMatch("MILK", "collation=\"i;ascii-casemap\"")) == ["Buy milk"])
        #expect(try titles(server, Self.textMatch("ÉCOLE", "collation=\"i;octet\"")).isEmpty)
        #expect(try titles(server, Self.textMatch("école", "collation=\"i;octet\"")) == ["Aller à l'école"])
        #expect(try titles(server, Self.textMatch("buy", "match-type=\"starts-with\"")) == ["Buy milk"])
        #expect(try titles(server, Self.textMatch("buy", "match-type=\"equals\"")).isEmpty)
        let refused = try server.dav("REPORT", "/dav/home/home/", body: Self.query(Self.textMatch("x", "collation=\"i;klingon\"")), scratch: dir)
        #expect(refused.status == 403 && refused.body.contains("<c:supported-collation/>"), "\(refused)")
    }

    @Test("negate-condition, is-not-defined DUE and param-filters select the tasks they name")
    func negationAndUndefined() throws {
        let (_, server) = try serve([["Buy milk", "--due", "2026-12-24"], ["Call Mum"], ["Water plants"]])
        defer { server.stop() }
        #expect(try titles(server, Self.textMatch("MILK", "negate-condition=\"yes\"")) == ["Call Mum", "Water plants"])
        #expect(try titles(server, "<c:prop-filter name=\"DUE\"><c:is-not-defined/></c:prop-filter>") == ["Call Mum", "Water plants"])
        #expect(try titles(server, "<c:prop-filter name=\"DUE\"/>") == ["Buy milk"])
        let both = "<c:prop-filter name=\"DUE\"><c:is-not-defined/></c:prop-filter>" + Self.textMatch("mum")
        #expect(try titles(server, both) == ["Call Mum"])
        let dateDue = "<c:prop-filter name=\"DUE\"><c:param-filter name=\"VALUE\"><c:text-match>date</c:text-match></c:param-filter></c:prop-filter>"
        #expect(try titles(server, dateDue) == ["Buy milk"])
        let noValue = "<c:prop-filter name=\"SUMMARY\"><c:param-filter name=\"LANGUAGE\"><c:is-not-defined/></c:param-filter></c:prop-filter>"
        #expect(try titles(server, noValue).count == 3)
    }

    @Test("time-range finds dues in 1990 and 2200, with either end left open")
    func timeRangeAnyYear() throws {
        let (_, server) = try serve([["Old", "--due", "1990-03-01"], ["Far", "--due", "2200-06-01"], ["Now", "--due", "2026-12-24"]])
        defer { server.stop() }
        #expect(try titles(server, Self.range("19900101T000000Z", "19910101T000000Z")) == ["Old"])
        #expect(try titles(server, Self.range("22000101T000000Z", "22010101T000000Z")) == ["Far"])
        #expect(try titles(server, Self.range(nil, "20000101T000000Z")) == ["Old"])
        #expect(try titles(server, Self.range("21000101T000000Z", nil)) == ["Far"])
        #expect(try titles(server, Self.range("20261224T000000Z", "20261225T000000Z")) == ["Now"])
        let bad = try server.dav("REPORT", "/dav/home/home/", body: Self.query(Self.range("2026-12-24", nil)), scratch: dir)
        #expect(bad.status == 403 && bad.body.contains("<c:valid-filter/>"), "\(bad)")
    }

    @Test("a completed task without a due is found by COMPLETED in range, not outside it")
    func completedInRange() throws {
        let (store, server) = try serve([["Done today"], ["Open, no dates"]])
        defer { server.stop() }
        let id = try #require(try store.tasks().first { $0["title"] as? String == "Done today" }?["id"] as? String)
        try store.ok("done", id)
        let day = 86_400.0
        func stamp(_ offset: Double) -> String {
            let f = DateFormatter()
            f.timeZone = TimeZone(identifier: "UTC")
            f.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            return f.string(from: Date().addingTimeInterval(offset))
        }
        #expect(try titles(server, Self.range(stamp(-day), stamp(day))) == ["Done today", "Open, no dates"])
        #expect(try titles(server, Self.range("20000101T000000Z", "20010101T000000Z")).isEmpty)
        let completed = "<c:prop-filter name=\"COMPLETED\">" + Self.range(stamp(-day), stamp(day)) + "</c:prop-filter>"
        #expect(try titles(server, completed) == ["Done today"])
    }

    @Test("a client's DTSTART and DURATION take part in the RFC 4791 9.9 table")
    func startAndDuration() throws {
        let (_, server) = try serve([["Placeholder"]])
        defer { server.stop() }
        let todo = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:window\r\nSUMMARY:Window\r\n"
            + "DTSTART:19950118T120000Z\r\nDURATION:PT2H\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        #expect(try server.dav("PUT", "/dav/home/home/window.ics", body: todo, scratch: dir).status == 201)
        #expect(try titles(server, Self.range("19950118T130000Z", "19950118T133000Z")) == ["Window"])
        #expect(try titles(server, Self.range(nil, "19950118T120000Z")).isEmpty)
        #expect(try titles(server, Self.range("19950118T140001Z", "19950119T000000Z")).isEmpty)
    }

    @Test("a recurring task is found by any instance its RRULE makes, within COUNT and UNTIL")
    func recurringTaskInstances() throws {
        let (_, server) = try serve([])
        defer { server.stop() }
        func put(_ uid: String, _ rule: String) throws {
            let todo = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:\(uid)\r\nSUMMARY:\(uid)\r\n"
                + "DTSTART:20270131T120000Z\r\nDUE:20270131T130000Z\r\nRRULE:\(rule)\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
            #expect(try server.dav("PUT", "/dav/home/home/\(uid).ics", body: todo, scratch: dir).status == 201)
        }
        try put("monthly", "FREQ=MONTHLY")
        try put("twice", "FREQ=WEEKLY;COUNT=2")
        try put("fortnightly", "FREQ=WEEKLY;INTERVAL=2;UNTIL=20270220T000000Z")
        func on(_ day: String) throws -> Set<String> { try titles(server, Self.range(day + "T000000Z", day + "T235959Z")) }
        #expect(try on("20270131") == ["monthly", "twice", "fortnightly"])
        #expect(try on("20270207") == ["twice"])
        #expect(try on("20270214") == ["fortnightly"])
        #expect(try on("20270228").isEmpty)  // February has no 31st; the fortnightly one ended
        #expect(try on("20270331") == ["monthly"])
        #expect(try on("20270328").isEmpty)  // past UNTIL and COUNT
        #expect(try on("22000131") == ["monthly"])
    }

    @Test("filters nested too deep, with too many tests or a huge text-match get 413 at once")
    func hostileFiltersAreRefused() throws {
        let (_, server) = try serve([["Buy milk"]])
        defer { server.stop() }
        let deep = String(repeating: "<c:comp-filter name=\"VALARM\">", count: 20) + String(repeating: "</c:comp-filter>", count: 20)
        let many = String(repeating: Self.textMatch("milk"), count: 300)
        let huge = Self.textMatch(String(repeating: "é", count: 5_000))
        for (name, inner) in [("deep", deep), ("many", many), ("huge", huge)] {
            let answer = try server.dav("REPORT", "/dav/home/home/", body: Self.query(inner), seconds: 10, scratch: dir)
            #expect(answer.status == 413, "\(name): \(answer.status) \(answer.body.prefix(200))")
        }
        #expect(try titles(server, Self.textMatch("milk")) == ["Buy milk"])
    }

    @Test("discovery as Apple clients do it: well-known, principal, home, VTODO collections with ctag and sync-token")
    func appleStyleDiscovery() throws {
        let (_, server) = try serve([["Buy milk"]])
        defer { server.stop() }
        let principalQuery = "<d:propfind xmlns:d=\"DAV:\"><d:prop><d:current-user-principal/><d:principal-URL/></d:prop></d:propfind>"
        let body = dir.sub("principal.xml")
        try principalQuery.write(toFile: body, atomically: true, encoding: .utf8)
        let followed = try CalDAVServerTests.run(
            "/usr/bin/curl", ["-s", "-L", "-u", "u:sekrit", "-X", "PROPFIND", "-H", "Depth: 0", "--data-binary", "@" + body, server.url + "/.well-known/caldav"])
        #expect(followed.stdout.contains("<d:current-user-principal><d:href>/dav/principal/</d:href>"), "\(followed)")
        let home = try server.dav(
            "PROPFIND", "/dav/principal/", body: "<d:propfind xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><c:calendar-home-set/><d:principal-URL/></d:prop></d:propfind>",
            headers: ["Depth: 0"], scratch: dir)
        #expect(home.status == 207 && home.body.contains("<c:calendar-home-set><d:href>/dav/home/</d:href>"), "\(home)")
        #expect(home.body.contains("<d:principal-URL><d:href>/dav/principal/</d:href>"), "\(home)")
        let wanted = "<d:propfind xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:cs=\"http://calendarserver.org/ns/\"><d:prop>"
            + "<d:resourcetype/><c:supported-calendar-component-set/><cs:getctag/><d:sync-token/></d:prop></d:propfind>"
        let lists = try server.dav("PROPFIND", "/dav/home/", body: wanted, headers: ["Depth: 1"], scratch: dir)
        #expect(lists.status == 207, "\(lists)")
        let collection = try #require(lists.body.components(separatedBy: "<d:response>").first { $0.contains("<d:href>/dav/home/home/</d:href>") })
        #expect(collection.contains("<c:comp name=\"VTODO\"/>") && collection.contains("<c:calendar/>"), "\(collection)")
        #expect(collection.contains("urn:tasklog:sync:") && collection.contains("getctag>urn:tasklog:sync:"), "\(collection)")
    }
}
