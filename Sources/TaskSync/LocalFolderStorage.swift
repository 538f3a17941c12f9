#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// A shared folder on this machine's file system (Spec/sync-folder.md, "Reader rules" and
/// "Writer rules"): entries looked at with `lstat` and reported as they are (links and
/// special files as such), files opened beneath the folder without following links, writes
/// made whole through this device's namespace opened as a real folder, and files given the
/// shared folder's permissions. The folder itself may be a link: that is the user's choice.
@_spi(Engine) public struct LocalFolderStorage: FolderStorage {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    public var location: String { folder }

    /// The top level, and one level inside each folder whose name is a namespace. An
    /// unreadable folder lists as empty (its writes then fail with the reason).
    public func list() throws(SyncError) -> [StoredObject] {
        var st = stat()
        guard stat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { throw .folderMissing(folder) }
        let root = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return [] }
        defer { close(root) }
        var objects: [StoredObject] = []
        for top in Self.names(in: root, "") {
            guard let object = Self.object(in: root, top) else { continue }
            objects.append(object)
            guard object.kind == .folder, SharedFolder.writer(ofNamespace: top) != nil else { continue }
            for name in Self.names(in: root, top) {
                if let inner = Self.object(in: root, top + "/" + name) { objects.append(inner) }
            }
        }
        return objects
    }

    /// A local folder has no change marker: listing it costs no request.
    public func changeMarker() throws(SyncError) -> String? { nil }

    public func markChanged() throws(SyncError) {}

    public func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        try FolderFiles.readWhole(in: folder, key, largest: largest, operations: 0)
    }

    public func readPrefix(_ key: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        try FolderFiles.readPrefix(in: folder, key, count: count)
    }

    /// Read in pieces that the file's own framing bounds, never more than it holds.
    public func readSegment(_ key: String, operations: UInt64) throws(SegmentFile.Invalid) -> CheckedSegment? {
        try FolderFiles.readSegment(in: folder, key, operations: operations)
    }

    public func prepare(namespace: String) throws(SyncError) {
        _ = try OwnNamespace(in: folder, name: namespace)
    }

    /// Write a temporary file in the namespace, fsync, rename, fsync the namespace.
    public func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        let (namespace, name) = try Self.split(key, in: folder)
        try OwnNamespace(in: folder, name: namespace).publish(bytes, as: name)
    }

    /// Write a temporary file at the top, then `link` it to `key`: a link never replaces an
    /// existing file, so two devices racing both learn who won.
    public func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        let path = Posix.join(folder, key)
        var st = stat()
        guard stat(folder, &st) == 0 else { throw .folderMissing(folder) }
        let temp = Posix.join(folder, Posix.temporaryName())
        do {
            try Posix.writeNewFile(temp, bytes, mode: st.st_mode & 0o666)
        } catch {
            if case .io(_, _, let e) = error { throw .folderUnwritable(path: folder, errno: e) }
            throw .store(error)
        }
        defer { unlink(temp) }
        guard link(temp, path) == 0 else {
            if errno == EEXIST { return false }
            throw .folderUnwritable(path: folder, errno: errno)
        }
        try? Posix.fsyncDirectory(folder)
        return true
    }

    /// Unlinks through each namespace opened as a real folder, then fsyncs it once.
    public func remove(_ keys: [String]) throws(SyncError) {
        var byNamespace: [String: [String]] = [:]
        for key in keys {
            let (namespace, name) = try Self.split(key, in: folder)
            byNamespace[namespace, default: []].append(name)
        }
        for (namespace, names) in byNamespace.sorted(by: { $0.key < $1.key }) {
            let open: OwnNamespace
            do { open = try OwnNamespace(in: folder, name: namespace, create: false) } catch .folderUnwritable(_, ENOENT) { continue }
            for name in names { open.remove(name) }
            open.sync()
        }
    }

    /// A key's namespace and file name.
    private static func split(_ key: String, in folder: String) throws(SyncError) -> (String, String) {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw .folderUnwritable(path: Posix.join(folder, key), errno: EINVAL) }
        return (String(parts[0]), String(parts[1]))
    }

    /// The names in the folder `relative` to the open root (the root itself when empty),
    /// sorted; none when it cannot be listed. A link in its place is not followed.
    private static func names(in root: Int32, _ relative: String) -> [String] {
        let fd = relative.isEmpty ? dup(root) : openat(root, relative, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        guard let dir = fdopendir(fd) else {
            close(fd)
            return []
        }
        defer { closedir(dir) }
        rewinddir(dir)  // a copy of the root shares the position an earlier listing left at the end
        return Posix.names(in: dir).sorted()
    }

    /// The entry `key` as `lstat` sees it; nil when it is gone.
    private static func object(in root: Int32, _ key: String) -> StoredObject? {
        var st = stat()
        guard fstatat(root, key, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        let kind: StoredObject.Kind = switch st.st_mode & S_IFMT {
        case S_IFDIR: .folder
        case S_IFREG: .file
        case S_IFLNK: .link
        default: .other
        }
        let identity = "\(st.st_dev).\(st.st_ino) \(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        return StoredObject(key: key, kind: kind, size: Int(st.st_size), identity: identity)
    }
}
