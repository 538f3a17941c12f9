import Foundation
import Testing

/// `tasklog sync http://…` and `sync caldav://…` against servers that attack their client:
/// answers that never end, a 2 GiB `Content-Length`, a trickle.
@Suite("hostile servers")
struct HostileServerTests {
    let dir = TemporaryDirectory()

    /// `Tests/Fixtures/hostile/server.py MODE` on a free loopback port; stopped by pid.
    final class HostileServer {
        let process: Process
        let port: Int
        let log: String

        init(_ mode: String, dir: TemporaryDirectory) throws {
            log = dir.sub("\(mode).requests")
            let output = URL(fileURLWithPath: dir.sub(mode))
            let script = CalDAVServerTests.fixtures + "/hostile/server.py"
            process = try CLI.start([script, mode, log], store: nil, output: output, executable: "/usr/bin/python3")
            for _ in 0..<500 where process.isRunning {
                if let text = try? String(contentsOfFile: output.path + ".out", encoding: .utf8), let colon = text.lastIndex(of: ":"),
                    let port = Int(text[text.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines))
                {
                    self.port = port
                    return
                }
                usleep(10_000)
            }
            kill(process.processIdentifier, SIGKILL)
            throw CLIHarnessError("the hostile server did not start: \(CLI.collect(process, output: output))")
        }

        /// Each request received, as `METHOD path`.
        var requests: [String] { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

        deinit {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
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
}
