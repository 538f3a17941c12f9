@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// Where a shared folder's files live: a local folder, an S3 bucket prefix or a WebDAV
/// folder. The folder protocol (Spec/sync-folder.md) runs unchanged over any of them.
///
/// Keys are relative to the folder: a top-level name (`tasklog-epoch-1`) or a namespace
/// and a file name (`tasklog-<writer>/<file>`). Every object has one writer and never
/// changes once published, so no storage needs conditional writes, except that
/// ``createIfAbsent(_:as:)`` must not replace an object that exists.
///
/// Everything a storage gives is hostile: the folder protocol checks every object against
/// its name and framing, whichever storage it came from.
@_spi(Engine) public protocol FolderStorage: Sendable {
    /// Where the folder is, for messages: a path, or a URL without credentials.
    var location: String { get }

    /// Every object in the folder: the top level and one level inside each namespace.
    /// - Throws: ``SyncError/folderMissing(_:)`` when the folder, bucket or prefix is not
    ///   there; a ``SyncError`` naming the cause when the storage cannot be reached.
    func list() throws(SyncError) -> [StoredObject]

    /// A value that changes whenever ``markChanged()`` is called, read cheaply (one small
    /// request); nil when the storage keeps no change marker (a sync then always lists).
    func changeMarker() throws(SyncError) -> String?

    /// Gives the change marker a new value that no earlier call gave it. Called after
    /// every publish or removal; does nothing when the storage keeps no marker.
    func markChanged() throws(SyncError)

    /// The whole object `key` when it is at most `largest` bytes; nil when it is gone.
    /// - Throws: why it cannot be used (too large, a link, not a regular file, unreadable,
    ///   or ``SegmentFile/Invalid/unavailable(_:)`` when the storage did not answer). A
    ///   too-large object's operations count is 0: the caller knows what its name says.
    func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]?

    /// The first `count` bytes of object `key` (all of it when shorter); nil when it is gone.
    func readPrefix(_ key: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]?

    /// The plaintext segment file `key`, named for `operations` operations, checked to be a
    /// clean sealed segment holding operations; nil when it is gone.
    func readSegment(_ key: String, operations: UInt64) throws(SegmentFile.Invalid) -> CheckedSegment?

    /// Readies this device's namespace before it publishes: a local folder creates it and
    /// refuses one that is a link or a file. Object stores, which have no folders, do nothing.
    func prepare(namespace: String) throws(SyncError)

    /// Publishes `bytes` as `key` whole: a reader finds all of it or nothing. Durable when
    /// it returns. Creates the namespace when the storage has folders.
    func publish(_ bytes: [UInt8], as key: String) throws(SyncError)

    /// Publishes `bytes` as `key` unless an object `key` exists. Returns whether this call
    /// made it.
    func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool

    /// Removes objects of this device's own namespace; a missing one is not an error.
    func remove(_ keys: [String]) throws(SyncError)
}

/// A segment file's bytes checked to be a clean sealed segment, and what they hold.
@_spi(Engine) public typealias CheckedSegment = (bytes: [UInt8], replica: ReplicaID, first: UInt64, last: UInt64)

extension FolderStorage {
    /// Reads the first bytes as part of the whole object, bounded by the largest sealed file.
    public func readPrefix(_ key: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        try read(key, largest: FolderSeal.largestFile).map { Array($0.prefix(count)) }
    }

    /// Reads the whole object, no larger than its name allows, and checks its bytes the way a
    /// local folder's streamed read checks them (Spec/sync-folder.md, "Reader rules").
    public func readSegment(_ key: String, operations: UInt64) throws(SegmentFile.Invalid) -> CheckedSegment? {
        let largest = FolderFiles.largestSegment(operations: operations)
        let whole: [UInt8]?
        do { whole = try read(key, largest: largest) } catch .tooLarge(let bytes, _) { throw .tooLarge(bytes: bytes, operations: operations) }
        guard let bytes = whole else { return nil }
        return try SegmentFile.read(size: bytes.count) { (offset, count) throws(SegmentFile.Invalid) in
            guard offset >= 0, count >= 0, offset <= bytes.count - count else { throw .shrank(at: bytes.count) }
            return Array(bytes[offset..<(offset + count)])
        }
    }

    /// Object stores have no folders to make.
    public func prepare(namespace: String) throws(SyncError) {}
}

/// One object listed in a folder's storage.
public struct StoredObject: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// An object, or a regular file.
        case file
        /// A folder (a namespace when its name says so). Object stores list none.
        case folder
        /// A symbolic link: never followed.
        case link
        /// Anything else a local folder may hold (a FIFO, a device).
        case other
    }

    /// The key relative to the folder.
    public var key: String
    public var kind: Kind
    public var size: Int
    /// What tells this object from another that had the same key: a local file's inode, size
    /// and modification time, an object's ETag (or size and modification time). Empty when
    /// the storage cannot tell: such an object is never taken as already compared.
    public var identity: String

    public init(key: String, kind: Kind, size: Int, identity: String = "") {
        self.key = key
        self.kind = kind
        self.size = size
        self.identity = identity
    }
}
