import Foundation
import Testing

/// Collection properties as Apple Reminders and DAVx5 set them: MKCALENDAR with a body
/// (RFC 4791 5.3.1) and PROPPATCH (RFC 4918 9.2), read back by PROPFIND and kept across a
/// restart of `tasklog serve` (Spec/interop.md, "CalDAV server").
@Suite("CalDAV server collection properties")
struct CalDAVServerPropertiesTests {
    let dir = TemporaryDirectory()

    static let wanted = """
        <d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"><d:prop>\
        <d:displayname/><c:calendar-description/><a:calendar-color/><a:calendar-order/></d:prop></d:propfind>
        """

    static func update(_ props: String, remove: String = "") -> String {
        "<d:propertyupdate xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:a=\"http://apple.com/ns/ical/\">"
            + "<d:set><d:prop>\(props)</d:prop></d:set>"
            + (remove.isEmpty ? "" : "<d:remove><d:prop>\(remove)</d:prop></d:remove>") + "</d:propertyupdate>"
    }

    @Test("MKCALENDAR with a name, colour and description shows them in PROPFIND, also after a restart")
    func mkcalendarPropertiesLastAcrossRestart() throws {
        let store = CLIStore(path: dir.sub("store"))
        var server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let body = """
            <c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop>\
            <d:displayname>Errands &amp; shops</d:displayname><c:calendar-description>Weekend</c:calendar-description>\
            <a:calendar-color>#FF2968FF</a:calendar-color><d:resourcetype><d:collection/><c:calendar/></d:resourcetype>\
            <c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set>\
            </d:prop></d:set></c:mkcalendar>
            """
        #expect(try server.dav("MKCALENDAR", "/dav/home/errands/", body: body, scratch: dir).status == 201)
        for round in 0..<2 {
            let found = try server.dav("PROPFIND", "/dav/home/errands/", body: Self.wanted, headers: ["Depth: 0"], scratch: dir)
            #expect(found.status == 207 && found.body.contains("<d:displayname>Errands &amp; shops</d:displayname>"), "round \(round): \(found)")
            #expect(found.body.contains("<c:calendar-description>Weekend</c:calendar-description>"))
            #expect(found.body.contains("<ical:calendar-color>#FF2968FF</ical:calendar-color>"))
            #expect(found.body.contains("<ical:calendar-order/></d:prop><d:status>HTTP/1.1 404 Not Found"))
            server.stop()
            if round == 0 { server = try ServerProcess(store: store.path, dir: dir, name: "again") }
        }
    }

