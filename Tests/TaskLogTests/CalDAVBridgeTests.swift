import Foundation
import Testing

/// `tasklog sync caldav://…` against a real Radicale server (Debian's `radicale`) on loopback,
/// and against another `tasklog serve`.
@Suite("CalDAV bridge")
struct CalDAVBridgeTests {
    let dir = TemporaryDirectory()

    /// Radicale on a free loopback port with a fresh folder; stopped by pid at the end.
    final class Radicale {
        let process: Process
        let port = Int.random(in: 20_000..<40_000)
        /// With a password, Radicale asks for it (HTTP Basic, user `me`).
        init(dir: TemporaryDirectory, password: String? = nil) throws {
            let config = dir.sub("radicale.conf")
            var auth = "type = none"
            if let password {
                try "me:\(password)\n".write(toFile: dir.sub("htpasswd"), atomically: true, encoding: .utf8)
                auth = "type = htpasswd\nhtpasswd_filename = \(dir.sub("htpasswd"))\nhtpasswd_encryption = plain"
            }
            try "[server]\nhosts = 127.0.0.1:\(port)\n[auth]\n\(auth)\n[storage]\nfilesystem_folder = \(dir.sub("radicale"))\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let log = URL(fileURLWithPath: dir.sub("radicale"))
            process = try CLI.start(["--config", config], store: nil, output: log, executable: "/usr/bin/radicale")
            let make = ["-s", "-u", "me:" + (password ?? "pw"), "-o", "/dev/null", "-w", "%{http_code}", "-X", "MKCALENDAR", "http://127.0.0.1:\(port)/me/tasks/"]
            for _ in 0..<100 where process.isRunning {
                usleep(100_000)
                if try CLI.run(make, store: nil, executable: "/usr/bin/curl").stdout == "201" { return }
            }
            kill(process.processIdentifier, SIGKILL)
            throw CLIHarnessError("radicale did not start on port \(port): \(CLI.collect(process, output: log))")
        }
        var url: String { "caldav://me:pw@127.0.0.1:\(port)/me/tasks/" }
        /// SIGKILL: Radicale does not always stop on SIGTERM under the test runner.
        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    func titles(_ s: CLIStore) throws -> [String: String?] {
        Dictionary(uniqueKeysWithValues: try s.tasks().map { ($0["title"] as! String, $0["due"] as? String) })
    }

    @Test("two stores converge through Radicale: creates, concurrent field edits, deletes on either side; a repeat moves nothing")
    func storesConvergeThroughRadicale() throws {
        let server = try Radicale(dir: dir)
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let milk = try a.ok("add", "Buy milk", "--list", "home", "--tag", "shop").trimmingCharacters(in: .newlines)
        try a.ok("add", "Call Mum")
        #expect(try a.ok("sync", server.url).contains("sent 2"))
        #expect(try b.ok("sync", server.url).contains("received 2"))
        #expect(try titles(b) == ["Buy milk": nil, "Call Mum": nil])
        try b.ok("edit", milk, "--title", "Buy oat milk")
        try a.ok("edit", milk, "--due", "2027-01-01")
        for s in [b, a, b] { try s.ok("sync", server.url) }
        #expect(try titles(a) == ["Buy oat milk": "2027-01-01", "Call Mum": nil])
        #expect(try titles(b) == titles(a))
        #expect(try b.tasks().first { $0["id"] as? String == milk }?["list"] as? String == "home")
        let mum = try #require(try b.tasks().first { $0["title"] as? String == "Call Mum" }?["id"] as? String)
        try b.ok("rm", mum)
        try a.ok("rm", milk)
        for s in [a, b, a] { try s.ok("sync", server.url) }
        #expect(try a.tasks().isEmpty && b.tasks().isEmpty)
        for s in [a, b] {
            #expect(try s.ok("sync", server.url).contains("received 0 task(s), removed 0 here; sent 0, removed 0 there"))
        }
    }

