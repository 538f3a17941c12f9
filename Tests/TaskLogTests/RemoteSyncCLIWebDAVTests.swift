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
}
