import Foundation
import Testing
@_spi(Engine) import TaskSyncRemote

/// The S3 servers the tests run: SeaweedFS (a master, two volume servers, a filer and its S3
/// gateway) and `rclone serve s3`, from `.build/test-tools/storage/venv` (scripts/install-deps.sh),
/// on free loopback ports, with real Signature Version 4 keys. Stopped by pid.
final class S3TestServer: @unchecked Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case seaweedfs, rclone
        var testDescription: String { rawValue }
    }

    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/test-tools/storage/venv/bin").path
    static let accessKey = "tasklog-test"
    static let bucket = "tasklog"

    let kind: Kind
    let secret = "secret-\(UInt64.random(in: 0...UInt64.max))"
    let dir = TemporaryDirectory()
    private(set) var processes: [Process] = []
    var port = 0

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts the server and makes the bucket; throws (failing the tests) when it does not come
    /// up in three tries. Each try takes fresh ports: a port found free may be taken by another
    /// suite's server before this one binds it.
    init(_ kind: Kind) throws {
        self.kind = kind
        var failure: any Error = CLIHarnessError("\(kind) was not started")
        for attempt in 1...3 {
            self.attempt = attempt
            do {
                switch kind {
                case .seaweedfs: try startSeaweedFS()
                case .rclone: try startRclone()
                }
                try waitUntilReady()
                return
            } catch {
                stop()
                failure = error
            }
        }
        throw failure
    }

    /// Which try of starting this is (its files go to folders of their own).
    private var attempt = 1

    /// Credentials for this server, with `secret` in place of the right one when given.
    func credentials(secret: String? = nil) -> S3Credentials {
        S3Credentials(accessKeyID: Self.accessKey, secretAccessKey: secret ?? self.secret, endpoint: endpoint)
    }

    /// A storage under a fresh prefix of the bucket.
    func storage(prefix: String = "f-\(UInt32.random(in: 0...UInt32.max))", retry: RetryPolicy = RetryPolicy(), secret: String? = nil, bucket: String = S3TestServer.bucket) -> S3Storage {
        S3Storage(S3Location(bucket: bucket, prefix: prefix + "/"), credentials: credentials(secret: secret), retry: retry)
    }

    private func startSeaweedFS() throws {
        let p = try Self.freePorts(10)
        port = p[6]
        let config = """
            {"identities":[{"name":"tasklog","credentials":[{"accessKey":"\(Self.accessKey)","secretKey":"\(secret)"}],
            "actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        try config.write(toFile: dir.sub("s3.json"), atomically: true, encoding: .utf8)
        let (one, two, logs) = (try dir.folder("volume1-\(attempt)"), try dir.folder("volume2-\(attempt)"), try dir.folder("logs-\(attempt)"))
        processes.append(
            try launch(
                "weed",
                [
                    "-logdir=\(logs)", "server", "-dir=\(one)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                    "-master.port=\(p[0])", "-master.port.grpc=\(p[1])", "-volume.port=\(p[2])", "-volume.port.grpc=\(p[3])",
                    "-filer.port=\(p[4])", "-filer.port.grpc=\(p[5])", "-s3", "-s3.port=\(p[6])", "-s3.port.grpc=\(p[7])",
                    "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=\(dir.sub("s3.json"))", "-master.volumeSizeLimitMB=64",
                ], output: "weed-server"))
        processes.append(
            try launch(
                "weed",
                [
                    "-logdir=\(logs)", "volume", "-dir=\(two)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-port=\(p[8])",
                    "-port.grpc=\(p[9])", "-mserver=127.0.0.1:\(p[0]).\(p[1])",
                ], output: "weed-volume"))
    }

    private func startRclone() throws {
        port = try Self.freePorts(1)[0]
        let root = try dir.folder("rclone-\(attempt)")
        try FileManager.default.createDirectory(atPath: root + "/" + Self.bucket, withIntermediateDirectories: true)
        processes.append(
            try launch(
                "rclone",
                ["serve", "s3", "--config", dir.sub("rclone.conf"), "--addr", "127.0.0.1:\(port)", "--auth-key", "\(Self.accessKey),\(secret)", root],
                output: "rclone"))
    }

    private func launch(_ tool: String, _ args: [String], output: String) throws -> Process {
        let path = Self.tools + "/" + tool
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CLIHarnessError("\(path) is missing; run scripts/install-deps.sh")
        }
        return try CLI.start(args, store: nil, output: URL(fileURLWithPath: dir.sub(output)), executable: path)
    }

    /// Makes the bucket, then polls until an object can be put and listed (SeaweedFS needs
    /// its volumes assigned first): at most 60 s.
    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(60)
        var last = ""
        while Date() < deadline {
            guard processes.allSatisfy(\.isRunning) else { break }
            if kind == .seaweedfs { _ = try? curl(["-X", "PUT", "\(endpoint)/\(Self.bucket)"]) }
            if let put = try? curl(["-X", "PUT", "--data-binary", "ready", "\(endpoint)/\(Self.bucket)/ready-probe"]), put.hasSuffix("200") {
                return
            } else {
                last = (try? curl(["\(endpoint)/\(Self.bucket)?list-type=2"])) ?? ""
            }
            usleep(200_000)
        }
        let logs = processes.indices.map { i in (try? String(contentsOfFile: dir.sub(i == 0 ? "\(kind == .rclone ? "rclone" : "weed-server").err" : "weed-volume.err"), encoding: .utf8)) ?? "" }
        throw CLIHarnessError("\(kind) did not start on port \(port): \(last)\n\(logs.map { String($0.suffix(2000)) }.joined(separator: "\n"))")
    }

    /// Runs curl with this server's keys; its output and then the status code.
    func curl(_ args: [String], secret: String? = nil) throws -> String {
        let signing = ["-s", "--max-time", "5", "--aws-sigv4", "aws:amz:us-east-1:s3", "-u", "\(Self.accessKey):\(secret ?? self.secret)",
                       "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-w", "%{http_code}"]
        return try CLI.run(signing + args, store: nil, executable: "/usr/bin/curl").stdout
    }

    /// Loopback ports free now, each different.
    static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        return try (0..<count).map { _ in
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard ok else { throw CLIHarnessError("no free loopback port") }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }

    /// SIGKILL by pid: SeaweedFS takes many seconds to stop on SIGTERM.
    func stop() {
        for p in processes where p.isRunning { kill(p.processIdentifier, SIGKILL) }
        for p in processes { p.waitUntilExit() }
        processes = []
    }

    deinit { stop() }
}

/// Both servers, started once for a suite that has the ``S3ServersTrait`` trait and stopped
/// when it ends.
struct S3ServersTrait: SuiteTrait, TestScoping {
    @TaskLocal static var servers: [S3TestServer.Kind: S3TestServer] = [:]

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        var started: [S3TestServer.Kind: S3TestServer] = [:]
        defer { started.values.forEach { $0.stop() } }
        for kind in S3TestServer.Kind.allCases { started[kind] = try S3TestServer(kind) }
        try await Self.$servers.withValue(started) { try await function() }
    }

    /// The running server of `kind`; fails the test when the suite has none.
    static func server(_ kind: S3TestServer.Kind) throws -> S3TestServer {
        try #require(servers[kind], "the \(kind) server is not running; give the suite the .s3Servers trait")
    }
}

extension Trait where Self == S3ServersTrait {
    /// SeaweedFS and `rclone serve s3`, shared by the suite's tests.
    static var s3Servers: Self { S3ServersTrait() }
}
