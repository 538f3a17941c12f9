#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// This replica's namespace in a shared folder, opened as a real folder for writing.
///
/// Every write goes through the open folder (`openat`, `renameat`), so a namespace replaced
/// by a symbolic link meanwhile cannot send a file outside the shared folder. Files take the
/// shared folder's own permissions, whatever this process's umask.
final class OwnNamespace {
    let path: String
    private let fd: Int32
    private let fileMode: mode_t

    /// Opens the namespace `name` in `folder`, creating it first when `create` is set.
    /// - Throws: ``SyncError/namespaceNotAFolder(_:)`` when it is a link or a file.
    init(in folder: String, name: String, create: Bool = true) throws(SyncError) {
        path = Posix.join(folder, name)
        var st = stat()
        guard stat(folder, &st) == 0 else { throw .folderMissing(folder) }
        let folderMode = st.st_mode & 0o777
        fileMode = folderMode & 0o666
        let created = create && mkdir(path, folderMode) == 0
        if create && !created && errno != EEXIST { throw .folderUnwritable(path: path, errno: errno) }
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP || errno == ENOTDIR { throw .namespaceNotAFolder(path) }
            throw .folderUnwritable(path: path, errno: errno)
        }
        // Through the open folder: a link swapped in after mkdir is never followed.
        if created { fchmod(fd, folderMode) }
    }

    deinit { close(fd) }

    /// Publishes a file whole: write a temporary file, fsync, rename, fsync the folder.
    func publish(_ bytes: [UInt8], as name: String) throws(SyncError) {
        let temp = Posix.temporaryName()
        do {
            try Posix.writeNewFile(temp, in: fd, bytes, mode: fileMode)
        } catch {
            if case .io(_, _, let e) = error { throw .folderUnwritable(path: path, errno: e) }
            throw .store(error)
        }
        guard renameat(fd, temp, fd, name) == 0 else {
            let e = errno
            unlinkat(fd, temp, 0)
            throw .folderUnwritable(path: path, errno: e)
        }
        sync()
    }

    func remove(_ name: String) { unlinkat(fd, name, 0) }

    /// Makes the folder's entries durable (after files were renamed in or removed).
    func sync() { fsync(fd) }
}
