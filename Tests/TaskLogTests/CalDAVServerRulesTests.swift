import Foundation
import Testing

/// WebDAV and HTTP rules the CalDAV server keeps where clients rely on them: hrefs without dot
/// segments, MOVE within this server only (RFC 4918), strong If-Match (RFC 7232).
@Suite("CalDAV server rules")
struct CalDAVServerRulesTests {
    let dir = TemporaryDirectory()

    @Test("lists named . and .. get %2E hrefs, which read back to the same tasks")
    func dotListsGetEncodedHrefs() throws {
        let store = CLIStore(path: dir.sub("store"))
        let one = try store.ok("add", "In dot", "--list", ".").trimmingCharacters(in: .newlines)
        let two = try store.ok("add", "In dot dot", "--list", "..").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let home = try server.dav("PROPFIND", "/dav/home/", headers: ["Depth: 1"], scratch: dir)
        #expect(home.status == 207 && home.body.contains("<d:href>/dav/home/%2E/</d:href>") && home.body.contains("<d:href>/dav/home/%2E%2E/</d:href>"))
        #expect(!home.body.contains("/./") && !home.body.contains("/../"), "\(home.body)")
        let listed = try server.dav("PROPFIND", "/dav/home/%2E%2E/", headers: ["Depth: 1"], scratch: dir)
        #expect(listed.body.contains("<d:href>/dav/home/%2E%2E/\(two).ics</d:href>"), "\(listed)")
        #expect(try server.dav("GET", "/dav/home/%2E/\(one).ics", scratch: dir).body.contains("SUMMARY:In dot\r\n"))
        #expect(try server.dav("GET", "/dav/home/%2e%2e/\(two).ics", scratch: dir).body.contains("SUMMARY:In dot dot\r\n"))
        #expect(try server.dav("GET", "/dav/home/../\(two).ics", scratch: dir).status == 404)
    }

    @Test("MOVE to another host's URL is refused with 502 and moves nothing; to this server's URL it moves")
    func moveToAnotherHostIsRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        let id = try store.ok("add", "Stay", "--list", "home").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let away = try server.dav("MOVE", "/dav/home/home/\(id).ics", headers: ["Destination: http://evil.example/dav/home/work/\(id).ics"], scratch: dir)
        #expect(away.status == 502 && away.body.contains("another server (evil.example)"), "\(away)")
        let otherPort = try server.dav("MOVE", "/dav/home/home/\(id).ics", headers: ["Destination: http://127.0.0.1:1/dav/home/work/\(id).ics"], scratch: dir)
        #expect(otherPort.status == 502)
        #expect(try store.tasks().first?["list"] as? String == "home")
        let here = try server.dav("MOVE", "/dav/home/home/\(id).ics", headers: ["Destination: \(server.url)/dav/home/work/\(id).ics"], scratch: dir)
        #expect(here.status == 201, "\(here)")
        #expect(try store.tasks().first?["list"] as? String == "work")
    }

    @Test("If-Match with a weak ETag never matches: the PUT is refused with 412; the strong one is accepted")
    func weakIfMatchIsRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        let id = try store.ok("add", "Draft", "--list", "home").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let r = try CalDAVServerTests.run(
            "/usr/bin/curl", ["-s", "-u", "u:sekrit", "-o", "/dev/null", "-w", "%header{etag}", server.url + "/dav/home/home/\(id).ics"])
        let etag = r.stdout
        #expect(etag.hasPrefix("\""), "\(r)")
        let body = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:\(id)\r\nSUMMARY:Edited\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        let weak = try server.dav("PUT", "/dav/home/home/\(id).ics", body: body, headers: ["If-Match: W/\(etag)"], scratch: dir)
        #expect(weak.status == 412, "\(weak)")
        #expect(try store.tasks().first?["title"] as? String == "Draft")
        #expect(try server.dav("PUT", "/dav/home/home/\(id).ics", body: body, headers: ["If-Match: \(etag)"], scratch: dir).status == 204)
        #expect(try store.tasks().first?["title"] as? String == "Edited")
    }
}
