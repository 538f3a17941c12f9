import Foundation
import Testing

/// What one run of the `tasklog` binary did.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs the real `tasklog` executable built next to the test bundle.
enum CLI {
    static let binary: String = {
        if let p = ProcessInfo.processInfo.environment["TASKLOG_BINARY"] { return p }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("tasklog").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return ".build/debug/tasklog"
    }()

    /// A process running `tasklog args…` (or `executable args…`) with `--store store`, not
    /// yet waited for.
    static func start(
        _ args: [String], store: String?, stdin: String? = nil, output: URL, executable: String? = nil, environment: [String: String] = [:]
    ) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? binary)
        p.arguments = (store.map { ["--store", $0] } ?? []) + args
        var env = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        env.removeValue(forKey: "TASKLOG_STORE")
        p.environment = env
        _ = FileManager.default.createFile(atPath: output.path + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: output.path + ".err", contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output.path + ".out"))
        p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output.path + ".err"))
        if let stdin {
            let pipe = Pipe()
            p.standardInput = pipe
            try p.run()
            pipe.fileHandleForWriting.write(Data(stdin.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            p.standardInput = FileHandle.nullDevice
            try p.run()
        }
        return p
    }

    static func collect(_ p: Process, output: URL) -> CLIResult {
        p.waitUntilExit()
        let out = (try? String(contentsOfFile: output.path + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: output.path + ".err", encoding: .utf8)) ?? ""
        return CLIResult(status: p.terminationStatus, stdout: out, stderr: err)
    }

    /// Runs `tasklog args…` to completion.
    @discardableResult
    static func run(
        _ args: [String], store: String?, stdin: String? = nil, executable: String? = nil, environment: [String: String] = [:]
    ) throws -> CLIResult {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-cli-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(atPath: out.path + ".out")
            try? FileManager.default.removeItem(atPath: out.path + ".err")
        }
        return collect(try start(args, store: store, stdin: stdin, output: out, executable: executable, environment: environment), output: out)
    }
}

/// A temporary folder removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// A new folder `name` inside; its path.
    func folder(_ name: String) throws -> String {
        let p = sub(name)
        try FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }

    /// Every file under `path`: relative name to bytes.
    static func contents(_ path: String) -> [String: Data] {
        var out: [String: Data] = [:]
        let e = FileManager.default.enumerator(atPath: path)!
        while let f = e.nextObject() as? String {
            if let d = FileManager.default.contents(atPath: (path as NSString).appendingPathComponent(f)) { out[f] = d }
        }
        return out
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A store folder driven through the CLI.
struct CLIStore {
    let path: String

    @discardableResult
    func run(_ args: String...) throws -> CLIResult { try CLI.run(args, store: path) }

    @discardableResult
    func run(_ args: [String], stdin: String? = nil) throws -> CLIResult { try CLI.run(args, store: path, stdin: stdin) }

    /// Runs a command that must succeed, returning its stdout.
    @discardableResult
    func ok(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try CLI.run(args, store: path)
        #expect(r.status == 0, "tasklog \(args.joined(separator: " ")): \(r)", sourceLocation: sourceLocation)
        return r.stdout
    }

    /// `tasklog args…` on a pseudo-terminal (Python's pty module), its output with plain newlines.
    func onTerminal(_ args: [String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        // The test runner may set NO_COLOR itself: the child gets it only when a test asks.
        let unset = environment["NO_COLOR"] == nil ? ["/usr/bin/env", "-u", "NO_COLOR"] : []
        let r = try CalDAVServerTests.run(
            "/usr/bin/python3", ["-c", "import pty, sys; pty.spawn(sys.argv[1:])"] + unset + [CLI.binary, "--store", path] + args,
            environment: environment)
        #expect(r.status == 0, "\(args): \(r)", sourceLocation: sourceLocation)
        return r.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// `list --all --json` parsed.
    func tasks(_ extra: String...) throws -> [[String: Any]] {
        let r = try CLI.run(["list", "--all", "--json"] + extra, store: path)
        #expect(r.status == 0, "\(r)")
        return (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    /// The files under the store, relative paths with sizes.
    func files() -> [String: Int] {
        var out: [String: Int] = [:]
        let e = FileManager.default.enumerator(atPath: path)!
        while let f = e.nextObject() as? String {
            let full = (path as NSString).appendingPathComponent(f)
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDir), !isDir.boolValue {
                out[f] = (try? FileManager.default.attributesOfItem(atPath: full)[.size] as? Int) ?? 0
            }
        }
        return out
    }

    func logFiles(sealedOnly: Bool = false) -> [String] {
        files().keys.filter { $0.hasPrefix("logs/") && $0.hasSuffix(".tlog") && (!sealedOnly || !$0.hasSuffix("tail.tlog")) }.sorted()
    }

    func full(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }
}