    @Test("PROPPATCH of colour, order and display name answers 200 each and reads back; remove clears one")
    func proppatchRoundTrips() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Milk", "--list", "home")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let set = Self.update("<a:calendar-color>#1BADF8</a:calendar-color><a:calendar-order>3</a:calendar-order><d:displayname>Home</d:displayname>")
        let patched = try server.dav("PROPPATCH", "/dav/home/home/", body: set, scratch: dir)
        #expect(patched.status == 207 && patched.body.contains("<ical:calendar-color/><ical:calendar-order/><d:displayname/></d:prop><d:status>HTTP/1.1 200 OK"), "\(patched)")
        let found = try server.dav("PROPFIND", "/dav/home/", body: Self.wanted, headers: ["Depth: 1"], scratch: dir).body
        #expect(found.contains("<d:href>/dav/home/home/</d:href><d:propstat><d:prop><d:displayname>Home</d:displayname>"), "\(found)")
        #expect(found.contains("<ical:calendar-color>#1BADF8</ical:calendar-color><ical:calendar-order>3</ical:calendar-order>"))
        #expect(try server.dav("PROPPATCH", "/dav/home/home/", body: Self.update("", remove: "<a:calendar-order/>"), scratch: dir).status == 207)
        let after = try server.dav("PROPFIND", "/dav/home/home/", body: Self.wanted, headers: ["Depth: 0"], scratch: dir).body
        #expect(after.contains("<ical:calendar-color>#1BADF8</ical:calendar-color>") && !after.contains("<ical:calendar-order>3"), "\(after)")
        #expect(try store.tasks().first?["list"] as? String == "home")
    }

    @Test("a bad colour gets 409 and a protected property 403; the others get 424 and nothing changes")
    func failedUpdateChangesNothing() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Milk", "--list", "home")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let bad = Self.update("<d:displayname>Renamed</d:displayname><a:calendar-color>#red</a:calendar-color><d:getetag>x</d:getetag>")
        let answer = try server.dav("PROPPATCH", "/dav/home/home/", body: bad, scratch: dir).body
        #expect(answer.contains("<d:getetag/></d:prop><d:status>HTTP/1.1 403 Forbidden"), "\(answer)")
        #expect(answer.contains("<ical:calendar-color/></d:prop><d:status>HTTP/1.1 409 Conflict"))
        #expect(answer.contains("<d:displayname/></d:prop><d:status>HTTP/1.1 424 Failed Dependency"))
        let long = Self.update("<d:displayname>\(String(repeating: "x", count: 1025))</d:displayname>")
        #expect(try server.dav("PROPPATCH", "/dav/home/home/", body: long, scratch: dir).body.contains("409 Conflict"))
        let found = try server.dav("PROPFIND", "/dav/home/home/", body: Self.wanted, headers: ["Depth: 0"], scratch: dir).body
        #expect(found.contains("<d:displayname>home</d:displayname>") && !found.contains("Renamed"), "\(found)")
        let made = "<c:mkcalendar xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\" xmlns:a=\"http://apple.com/ns/ical/\">"
            + "<d:set><d:prop><a:calendar-color>#12345</a:calendar-color></d:prop></d:set></c:mkcalendar>"
        let refused = try server.dav("MKCALENDAR", "/dav/home/work/", body: made, scratch: dir)
        #expect(refused.status == 403 && refused.body.contains("<c:mkcalendar-response"), "\(refused)")
        #expect(try server.dav("PROPFIND", "/dav/home/work/", headers: ["Depth: 0"], scratch: dir).status == 404)
    }

    @Test("an unreadable properties file is reported and left as it was")
    func unreadableFileIsKept() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Milk", "--list", "home")
        let file = store.path + "/caldav/collections.json"
        try FileManager.default.createDirectory(atPath: store.path + "/caldav", withIntermediateDirectories: true)
        try "{\"collections\":7}".write(toFile: file, atomically: true, encoding: .utf8)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let answer = try server.dav("PROPPATCH", "/dav/home/home/", body: Self.update("<a:calendar-order>1</a:calendar-order>"), scratch: dir)
        #expect(answer.status == 500 && answer.body.contains("not the JSON this server writes; move it away"), "\(answer)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "{\"collections\":7}")
    }

    @Test("discovery as Apple clients do it: .well-known redirects and the principal names the home")
    func discoveryFromWellKnown() throws {
        let store = CLIStore(path: dir.sub("store"))
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let r = try CalDAVServerTests.run(
            "/usr/bin/curl", ["-s", "-u", "u:sekrit", "-o", "/dev/null", "-w", "%{http_code} %header{location}", server.url + "/.well-known/caldav"])
        #expect(r.stdout == "301 /dav/", "\(r)")
        let ask = "<d:propfind xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>"
        let found = try server.dav("PROPFIND", "/dav/", body: ask, headers: ["Depth: 0"], scratch: dir).body
        #expect(found.contains("<d:current-user-principal><d:href>/dav/principal/</d:href>"), "\(found)")
        let home = try server.dav("PROPFIND", "/dav/principal/", body: ask, headers: ["Depth: 0"], scratch: dir).body
        #expect(home.contains("<c:calendar-home-set><d:href>/dav/home/</d:href>"), "\(home)")
    }
}
