import Foundation
import Testing
@_spi(Engine) import TaskSyncHTTP
@_spi(Engine) import WebPage

/// The page `tasklog serve` offers at `/`: its files and headers over HTTP, and the page
/// itself driven in headless Chromium (Tests/Fixtures/web/page_test.py). A browser that
/// cannot start fails the test.
@Suite("Web page")
struct WebPageTests {
    let dir = TemporaryDirectory()
    static let script = CalDAVServerTests.fixtures + "/web/page_test.py"

    /// Starts `serve` with `extra` on a new store and runs the Selenium script against it
    /// (passing `auth`); every step the script prints must pass.
    func drive(serving extra: [String], auth: [String]) throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("init")
        // One zone for the server, the CLI and the script's idea of tomorrow.
        let zone = ["TZ": "UTC", "LC_ALL": "C"]
        let server = try ServerProcess(store: store.path, extra: extra, dir: dir, environment: zone)
        defer { server.stop() }
        let r = try CalDAVServerTests.run(
            "/usr/bin/python3",
            [Self.script, "--tasklog", CLI.binary, "--store", store.path, "--url", server.url, "--pid", "\(server.process.processIdentifier)"] + auth,
            environment: zone)
        #expect(r.status == 0, "\(r)")
        for passed in ["the server is back: each offline write landed once", "keyboard", "the preview shows a hostile line", "quick add: the preview", "the today panel lists",
                       "sort by urgency", "an offline quick add lands parsed"] {
            #expect(r.stdout.contains("ok " + passed), "\(r)")
        }
    }

    @Test("in Chromium: a token signs in, a wrong one is refused; edits, live rows, offline writes each land once; quick add, today, urgency")
    func pageWithToken() throws {
        try drive(serving: ["--token", "sekrit"], auth: ["--token", "sekrit"])
    }

    @Test("in Chromium: guest mode on loopback opens the list without a token")
    func pageAsGuest() throws {
        try drive(serving: ["--allow-guest"], auth: ["--guest"])
    }

    @Test("the page's files need no token and carry a strict CSP and no cookie; the data still answers 401")
    func filesArePublicDataIsNot() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("init")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let page = rawSend(port: server.port, Array("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(page.hasPrefix("HTTP/1.1 200"), "\(page)")
        #expect(page.contains("Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self';"), "\(page)")
        #expect(!page.lowercased().contains("set-cookie"))
        for path in ["/app.js", "/app.css", "/sw.js", "/icon.svg"] {
            #expect(HTTP.send("GET", server.url + path, token: nil).status == 200, "\(path)")
        }
        #expect(HTTP.send("GET", server.url + "/v1/tasks", token: nil).status == 401)
        // (Raw: the Basic challenge on `/` keeps URLSession waiting for a password.)
        let post = rawSend(port: server.port, Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        #expect(post.hasPrefix("HTTP/1.1 401"), "\(post)")
        #expect(HTTP.send("GET", server.url + "/v1/tasks", token: "wrong").status == 401)
        let weight = WebPage.weight
        #expect(weight <= 100 << 10, "the page weighs \(weight) bytes")
    }

    @Test("GET /v1/tasks filters by status, tag, list and words, and sorts as asked")
    func listQuery() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("init")
        try store.ok("add", "Call Zoë about the café", "--tag", "Phone", "--list", "home")
        try store.ok("add", "Buy bread", "--tag", "shop", "--priority", "3")
        let done = try store.ok("add", "Old errand", "--tag", "shop").trimmingCharacters(in: .whitespacesAndNewlines)
        try store.ok("done", done)
        let gone = try store.ok("add", "Gone errand").trimmingCharacters(in: .whitespacesAndNewlines)
        try store.ok("rm", gone)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        func titles(_ query: String) -> [String] {
            let a = HTTP.send("GET", server.url + "/v1/tasks?" + query)
            return ((a.json as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }
        }
        #expect(titles("status=open&q=zoe+CAFE") == ["Call Zoë about the café"])
        #expect(titles("status=open&tag=phone") == ["Call Zoë about the café"])
        #expect(titles("list=home") == ["Call Zoë about the café"])
        #expect(titles("status=done") == ["Old errand"])
        #expect(titles("status=deleted") == ["Gone errand"])
        #expect(titles("status=open&sort=priority") == ["Buy bread", "Call Zoë about the café"])
        #expect(titles("status=all&sort=title") == ["Buy bread", "Call Zoë about the café", "Old errand"])
        #expect(HTTP.send("GET", server.url + "/v1/tasks?sort=shoe").status == 400)
        #expect(HTTP.send("GET", server.url + "/v1/tasks?status=maybe").status == 400)
    }

    @Test("the server hands every request header to its handler, and refuses more than its limit")
    func everyHeaderPassesThrough() throws {
        let server = try HTTPServer(address: "127.0.0.1", port: 0) { request in
            HTTPResponse(status: 200, body: Array((request.headers["x-anything"] ?? "none").utf8))
        }
        defer { server.stop() }
        let one = rawSend(port: Int(server.port), Array("GET / HTTP/1.1\r\nHost: x\r\nX-Anything: seen\r\nConnection: close\r\n\r\n".utf8))
        #expect(one.hasSuffix("seen"), "\(one)")
        let many = (0..<120).map { "X-Field-\($0): v\r\n" }.joined()
        let refused = rawSend(port: Int(server.port), Array("GET / HTTP/1.1\r\nHost: x\r\n\(many)Connection: close\r\n\r\n".utf8))
        #expect(refused.hasPrefix("HTTP/1.1 431"), "\(refused)")
    }
}
