import Foundation
import Testing

/// The planning endpoints of `tasklog serve`: `POST /v1/parse`, a PUT with `quick`,
/// `GET /v1/today` and `sort=urgency`, against a real server in UTC.
@Suite("Planning over HTTP")
struct PlanningHTTPTests {
    let dir = TemporaryDirectory()
    static let environment = ["TZ": "UTC", "LC_ALL": "C"]
    /// 2026-12-07T12:00:00Z, a Monday.
    static let monday: Int64 = 1_796_644_800_000

    func serve() throws -> (CLIStore, ServerProcess) {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("init")
        return (store, try ServerProcess(store: store.path, dir: dir, environment: Self.environment))
    }

    @Test("POST /v1/parse reads the quick-add grammar at the instant given and names every field")
    func parseReadsTheGrammar() throws {
        let (_, server) = try serve()
        defer { server.stop() }
        let a = HTTP.send("POST", server.url + "/v1/parse", json: #"{"text": "Buy milk tomorrow #shop +groceries !2 every week", "at": \#(Self.monday)}"#)
        #expect(a.status == 200, "\(a)")
        let fields = try #require(a.json as? [String: Any])
        #expect(fields["title"] as? String == "Buy milk")
        #expect(fields["due"] as? String == "2026-12-08")
        #expect(fields["tags"] as? [String] == ["shop"])
        #expect(fields["list"] as? String == "groceries")
        #expect(fields["priority"] as? Int == 2)
        #expect(fields["recur"] as? String == "every 1 weeks")  // the task form's text
        #expect(fields["wait"] is NSNull && fields["scheduled"] is NSNull)
    }

    @Test("POST /v1/parse refuses bad bodies, refused lines and huge text with 400 and one line; needs the token")
    func parseRefusals() throws {
        let (_, server) = try serve()
        defer { server.stop() }
        let url = server.url + "/v1/parse"
        for (body, says) in [
            ("not json", "expected a JSON object"), (#"["x"]"#, "expected a JSON object"), (#"{"text": 3}"#, "must be the quick-add text"),
            (#"{"text": "x", "due": "today"}"#, "unknown key"), (#"{"text": "x", "at": -1}"#, "must be the instant typed"),
            (#"{"text": "Call !9"}"#, "'!9' is no priority"), (##"{"text": "#shop !2"}"##, "nothing is left for the title"),
            (#"{"text": "\#(String(repeating: "a", count: 1001))"}"#, "at most 1000"),
        ] {
            let a = HTTP.send("POST", url, json: body)
            #expect(a.status == 400 && a.body.contains(says) && !a.body.dropLast().contains("\n"), "\(body.prefix(40)): \(a)")
        }
        #expect(HTTP.send("POST", url, token: nil, json: #"{"text": "x"}"#).status == 401)
        #expect(HTTP.send("POST", url, token: "wrong", json: #"{"text": "x"}"#).status == 401)
        #expect(HTTP.send("GET", url).status == 405)
        let huge = Data(#"{"text": ""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: 2 << 20) + Data(#""}"#.utf8)
        #expect(HTTP.send("POST", url, body: huge).status == 413)
    }

    @Test("a PUT with quick text adds the parsed task; sent twice it is one task; a refused line writes nothing")
    func quickPut() throws {
        let (store, server) = try serve()
        defer { server.stop() }
        let body = #"{"quick": "Water plants tomorrow #home !1", "at": \#(Self.monday)}"#
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/plants-1", json: body).status == 201)
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/plants-1", json: body).status == 200)
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/bad-1", json: #"{"quick": "Call !9"}"#).status == 400)
        #expect(HTTP.send("PUT", server.url + "/v1/tasks/bad-2", json: #"{"quick": "x", "title": "y"}"#).status == 400)
        let listed = try store.ok("list", "--all", "--json")
        let tasks = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        #expect(tasks.count == 1, "\(listed)")
        #expect(tasks.first?["title"] as? String == "Water plants" && tasks.first?["due"] as? String == "2026-12-08")
        #expect(tasks.first?["tags"] as? [String] == ["home"] && tasks.first?["priority"] as? Int == 1)
    }

    @Test("GET /v1/today answers the sections of tasklog today --json; needs the token")
    func todayMatchesTheCLI() throws {
        let (store, server) = try serve()
        defer { server.stop() }
        try store.ok("add", "Pay the rent", "--due", "2020-01-01")
        try store.ok("add", "Someday")
        let a = HTTP.send("GET", server.url + "/v1/today")
        #expect(a.status == 200, "\(a)")
        let cli = try CLI.run(["today", "--json"], store: store.path, environment: Self.environment)
        #expect(a.body == cli.stdout, "\(a.body) vs \(cli.stdout)")
        let view = try #require(a.json as? [String: [[String: Any]]])
        #expect(view["overdue"]?.compactMap { $0["title"] as? String } == ["Pay the rent"])
        #expect(view["next"]?.compactMap { $0["title"] as? String } == ["Someday"])
        #expect(HTTP.send("GET", server.url + "/v1/today?n=x").status == 400)
        #expect(HTTP.send("GET", server.url + "/v1/today", token: nil).status == 401)
        #expect(HTTP.send("POST", server.url + "/v1/today", json: "{}").status == 405)
    }

    @Test("sort=urgency ranks open tasks first and still lists done and waiting ones")
    func urgencySort() throws {
        let (store, server) = try serve()
        defer { server.stop() }
        try store.ok("add", "Plain")
        try store.ok("add", "Urgent", "--priority", "3", "--due", "2020-01-01")
        try store.ok("add", "Later", "--wait", "2999-01-01")
        let done = try store.ok("add", "Finished").trimmingCharacters(in: .whitespacesAndNewlines)
        try store.ok("done", done)
        let a = HTTP.send("GET", server.url + "/v1/tasks?status=all&sort=urgency")
        let titles = ((a.json as? [[String: Any]]) ?? []).compactMap { $0["title"] as? String }
        #expect(titles == ["Urgent", "Plain", "Later", "Finished"], "\(a)")
    }
}
