import Foundation
import Testing

/// `tasklog sync webdav://…` through the real binary, against Apache with mod_dav started
/// once for the suite.
@Suite("tasklog sync webdav:// from the command line (Apache)", .webDAVServer(.apache))
struct RemoteSyncCLIApacheTests {
    let dir = TemporaryDirectory()

    static func server() throws -> WebDAVServer {
        try #require(WebDAVServer.current, "the WebDAV server is not running; give the suite the .webDAVServer trait")
    }

    @Test("three stores converge through one WebDAV folder over seeded random rounds")
    func threeStoresConverge() throws {
        let server = try Self.server()
        let target = RemoteTarget.webDAV(server, folder: try server.newFolder(), home: dir.path)
        let stores = try RemoteConvergence.run(target, stores: 3, rounds: 40, seed: 73, in: dir)
        try RemoteConvergence.expectSame(stores)
    }

    enum Refusal: String, CaseIterable, Sendable {
        case wrongPassword, missingFolder, serverDown
    }

    @Test("a wrong password, a missing folder and a server that is down each exit 1 with one line and leave the store as it was",
          arguments: Refusal.allCases)
    func refusedWebDAVSyncs(refusal: Refusal) throws {
        let server = try Self.server()
        let folder = try server.newFolder()
        let store = CLIStore(path: dir.sub("refused-\(refusal)"))
        try store.ok("add", "kept whatever happens")
        try RemoteTarget.webDAV(server, folder: folder, home: dir.path).syncOK(store)
        try store.ok("add", "not yet sent")
        let (target, hint) =
            switch refusal {
            case .wrongPassword: (RemoteTarget.webDAV(server, folder: folder, home: dir.path, password: "wrong"), "refused the user name or password (401); check them")
            case .missingFolder: (RemoteTarget.webDAV(server, folder: "no-such-folder", home: dir.path), "create")
            case .serverDown: (RemoteTarget.webDAV(server, folder: folder, home: dir.path, port: try WebDAVServer.freePort()), "check")
            }
        try RefusedRemoteSync.expectRefused(target, store: store, absent: dir.sub("never-\(refusal)"), hint: hint)
    }
}

/// The same convergence against `rclone serve webdav`.
@Suite("tasklog sync webdav:// from the command line (rclone)", .webDAVServer(.rclone))
struct RemoteSyncCLIRcloneWebDAVTests {
    let dir = TemporaryDirectory()

    @Test("three stores converge through one rclone WebDAV folder over seeded random rounds")
    func threeStoresConverge() throws {
        let server = try RemoteSyncCLIApacheTests.server()
        let target = RemoteTarget.webDAV(server, folder: try server.newFolder(), home: dir.path)
        let stores = try RemoteConvergence.run(target, stores: 3, rounds: 40, seed: 173, in: dir)
        try RemoteConvergence.expectSame(stores)
    }

    @Test("sync --watch waits out a WebDAV server that goes down after answering, and SIGTERM still ends it with 0")
    func watchWaitsOutAnOutage() throws {
        let server = try WebDAVServer(.rclone)  // its own: this test stops it
        defer { server.stop() }
        let target = RemoteTarget.webDAV(server, folder: try server.newFolder(), home: dir.path)
        let store = CLIStore(path: dir.sub("watcher"))
        try store.ok("add", "before the outage")
        let output = URL(fileURLWithPath: dir.sub("watch-output"))
        let watcher = try CLI.start(["sync", target.url, "--watch", "--interval", "0.3"], store: store.path, output: output, environment: target.environment)
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        let text = { (suffix: String) in (try? String(contentsOfFile: output.path + suffix, encoding: .utf8)) ?? "" }
        let started = Date()
        while !text(".out").contains("sent") && Date().timeIntervalSince(started) < 10 { usleep(100_000) }
        #expect(text(".out").contains("sent"), "the first sync did not publish: \(text(".err"))")
        server.stop()
        let stopped = Date()
        while !text(".err").contains("trying again") && Date().timeIntervalSince(stopped) < 60 && watcher.isRunning { usleep(200_000) }
        #expect(watcher.isRunning, "the watcher gave up: \(text(".err"))")
        #expect(text(".err").contains("cannot reach") && text(".err").contains("trying again"), "\(text(".err"))")
        kill(watcher.processIdentifier, SIGTERM)
        let r = CLI.collect(watcher, output: output)
        #expect(r.status == 0, "\(r)")
    }
}
