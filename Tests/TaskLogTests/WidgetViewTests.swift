import Foundation
import Testing

/// `GET /v1/top`, the widget view of `tasklog serve`, against the CLI's `top`.
@Suite("REST widget view")
struct WidgetViewTests {
    let dir = TemporaryDirectory()

    func titles(_ answer: HTTP.Answer) -> [String] {
        ((answer.json as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }
    }

    @Test("GET /v1/top ranks by urgency as tasklog top does: overdue, then due today above high priority weeks away")
    func topOrderMatchesTheCLI() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("add", "someday", "--priority", "3", "--due", "+3w")
        try s.ok("add", "late", "--priority", "0", "--due", "yesterday")
        try s.ok("add", "due today", "--priority", "1", "--due", "today")
        let done = try s.ok("add", "done already", "--priority", "3", "--due", "yesterday").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("done", done)
        let probe = try s.ok("add", "probe", "--due", "tomorrow", "--json")
        let tomorrow = try #require((try JSONSerialization.jsonObject(with: Data(probe.utf8)) as? [String: Any])?["due"] as? String)
        let server = try ServerProcess(store: s.path, dir: dir)
        defer { server.stop() }

        let top = HTTP.send("GET", server.url + "/v1/top?n=3")
        #expect(top.status == 200 && titles(top) == ["late", "due today", "probe"], "\(top)")
        let cli = try JSONSerialization.jsonObject(with: Data(try s.ok("top", "3", "--json").utf8)) as? [[String: Any]]
        #expect(cli?.compactMap { $0["title"] as? String } == titles(top))
        #expect(titles(HTTP.send("GET", server.url + "/v1/top")) == ["late", "due today"])
        // A client already on tomorrow's date sees today's task as overdue too.
        #expect(titles(HTTP.send("GET", server.url + "/v1/top?n=2&today=\(tomorrow)")) == ["due today", "late"])
        #expect(titles(HTTP.send("GET", server.url + "/v1/top?n=0")).isEmpty)
    }

    @Test("GET /v1/top refuses a bad n or today with 400 and other methods with 405")
    func badParametersAreRefused() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("add", "one")
        let server = try ServerProcess(store: s.path, dir: dir)
        defer { server.stop() }
        for query in ["n=-1", "n=abc", "n=1001", "today=2026-13-01", "today=tomorrow"] {
            let r = HTTP.send("GET", server.url + "/v1/top?" + query)
            #expect(r.status == 400 && (r.json as? [String: Any])?["error"] is String, "\(query): \(r)")
        }
        #expect(HTTP.send("POST", server.url + "/v1/top", json: "{}").status == 405)
        #expect(HTTP.send("GET", server.url + "/v1/top", token: nil).status == 401)
    }
}
