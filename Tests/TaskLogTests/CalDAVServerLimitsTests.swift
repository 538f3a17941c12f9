import Foundation
import Testing

extension ServerProcess {
    /// One CalDAV request with curl, the path sent as written; the status and the body.
    /// `scratch` holds the body and answer files.
    func dav(
        _ method: String, _ path: String, body: String? = nil, headers: [String] = [], seconds: Int = 60, scratch: TemporaryDirectory
    ) throws -> (status: Int, body: String) {
        let out = scratch.sub("answer-\(UUID().uuidString)")
        var args = ["-s", "--path-as-is", "-u", "u:sekrit", "-X", method, "-o", out, "-w", "%{http_code}", "--max-time", String(seconds)]
        args += headers.flatMap { ["-H", $0] }
        if let body {
            let file = scratch.sub("body-\(UUID().uuidString)")
            try body.write(toFile: file, atomically: true, encoding: .utf8)
            args += ["--data-binary", "@" + file]
        }
        let r = try CalDAVServerTests.run("/usr/bin/curl", args + [url + path])
        return (Int(r.stdout) ?? -1, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }
}

/// The CalDAV server under requests an attacker would send: each costs what it names, and
/// bodies past the stated bounds are refused at once (Spec/interop.md, "CalDAV server").
@Suite("CalDAV server limits")
struct CalDAVServerLimitsTests {
    let dir = TemporaryDirectory()

    static func multiget(_ hrefs: [String]) -> String {
        "<c:calendar-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><d:getetag/></d:prop>"
            + hrefs.map { "<d:href>\($0)</d:href>" }.joined() + "</c:calendar-multiget>"
    }

    /// A store holding one task with `tags` tags in list `home`; its id.
    func storeWithTags(_ store: CLIStore, _ tags: Int) throws -> String {
        let file = dir.sub("big.json")
        let names = (0..<tags).map { "\"t\($0)\"" }.joined(separator: ",")
        try "[{\"title\":\"Many tags\",\"list\":\"home\",\"tags\":[\(names)]}]".write(toFile: file, atomically: true, encoding: .utf8)
        try store.ok("import", file, "--format", "json")
        return try #require(try store.tasks().first?["id"] as? String)
    }

    @Test("a multiget of thousands of missing hrefs beside a task with 50,000 tags answers each with 404, once per href")
    func missingHrefsCostNothing() throws {
        let store = CLIStore(path: dir.sub("store"))
        let big = try storeWithTags(store, 50_000)
        let small = try store.ok("add", "Small", "--list", "home").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let missing = (0..<3_000).map { "/dav/home/home/missing-\($0).ics" }
        let hrefs = missing + ["/dav/home/home/\(small).ics", "/dav/home/home/\(small).ics", "/dav/home/home/missing-0.ics"]
        let answer = try server.dav("REPORT", "/dav/home/home/", body: Self.multiget(hrefs), seconds: 60, scratch: dir)
        #expect(answer.status == 207, "\(answer.status) \(answer.body.prefix(300))")
        #expect(answer.body.components(separatedBy: "<d:status>HTTP/1.1 404 Not Found</d:status></d:response>").count - 1 == 3_000)
        #expect(answer.body.components(separatedBy: "<d:href>/dav/home/home/\(small).ics</d:href>").count - 1 == 1)
        #expect(answer.body.contains("<d:href>/dav/home/home/missing-2999.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status>"))
        let object = try server.dav("GET", "/dav/home/home/\(big).ics", scratch: dir).body
        #expect(object.replacingOccurrences(of: "\r\n ", with: "").contains(",t49999"))
    }

    @Test("a PUT with more CATEGORIES, or a multiget with more hrefs, than the bounds is refused with 413 and writes nothing")
    func requestsOverTheBoundsAreRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Existing", "--list", "home")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        func todo(_ tags: Int) -> String {
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VTODO\r\nUID:many-\(tags)\r\nSUMMARY:Tags\r\nCATEGORIES:"
                + (0..<tags).map { "t\($0)" }.joined(separator: ",") + "\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"
        }
        let refused = try server.dav("PUT", "/dav/home/home/many.ics", body: todo(50_000), scratch: dir)
        #expect(refused.status == 413 && refused.body.contains("at most 1000 CATEGORIES values, this one 50000"), "\(refused)")
        #expect(try store.tasks().map { $0["title"] as? String } == ["Existing"])
        #expect(try server.dav("PUT", "/dav/home/home/few.ics", body: todo(1_000), scratch: dir).status == 201)
        let answer = try server.dav("REPORT", "/dav/home/home/", body: Self.multiget((0..<10_001).map { "/\($0)" }), scratch: dir)
        #expect(answer.status == 413 && answer.body.contains("at most 10000 hrefs, this one 10001"), "\(answer)")
    }

    @Test("a PROPFIND whose answer would pass 128 MiB stops with 503 instead of growing it")
    func hugeAnswersStop() throws {
        let store = CLIStore(path: dir.sub("store"))
        let file = dir.sub("tasks.json")
        try ("[" + (0..<300).map { "{\"title\":\"Task \($0)\",\"list\":\"home\"}" }.joined(separator: ",") + "]")
            .write(toFile: file, atomically: true, encoding: .utf8)
        try store.ok("import", file, "--format", "json")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        // Each task's answer names 50 missing properties of 10 KB each: 500 KB, 150 MB in all.
        let props = (0..<50).map { "<x:\(String(repeating: "n", count: 10_000))\($0)/>" }.joined()
        let body = "<d:propfind xmlns:d=\"DAV:\" xmlns:x=\"urn:x\"><d:prop>\(props)</d:prop></d:propfind>"
        let answer = try server.dav("PROPFIND", "/dav/home/home/", body: body, headers: ["Depth: 1"], scratch: dir)
        #expect(answer.status == 503 && answer.body.contains("grew past 128 MiB"), "\(answer.status) \(answer.body.prefix(200))")
    }

    @Test("a PROPFIND with 80,000 attributes, or nested 100 deep, is refused at once with 413; a plain one still answers")
    func hugeXMLBodiesAreRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "x", "--list", "home")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let attributes = (0..<80_000).map { "a\($0)=\"\"" }.joined(separator: " ")
        let wide = "<d:propfind xmlns:d=\"DAV:\"><d:prop \(attributes)><d:getetag/></d:prop></d:propfind>"
        let refused = try server.dav("PROPFIND", "/dav/home/home/", body: wide, headers: ["Depth: 0"], seconds: 10, scratch: dir)
        #expect(refused.status == 413 && refused.body.contains("more than 64 attributes"), "\(refused.status) \(refused.body.prefix(200))")
        let deep = "<d:propfind xmlns:d=\"DAV:\">" + String(repeating: "<d:x>", count: 100) + String(repeating: "</d:x>", count: 100) + "</d:propfind>"
        let nested = try server.dav("PROPFIND", "/dav/home/home/", body: deep, headers: ["Depth: 0"], scratch: dir)
        #expect(nested.status == 413 && nested.body.contains("nest deeper than 64"), "\(nested)")
        let plain = "<d:propfind xmlns:d=\"DAV:\"><d:prop><d:getetag/><d:displayname/></d:prop></d:propfind>"
        #expect(try server.dav("PROPFIND", "/dav/home/home/", body: plain, headers: ["Depth: 1"], scratch: dir).status == 207)
    }
}
