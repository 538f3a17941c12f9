@_spi(Engine) import TaskStore

/// Where a shared folder's files live: a local folder, an S3 bucket prefix or a WebDAV
/// folder. The folder protocol (Spec/sync-folder.md) runs unchanged over any of them.
///
/// Keys are relative to the folder: a top-level name (`tasklog-epoch-1`) or a namespace
/// and a file name (`tasklog-<writer>/<file>`). Every object has one writer and never
/// changes once published, so no storage needs conditional writes, except that
/// ``createIfAbsent(_:as:)`` must not replace an object that exists.
@_spi(Engine) public protocol FolderStorage: Sendable {
    /// Where the folder is, for messages: a path, or a URL without credentials.
    var location: String { get }

    /// Every object in the folder: the top level and one level inside each namespace.
    /// - Throws: ``SyncError/folderMissing(_:)`` when the folder, bucket or prefix is not
    ///   there; a ``SyncError`` naming the cause when the storage cannot be reached.
    func list() throws(SyncError) -> [StoredObject]

    /// A value that changes whenever an object is published or removed, read cheaply (one
    /// small request); nil when the storage cannot tell without listing.
    func changeMarker() throws(SyncError) -> String?

    /// The whole object `key` when it is at most `largest` bytes; nil when it is gone.
    /// - Throws: why it cannot be used (too large, a link, not a regular file, unreadable,
    ///   or ``SegmentFile/Invalid/unavailable(_:)`` when the storage did not answer).
    func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]?

    /// Publishes `bytes` as `key` whole: a reader finds all of it or nothing. Durable when
    /// it returns. Creates the namespace when the storage has folders.
    func publish(_ bytes: [UInt8], as key: String) throws(SyncError)

    /// Publishes `bytes` as `key` unless an object `key` exists. Returns whether this call
    /// made it.
    func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool

    /// Removes objects of this device's own namespace; a missing one is not an error.
    func remove(_ keys: [String]) throws(SyncError)
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

    public init(key: String, kind: Kind, size: Int) {
        self.key = key
        self.kind = kind
        self.size = size
    }
}
