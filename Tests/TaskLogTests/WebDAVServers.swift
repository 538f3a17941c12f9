import Foundation
import Testing
@_spi(Engine) import TaskSyncHTTP
@_spi(Engine) import TaskSyncRemote

/// A real WebDAV server on a free loopback port, for one suite: `rclone serve webdav`
/// (from `.build/test-tools/storage`, see scripts/install-deps.sh) or Apache with mod_dav.
/// User `me`, password `pw`. Stopped by pid; a server that cannot start fails the suite.
final class WebDAVServer: @unchecked Sendable {
    enum Kind: Sendable { case rclone, apache }

    @TaskLocal static var current: WebDAVServer?

    let kind: Kind
    let dir = TemporaryDirectory()
    let port: Int
    /// The folder the server serves, on disk.
    let data: String
    /// The URL path the server serves `data` at.
    let prefix: String
    let process: Process

    static let user = "me"
    static let password = "pw"
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/test-tools/storage/venv/bin").path

    init(_ kind: Kind) throws {
        self.kind = kind
        port = try Self.freePort()
        data = try dir.folder("data")
        let output = URL(fileURLWithPath: dir.sub("server"))
        switch kind {
        case .rclone:
            prefix = ""
            let args = ["serve", "webdav", data, "--addr", "127.0.0.1:\(port)", "--user", Self.user, "--pass", Self.password]
            process = try Self.start(Self.tools + "/rclone", args, output: output)
        case .apache:
            prefix = "/dav"
            let config = try Self.apacheConfig(in: dir, data: data, port: port)
            process = try Self.start("/usr/sbin/apache2", ["-f", config, "-DFOREGROUND"], output: output)
        }
        for _ in 0..<200 where process.isRunning {
            if (try? raw("PROPFIND", "", headers: ["Depth": "0"]).status) == 207 { return }
            usleep(50_000)
        }
        stop()
        let log = (try? String(contentsOfFile: dir.sub("error.log"), encoding: .utf8)) ?? ""
        throw CLIHarnessError("\(kind) WebDAV server did not start on port \(port): \(CLI.collect(process, output: output)) \(log)")
    }

    /// SIGTERM, then SIGKILL if it is still running after ten seconds.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        for _ in 0..<200 where process.isRunning { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Runs `executable` with no signal blocked: the test runner's threads block SIGTERM,
    /// and a child inherits that mask, which would leave Apache deaf to it.
    static func start(_ executable: String, _ args: [String], output: URL) throws -> Process {
        let unblock = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
        return try CLI.start(["-c", unblock, executable] + args, store: nil, output: output, executable: "/usr/bin/python3")
    }

    deinit { stop() }

    /// `webdav://me@127.0.0.1:PORT/<prefix>/<folder>/`.
    func location(_ folder: String) throws -> WebDAVLocation {
        try WebDAVLocation.parse("webdav://\(Self.user)@127.0.0.1:\(port)\(prefix)/\(folder)/")
    }

    /// A storage on `folder` with `password`.
    func storage(_ folder: String, password: String = WebDAVServer.password) throws -> WebDAVStorage {
        WebDAVStorage(try location(folder), credentials: WebDAVCredentials(user: Self.user, password: password))
    }

    /// A new, empty folder on the server (made with MKCOL); its name.
    func newFolder() throws -> String {
        let name = "f-" + UUID().uuidString.prefix(8)
        let status = try raw("MKCOL", name + "/").status
        guard status == 201 else { throw CLIHarnessError("MKCOL \(name) answered \(status)") }
        return name
    }

    /// A request with the right credentials to `path` under the served root.
    @discardableResult
    func raw(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws -> HTTPReply {
        let basic = "Basic " + Data("\(Self.user):\(Self.password)".utf8).base64EncodedString()
        let url = "http://127.0.0.1:\(port)\(prefix)/\(path)"
        return try HTTPClient().send(method, url, headers: headers.merging(["Authorization": basic]) { a, _ in a }, body: body, limit: 1 << 24)
    }

    /// A loopback port nothing listens on now.
    static func freePort() throws -> Int { try S3TestServer.freePorts(1)[0] }

    /// Apache's configuration: only the modules needed, its own files in `dir`, DAV with
    /// Basic authentication at `/dav`, and `/moved/` redirected elsewhere. As root, the
    /// workers run as `www-data`, which then owns the served folder.
    static func apacheConfig(in dir: TemporaryDirectory, data: String, port: Int) throws -> String {
        let htpasswd = try CLI.run(["-nbB", user, password], store: nil, executable: "/usr/bin/htpasswd")
        guard htpasswd.status == 0 else { throw CLIHarnessError("htpasswd failed: \(htpasswd)") }
        try htpasswd.stdout.write(toFile: dir.sub("htpasswd"), atomically: true, encoding: .utf8)
        let locks = try dir.folder("locks")
        var owner = ""
        if getuid() == 0 {
            owner = "User www-data\nGroup www-data\n"
            for path in [data, locks] { try FileManager.default.setAttributes([.ownerAccountName: "www-data"], ofItemAtPath: path) }
        }
        let modules = ["mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "dav", "dav_fs", "alias", "mime", "dir"]
        let load = modules.map { "LoadModule \($0)_module /usr/lib/apache2/modules/mod_\($0).so" }.joined(separator: "\n")
        let config = """
            ServerRoot \(dir.path)
            ServerName 127.0.0.1
            Listen 127.0.0.1:\(port)
            PidFile \(dir.sub("httpd.pid"))
            ErrorLog \(dir.sub("error.log"))
            \(load)
            \(owner)TypesConfig /dev/null
            DAVLockDB \(locks)/lockdb
            Redirect 302 /moved http://127.0.0.1:\(port)/elsewhere
            Alias /dav \(data)
            <Directory \(data)>
              DAV On
              AuthType Basic
              AuthName tasklog
              AuthUserFile \(dir.sub("htpasswd"))
              Require valid-user
            </Directory>

            """
        try config.write(toFile: dir.sub("httpd.conf"), atomically: true, encoding: .utf8)
        return dir.sub("httpd.conf")
    }
}

/// Starts one WebDAV server around a whole suite and stops it after.
struct WebDAVServerScope: SuiteTrait, TestScoping {
    let kind: WebDAVServer.Kind
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let server = try WebDAVServer(kind)
        defer { server.stop() }
        try await WebDAVServer.$current.withValue(server) { try await function() }
    }
}

extension Trait where Self == WebDAVServerScope {
    static func webDAVServer(_ kind: WebDAVServer.Kind) -> Self { WebDAVServerScope(kind: kind) }
}