    /// Polls `condition` for up to ten seconds.
    func eventually(_ condition: () throws -> Bool) throws -> Bool {
        for _ in 0..<100 {
            if try condition() { return true }
            usleep(100_000)
        }
        return false
    }

    @Test("sync --watch sends local changes as they land and brings the server's as it polls")
    func watchConvergesLive() throws {
        let server = try Radicale(dir: dir)
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        try a.ok("add", "First")
        let watch = try CLI.start(["sync", server.url, "--watch", "--interval", "0.3"], store: a.path, output: URL(fileURLWithPath: dir.sub("watch")))
        defer { watch.terminate() }
        try a.ok("add", "Made while watching")
        #expect(try eventually { try b.ok("sync", server.url) != "" && titles(b).count == 2 })
        let first = try #require(try b.tasks().first { $0["title"] as? String == "First" }?["id"] as? String)
        try b.ok("edit", first, "--title", "Edited on b")
        try b.ok("sync", server.url)
        #expect(try eventually { try titles(a)["Edited on b"] != nil })
        watch.terminate()
        #expect(CLI.collect(watch, output: URL(fileURLWithPath: dir.sub("watch"))).status == 0)
    }

    @Test("a wrong password exits 1 with one line and changes nothing; the right one from --password-file syncs")
    func passwordsAreChecked() throws {
        let server = try Radicale(dir: dir, password: "opensesame")
        let a = CLIStore(path: dir.sub("a"))
        try a.ok("add", "Secret errand")
        let url = "caldav://me@127.0.0.1:\(server.port)/me/tasks/"
        try "wrong\n".write(toFile: dir.sub("wrong"), atomically: true, encoding: .utf8)
        try "opensesame\n".write(toFile: dir.sub("right"), atomically: true, encoding: .utf8)
        let refused = try a.run("sync", url, "--password-file", dir.sub("wrong"))
        #expect(refused.status == 1 && refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains("401"), "\(refused)")
        #expect(try !FileManager.default.fileExists(atPath: a.path + "/caldav") && a.tasks().count == 1)
        #expect(try a.ok("sync", url, "--password-file", dir.sub("right")).contains("sent 1"))
    }

    @Test("a wrong URL scheme or an unreachable server exits 1 with one line")
    func badTargetsAreExplained() throws {
        let a = CLIStore(path: dir.sub("a"))
        try a.ok("add", "x")
        let r = try a.run("sync", "caldav://127.0.0.1:1/none/")
        #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(r)")
    }

    @Test("sync caldav:// with another tasklog serve's list collection: the second sync sends nothing, and tasks get and keep that list")
    func tasklogServerListCollectionSettles() throws {
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        try a.ok("add", "Write report", "--list", "work")
        let server = try ServerProcess(store: a.path, dir: dir)
        defer { server.stop() }
        let url = "caldav://me:sekrit@127.0.0.1:\(server.port)/dav/home/work/"
        #expect(try b.ok("sync", url).contains("received 1 task(s)"))
        try b.ok("add", "From b")
        try b.ok("add", "Filed elsewhere", "--list", "home")
        #expect(try b.ok("sync", url).contains("sent 2,"))
        for _ in 0..<2 {
            #expect(try b.ok("sync", url).contains("received 0 task(s), removed 0 here; sent 0, removed 0 there"))
        }
        for s in [a, b] {
            let lists = Dictionary(uniqueKeysWithValues: try s.tasks().map { ($0["title"] as! String, $0["list"] as? String) })
            #expect(lists == ["Write report": "work", "From b": "work", "Filed elsewhere": "work"], "\(s.path)")
        }
        // `_` is the collection of tasks with no list.
        try a.ok("add", "No list")
        let c = CLIStore(path: dir.sub("c"))
        let none = "caldav://me:sekrit@127.0.0.1:\(server.port)/dav/home/_/"
        #expect(try c.ok("sync", none).contains("received 1 task(s)"))
        #expect(try c.ok("sync", none).contains("received 0 task(s), removed 0 here; sent 0, removed 0 there"))
        #expect(try c.tasks().map { $0["list"] as? String } == [nil])
    }
}
