import Foundation
@_spi(Engine) import TaskSync
import TaskSim
@_spi(Engine) import TaskSyncRemote
import Testing

/// A storage the conformance cases (StorageConformanceTests) run against, with an attacker's
/// hands on it: anyone who can write into a shared folder can put any bytes at any key and
/// remove anything. To add a backend, add a factory here and list it in ``all``: it makes a
/// fresh, empty folder in that storage (starting what it needs, stopped by ``Backend/stop``).
struct StorageUnderTest: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable (_ scratch: TemporaryDirectory) throws -> Backend

    var testDescription: String { name }

    /// One fresh folder in a storage, and raw access to it.
    struct Backend {
        let storage: any FolderStorage
        /// Puts `bytes` at `key` as an attacker would: no temporary, no check, no marker change.
        let put: (_ bytes: [UInt8], _ key: String) throws -> Void
        /// Removes `key` as an attacker (or another device's sync client) would.
        let drop: (_ key: String) throws -> Void
        /// Stops whatever the factory started.
        var stop: () -> Void = {}
    }

    /// Every backend. The remote ones need the suite's servers: the `.s3Servers` and
    /// `.webDAVServer(.apache)` traits start them once around the suite.
    static let all: [StorageUnderTest] = [.local, .memory, .s3(.seaweedfs), .s3(.rclone), .webDAV]

    /// A fresh prefix of the bucket on one of the suite's S3 servers.
    static func s3(_ kind: S3TestServer.Kind) -> StorageUnderTest {
        StorageUnderTest(name: "s3-\(kind.rawValue)") { _ in
            remote(try S3ServersTrait.server(kind).storage())
        }
    }

    /// A fresh folder on the suite's Apache mod_dav server.
    static let webDAV = StorageUnderTest(name: "webdav-apache") { _ in
        let server = try #require(WebDAVServer.current, "the suite has no WebDAV server; give it the .webDAVServer trait")
        return remote(try server.storage(try server.newFolder()))
    }

    /// A remote storage, written into as an attacker would: a plain PUT (no temporary
    /// name, no marker change) and a plain DELETE.
    private static func remote(_ storage: any FolderStorage) -> Backend {
        Backend(storage: storage, put: { bytes, key in try storage.publish(bytes, as: key) }, drop: { key in try storage.remove([key]) })
    }

    /// A folder on this machine.
    static let local = StorageUnderTest(name: "local") { scratch in
        let folder = try scratch.folder("shared")
        let path = { (key: String) in (folder as NSString).appendingPathComponent(key) }
        return Backend(
            storage: LocalFolderStorage(folder: folder),
            put: { bytes, key in
                try FileManager.default.createDirectory(atPath: (path(key) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(bytes).write(to: URL(fileURLWithPath: path(key)))
            },
            drop: { key in try FileManager.default.removeItem(atPath: path(key)) })
    }

    /// An in-memory bucket (TaskSim), without faults.
    static let memory = StorageUnderTest(name: "memory") { _ in
        let bucket = MemoryFolderStorage(seed: 1)
        return Backend(storage: bucket, put: { bucket.put($0, at: $1) }, drop: { bucket.drop($0) })
    }
}
