import Synchronization
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// A storage that counts the requests made through it, by kind ("marker", "list", "prefix",
/// "segment", "read", "publish", "create", "remove", "mark"), and passes each to `base`.
final class CountingStorage: FolderStorage {
    let base: any FolderStorage
    private let counts = Mutex([String: Int]())

    init(_ base: any FolderStorage) { self.base = base }

    /// Requests of `kind` so far.
    subscript(kind: String) -> Int { counts.withLock { $0[kind, default: 0] } }
    /// Every request so far.
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// The requests `body` makes, by kind.
    func requests(_ body: () throws -> Void) rethrows -> [String: Int] {
        let before = counts.withLock { $0 }
        try body()
        var made: [String: Int] = [:]
        for (kind, n) in counts.withLock({ $0 }) where n != before[kind, default: 0] { made[kind] = n - before[kind, default: 0] }
        return made
    }

    private func count(_ kind: String) { counts.withLock { $0[kind, default: 0] += 1 } }

    var location: String { base.location }
    func list() throws(SyncError) -> [StoredObject] {
        count("list")
        return try base.list()
    }
    func changeMarker() throws(SyncError) -> String? {
        count("marker")
        return try base.changeMarker()
    }
    func markChanged() throws(SyncError) {
        count("mark")
        try base.markChanged()
    }
    func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        count("read")
        return try base.read(key, largest: largest)
    }
    func readPrefix(_ key: String, count n: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        count("prefix")
        return try base.readPrefix(key, count: n)
    }
    func readSegment(_ key: String, operations: UInt64) throws(SegmentFile.Invalid) -> CheckedSegment? {
        count("segment")
        return try base.readSegment(key, operations: operations)
    }
    func prepare(namespace: String) throws(SyncError) { try base.prepare(namespace: namespace) }
    func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        count("publish")
        try base.publish(bytes, as: key)
    }
    func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        count("create")
        return try base.createIfAbsent(bytes, as: key)
    }
    func remove(_ keys: [String]) throws(SyncError) {
        count("remove")
        try base.remove(keys)
    }
}
