import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The CalDAV server in `tasklog serve`, driven by real clients: the Python `caldav` library,
/// and vdirsyncer with todoman (all from Debian, scripts/install-deps.sh).
@Suite("CalDAV server")
struct CalDAVServerTests {
    let dir = TemporaryDirectory()
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    /// Runs a program to its end (in `directory` when given); its output as a CLIResult.
    static func run(_ program: String, _ args: [String], environment: [String: String] = [:], directory: String? = nil) throws -> CLIResult {
        let p = Process()
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return CLIResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// One step of the `caldav` library client (Tests/Fixtures/caldav/client.py), as JSON.
    func client(_ server: ServerProcess, _ step: String...) throws -> Any {
        let r = try Self.run("/usr/bin/python3", [Self.fixtures + "/caldav/client.py", server.url + "/", "sekrit"] + step)
        guard r.status == 0 else { throw CLIHarnessError("client.py \(step): \(r)") }
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8), options: [.fragmentsAllowed])
    }

    func titles(_ store: CLIStore) throws -> [String: Bool] {
        Dictionary(uniqueKeysWithValues: try store.tasks().map { ($0["title"] as! String, $0["done"] as! Bool) })
    }

    @Test("the caldav library discovers the lists from the root URL; its writes are seen by tasklog list at once")
    func caldavLibraryEditsAreSeenAtOnce() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Buy milk", "--list", "home", "--due", "2026-12-24")
        try store.ok("add", "Inbox thing")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let lists = try #require(try client(server, "lists") as? [[String: String]])
        #expect(lists.map { $0["name"]! } == ["Tasks", "home"])
        let todos = try #require(try client(server, "todos", "home") as? [[String: Any]])
        #expect(todos.count == 1 && todos[0]["summary"] as? String == "Buy milk" && todos[0]["due"] as? String == "20261224")
        let made = try #require(try client(server, "create", "home", "Call Mum", "2027-01-05") as? [String: String])
        let uid = try #require(made["uid"])
        let created = try #require(try store.tasks().first { $0["title"] as? String == "Call Mum" })
        #expect(created["list"] as? String == "home" && created["due"] as? String == "2027-01-05")
        _ = try client(server, "complete", "home", uid)
        #expect(try titles(store)["Call Mum"] == true)
        _ = try client(server, "edit", "home", uid, "Call Mum and Dad")
        #expect(try titles(store) == ["Buy milk": false, "Inbox thing": false, "Call Mum and Dad": true])
        _ = try client(server, "delete", "home", uid)
        #expect(try titles(store) == ["Buy milk": false, "Inbox thing": false])
    }

    @Test("CLI edits reach the client through sync-collection; an empty sync moves nothing")
    func cliEditsArriveBySyncCollection() throws {
        let store = CLIStore(path: dir.sub("store"))
        let milk = try store.ok("add", "Buy milk", "--list", "home").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let first = try #require(try client(server, "sync", "home") as? [String: Any])
        #expect(first["changed"] as? [String] == ["Buy milk"])
        let token = try #require(first["token"] as? String)
        let empty = try #require(try client(server, "sync", "home", token) as? [String: Any])
        #expect(empty["changed"] as? [String] == [] && empty["gone"] as? [String] == [] && empty["token"] as? String == token)
        try store.ok("edit", milk, "--title", "Buy oat milk")
        try store.ok("add", "Bake bread", "--list", "home")
        let second = try #require(try client(server, "sync", "home", token) as? [String: Any])
        #expect(second["changed"] as? [String] == ["Bake bread", "Buy oat milk"])
        try store.ok("rm", milk)
        let third = try #require(try client(server, "sync", "home", second["token"] as! String) as? [String: Any])
        #expect((third["gone"] as? [String])?.first?.hasSuffix("/dav/home/home/\(milk).ics") == true, "\(third)")
    }

    @Test("ETags change exactly when the task does, whichever process wrote it")
    func etagsFollowTheirTask() throws {
        let store = CLIStore(path: dir.sub("store"))
        let plants = try store.ok("add", "Water plants", "--list", "home").trimmingCharacters(in: .newlines)
        let bread = try store.ok("add", "Bake bread", "--list", "home").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        func etag(_ id: String) throws -> String {
            let r = try Self.run("/usr/bin/curl", ["-s", "-u", "u:sekrit", "-o", "/dev/null", "-w", "%{http_code} %header{etag}", server.url + "/dav/home/home/\(id).ics"])
            #expect(r.stdout.hasPrefix("200 \""), "\(r)")
            return r.stdout
        }
        let (plantsBefore, breadBefore) = (try etag(plants), try etag(bread))
        #expect(try etag(plants) == plantsBefore)
        try store.ok("edit", plants, "--title", "Water the plants")
        #expect(try etag(plants) != plantsBefore && etag(bread) == breadBefore)
        let todos = try #require(try client(server, "todos", "home") as? [[String: Any]])
        #expect(Set(todos.compactMap { $0["summary"] as? String }) == ["Water the plants", "Bake bread"])
    }

    @Test("a PUT with a stale ETag is refused with 412 and writes nothing")
    func staleETagIsRefused() throws {
        let store = CLIStore(path: dir.sub("store"))
        let id = try store.ok("add", "Draft", "--list", "work").trimmingCharacters(in: .newlines)
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let answer = try #require(try client(server, "stale", "work", id) as? [String: Int])
        #expect(answer == ["first": 204, "second": 412])
        #expect(try titles(store) == ["First Draft": false])
    }

    @Test("discovery answers: well-known redirect, Basic auth with the token as password, 401 otherwise")
    func discoveryAndAuthentication() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "x")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let curl = "/usr/bin/curl"
        let known = try Self.run(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", server.url + "/.well-known/caldav", "-u", "a:sekrit"])
        #expect(known.stdout.hasPrefix("301 ") && known.stdout.hasSuffix(":\(server.port)/dav/"), "\(known)")
        for (user, expected) in [("a:sekrit", "207"), ("a:wrong", "401"), ("sekrit:", "401")] {
            let r = try Self.run(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PROPFIND", "-H", "Depth: 0", server.url + "/dav/principal/", "-u", user])
            #expect(r.stdout == expected, "\(user)")
        }
        let challenge = try Self.run(curl, ["-s", "-D", "-", "-o", "/dev/null", "-X", "PROPFIND", server.url + "/"])
        #expect(challenge.stdout.contains("WWW-Authenticate: Basic realm=\"TaskLog\""), "\(challenge)")
    }

    @Test("vdirsyncer and todoman sync both ways for several rounds with no duplicates")
    func vdirsyncerAndTodomanRoundTrip() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "Buy milk", "--list", "home", "--due", "2026-12-24")
        try store.ok("add", "Inbox thing")
        let server = try ServerProcess(store: store.path, dir: dir)
        defer { server.stop() }
        let local = dir.sub("local")
        for collection in ["_", "home"] {  // made here, so that discovery asks nothing
            try FileManager.default.createDirectory(atPath: local + "/" + collection, withIntermediateDirectories: true)
        }
        let config = dir.sub("vdirsyncer.conf")
        try """
            [general]
            status_path = "\(dir.sub("status"))/"
            [pair tasks]
            a = "local"
            b = "remote"
            collections = ["from b"]
            [storage local]
            type = "filesystem"
            path = "\(local)/"
            fileext = ".ics"
            [storage remote]
            type = "caldav"
            url = "\(server.url)/"
            username = "me"
            password = "sekrit"
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let todomanConfig = dir.sub("todoman.py")
        try "path = \"\(local)/*\"\ndate_format = \"%Y-%m-%d\"\ntime_format = \"%H:%M\"\ndefault_list = \"home\"\n"
            .write(toFile: todomanConfig, atomically: true, encoding: .utf8)
        func vdirsyncer(_ args: String...) throws {
            let r = try Self.run("/usr/bin/vdirsyncer", args, environment: ["VDIRSYNCER_CONFIG": config])
            #expect(r.status == 0, "vdirsyncer \(args): \(r)")
        }
        func todoman(_ args: String...) throws -> CLIResult {
            try Self.run("/usr/bin/todoman", ["--config", todomanConfig] + args)
        }
        func todomanSummaries() throws -> [String] {
            let r = try todoman("--porcelain", "list", "--status", "ANY")
            let items = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
            return items.map { $0["summary"] as! String }.sorted()
        }
        try vdirsyncer("discover")
        try vdirsyncer("sync")
        #expect(try todomanSummaries() == ["Buy milk", "Inbox thing"])
        #expect(try todoman("new", "-l", "home", "From todoman").status == 0)
        try vdirsyncer("sync")
        #expect(try titles(store) == ["Buy milk": false, "Inbox thing": false, "From todoman": false])
        try store.ok("add", "From the CLI", "--list", "home")
        let milk = try #require(try store.tasks().first { $0["title"] as? String == "Buy milk" }?["id"] as? String)
        try store.ok("done", milk)
        try vdirsyncer("sync")
        #expect(try todomanSummaries() == ["Buy milk", "From the CLI", "From todoman", "Inbox thing"])
        let ids = try todoman("--porcelain", "list", "--status", "ANY")
        let items = try JSONSerialization.jsonObject(with: Data(ids.stdout.utf8)) as? [[String: Any]] ?? []
        let inbox = try #require(items.first { $0["summary"] as? String == "Inbox thing" }?["id"] as? Int)
        #expect(items.first { $0["summary"] as? String == "Buy milk" }?["completed"] as? Bool == true)
        #expect(try todoman("done", String(inbox)).status == 0)
        for _ in 0..<3 { try vdirsyncer("sync") }
        #expect(try titles(store) == ["Buy milk": true, "Inbox thing": true, "From todoman": false, "From the CLI": false])
        #expect(try todomanSummaries() == ["Buy milk", "From the CLI", "From todoman", "Inbox thing"])
        #expect(try store.tasks().count == 4)
    }
}
