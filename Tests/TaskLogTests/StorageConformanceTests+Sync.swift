import Foundation
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) @testable import TaskSync
import Testing

/// The conformance cases that take several syncs: vanishing objects, forks, encrypted folders.
extension StorageConformanceTests {
    @Test("objects merged away between a reader's listing and its reads make it list again; it loses nothing", arguments: StorageUnderTest.all)
    func vanishingObjects(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let a = try store("a")
        var syncA = FolderSync(store: a, storage: backend.storage)
        syncA.mergeThreshold = 3
        for i in 0..<2 {
            _ = try a.add(NewTask(title: "task \(i)"))
            _ = try syncA.sync()
        }
        let stale = try backend.storage.list()
        _ = try a.add(NewTask(title: "task 2"))
        _ = try syncA.sync()  // three files: merged into one, the small ones removed
        #expect(try backend.storage.list().filter { $0.key.hasSuffix(".tlog") }.count == 1)
        let b = try store("b")
        let report = try FolderSync(store: b, storage: StaleOnce(backend.storage, listing: stale)).sync()
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        #expect(try titles(b) == ["task 0", "task 1", "task 2"])
    }

    @Test("a store copied to a second device and written on both forks; syncs through the storage settle it and keep every task", arguments: StorageUnderTest.all)
    func forkedCopy(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        var a = try store("a")
        _ = try a.add(NewTask(title: "before the copy"))
        a = try reopened(a, "a")
        try FileManager.default.copyItem(atPath: scratch.sub("a"), toPath: scratch.sub("copy"))
        let copy = try store("copy")
        _ = try a.add(NewTask(title: "on the original"))
        _ = try copy.add(NewTask(title: "on the copy"))
        _ = try FolderSync(store: a, storage: backend.storage).sync()
        let report = try FolderSync(store: copy, storage: backend.storage).sync()
        #expect(!report.forks.isEmpty)
        for s in [a, copy, a] { _ = try FolderSync(store: s, storage: backend.storage).sync() }
        for s in [a, copy] { #expect(try titles(s) == ["before the copy", "on the copy", "on the original"]) }
        #expect(a.replica != copy.replica)
    }

    @Test("an encrypted folder holds no plaintext: no object shows a task, and an outsider's plaintext segment is skipped", arguments: StorageUnderTest.all)
    func encryptedFolderHoldsNoPlaintext(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let cheap = KeyCost(opsLimit: 1, memLimit: 8 << 10)
        let secret = "meet the informant at the pier"
        let a = try store("a")
        _ = try a.add(NewTask(title: secret, notes: secret))
        let keyring = try FolderKeyring.encrypt(storage: backend.storage, store: a, passphrase: Array("horse".utf8), cost: cheap)
        _ = try FolderSync(store: a, storage: backend.storage, keyring: keyring).sync()
        let outsider = ReplicaID.random()
        let commit = Commit(firstSeq: 1, time: Timestamp(physical: 1, logical: 0), operations: [.add(try #require(TaskID("planted")))])
        let planted = SharedFolder.namespace(of: outsider) + "/" + SharedFolder.SegmentName(origin: outsider, first: 1, last: 1).fileName
        try backend.put(SegmentFile.encode(replica: outsider, commits: [commit]), planted)
        let objects = try backend.storage.list().filter { $0.kind == .file && $0.key != planted }
        #expect(objects.count >= 2)
        for o in objects {
            let bytes = try #require(try backend.storage.read(o.key, largest: 1 << 20))
            #expect(!String(decoding: bytes, as: UTF8.self).contains("informant"), "\(o.key)")
        }
        let b = try store("b")
        let joined = try FolderKeyring.unlock(storage: backend.storage, store: b, passphrase: Array("horse".utf8))
        let report = try FolderSync(store: b, storage: backend.storage, keyring: joined).sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(planted) && $0.reason.contains("plaintext") }, "\(report.skipped)")
        #expect(try titles(b) == [secret])
        #expect(throws: SyncError.encryption(.passphraseNeeded(folder: backend.storage.location))) {
            try FolderSync(store: try store("c"), storage: backend.storage).sync()
        }
    }

    /// `s` closed and opened again (so its folder can be copied whole).
    private func reopened(_ s: TaskStore, _ name: String) throws -> TaskStore {
        s.waitForMaintenance()
        return try store(name)
    }
}

/// A storage whose first listing is an older one: a reader that listed before another
/// device merged its files away, as an eventually consistent store may also list.
private final class StaleOnce: FolderStorage, @unchecked Sendable {
    let base: any FolderStorage
    private var stale: [StoredObject]?

    init(_ base: any FolderStorage, listing: [StoredObject]) {
        self.base = base
        stale = listing
    }

    var location: String { base.location }
    func list() throws(SyncError) -> [StoredObject] {
        defer { stale = nil }
        if let stale { return stale }
        return try base.list()
    }
    func changeMarker() throws(SyncError) -> String? { try base.changeMarker() }
    func markChanged() throws(SyncError) { try base.markChanged() }
    func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? { try base.read(key, largest: largest) }
    func readPrefix(_ key: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]? { try base.readPrefix(key, count: count) }
    func readSegment(_ key: String, operations: UInt64) throws(SegmentFile.Invalid) -> CheckedSegment? {
        try base.readSegment(key, operations: operations)
    }
    func prepare(namespace: String) throws(SyncError) { try base.prepare(namespace: namespace) }
    func publish(_ bytes: [UInt8], as key: String) throws(SyncError) { try base.publish(bytes, as: key) }
    func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool { try base.createIfAbsent(bytes, as: key) }
    func remove(_ keys: [String]) throws(SyncError) { try base.remove(keys) }
}
