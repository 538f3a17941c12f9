import Foundation
import Testing

/// `tasklog sync http://…` and `sync caldav://…` against servers that attack their client:
/// answers that never end, a 2 GiB `Content-Length`, a trickle, hrefs outside the collection.
@Suite("hostile servers")
struct HostileServerTests {
    let dir = TemporaryDirectory()

    /// `Tests/Fixtures/hostile/server.py MODE` on a free loopback port; stopped by pid.
    final class HostileServer {
        let fixture: PythonFixture
        var port: Int { fixture.port }

        init(_ mode: String, dir: TemporaryDirectory) throws {
            fixture = try PythonFixture(
                "hostile/server.py", [mode, dir.sub("\(mode).requests")], log: dir.sub("\(mode).requests"),
                output: URL(fileURLWithPath: dir.sub(mode)), what: "hostile server")
        }

        /// Each request received, as `METHOD path`.
        var requests: [String] { fixture.requests }
    }

    /// A store holding one task, and its files.
    func store() throws -> (CLIStore, [String: Data]) {
        let s = CLIStore(path: dir.sub("store"))
        try s.ok("add", "kept")
        return (s, TemporaryDirectory.contents(s.path))
    }

    /// Runs a sync that must fail: exit 1, one line on stderr holding `expected`, the store
    /// unchanged, and done well within the time a hostile server could otherwise take.
    func refused(_ s: CLIStore, _ before: [String: Data], _ args: [String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let started = Date()
        let r = try s.run(args)
        #expect(Date().timeIntervalSince(started) < 60, sourceLocation: sourceLocation)
        #expect(r.status == 1, "\(r)", sourceLocation: sourceLocation)
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(expected), "\(r)", sourceLocation: sourceLocation)
        #expect(TemporaryDirectory.contents(s.path) == before, sourceLocation: sourceLocation)
    }

    @Test("sync http:// stops reading an endless, endless chunked or 2 GiB pull answer at 72 MiB: exit 1, one line, store unchanged", arguments: ["endless", "chunked", "huge-length"])
    func httpPullAnswerIsBounded(mode: String) throws {
        let server = try HostileServer(mode, dir: dir)
        let (s, before) = try store()
        try refused(s, before, ["sync", "http://127.0.0.1:\(server.port)", "--token", "t"], "sent more than 72 MiB in one answer")
    }

    @Test("sync caldav:// stops reading an endless multistatus at 32 MiB, and a 2 GiB one before its body: exit 1, one line, store unchanged", arguments: ["endless-xml", "huge-length"])
    func calDAVListingIsBounded(mode: String) throws {
        let server = try HostileServer(mode, dir: dir)
        let (s, before) = try store()
        try refused(s, before, ["sync", "caldav://127.0.0.1:\(server.port)/cal/"], "sent more than 32 MiB in one answer")
    }

    @Test("sync caldav:// reading an endless body that is not XML stops at its first bytes and says the server is no collection")
    func calDAVGarbageStopsEarly() throws {
        let server = try HostileServer("chunked", dir: dir)
        let (s, before) = try store()
        try refused(s, before, ["sync", "caldav://127.0.0.1:\(server.port)/cal/"], "is not a CalDAV task collection")
    }

    @Test("sync http:// against a server that trickles a byte every two seconds is cut off after 15 s without progress")
    func tricklingServerIsCutOff() throws {
        let server = try HostileServer("trickle", dir: dir)
        let (s, before) = try store()
        try refused(s, before, ["sync", "http://127.0.0.1:\(server.port)", "--token", "t"], "sent fewer than 1024 bytes in 15 s")
    }

    @Test("sync caldav:// ignores hrefs outside its collection, with a warning, and sends no request outside it after local edits")
    func hrefsOutsideTheCollectionAreIgnored() throws {
        let server = try HostileServer("outside", dir: dir)
        let s = CLIStore(path: dir.sub("store"))
        let url = "caldav://127.0.0.1:\(server.port)/cal/"
        let first = try s.run(["sync", url])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("received 1 task(s)"), "\(first)")
        for href in ["/other/evil.ics", "file:///etc/passwd", "http://evil.example/x.ics", "/cal/../other/dots.ics", "/cal/sub/deeper.ics"] {
            #expect(first.stderr.contains("skipped \(href): outside the collection"), "\(href): \(first)")
        }
        #expect(!first.stderr.contains("skipped /cal/:"), "\(first)")
        #expect(try s.tasks().map { $0["title"] as? String } == ["from uid-7"])
        for task in try s.tasks() { try s.ok("edit", task["id"] as! String, "--title", "edited here") }
        try s.ok("add", "new here")
        // State an older bridge wrote may name an href outside: it is forgotten, and its task is
        // kept and sent into the collection (not removed here as if that object had gone).
        let planted = try s.ok("add", "planted").trimmingCharacters(in: .whitespacesAndNewlines)
        let state = try #require(try FileManager.default.contentsOfDirectory(atPath: s.full("caldav")).first.map { s.full("caldav/" + $0) })
        let item = #"{"href":"/other/planted.ics","id":"\#(planted)","etag":"\"1\"","base":""},"#
        try (try String(contentsOfFile: state, encoding: .utf8)).replacingOccurrences(of: "\"items\":[", with: "\"items\":[\n" + item)
            .write(toFile: state, atomically: true, encoding: .utf8)
        let second = try s.run(["sync", url])
        #expect(second.status == 0 && second.stderr.contains("skipped /other/planted.ics: outside the collection; forgotten"), "\(second)")
        let kept = try s.tasks().contains { $0["id"] as? String == planted }
        #expect(kept && server.requests.contains("PUT /cal/\(planted).ics"), "\(server.requests)")
        for task in try s.tasks() { try s.ok("rm", task["id"] as! String) }
        #expect(try s.run(["sync", url]).status == 0)
        let requests = server.requests
        #expect(requests.contains("PUT /cal/ok.ics") && requests.contains("DELETE /cal/ok.ics"), "\(requests)")
        let inside = requests.filter { line in
            let raw = line.split(separator: " ").last.map(String.init) ?? ""
            let path = raw.removingPercentEncoding ?? raw
            if line == "PROPFIND /cal/" || line == "REPORT /cal/" { return true }
            return path.count > 5 && path.hasPrefix("/cal/") && !path.dropFirst(5).contains("/") && !path.contains("..")
        }
        #expect(inside == requests, "requests outside /cal/: \(Set(requests).subtracting(inside))")
    }
}
