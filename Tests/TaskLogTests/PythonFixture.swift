import Foundation

/// A Python fixture server from Tests/Fixtures, on a free loopback port. It is started with
/// python3, found ready by the `listening on 127.0.0.1:PORT` line it prints, and killed by pid.
final class PythonFixture {
    let process: Process
    let port: Int
    /// The file the fixture writes a line to per request.
    let log: String

    /// Starts `script` (relative to Tests/Fixtures) with `arguments`; `what` names it in errors.
    init(_ script: String, _ arguments: [String], log: String, output: URL, what: String) throws {
        self.log = log
        process = try CLI.start([CalDAVServerTests.fixtures + "/" + script] + arguments, store: nil, output: output, executable: "/usr/bin/python3")
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
        throw CLIHarnessError("the \(what) did not start: \(CLI.collect(process, output: output))")
    }

    /// Each line of the request log.
    var requests: [String] { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init) }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
