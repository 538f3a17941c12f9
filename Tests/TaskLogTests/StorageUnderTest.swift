import Foundation
@_spi(Engine) import TaskSync
import TaskSim
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

    static let all: [StorageUnderTest] = [.local, .memory]

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
