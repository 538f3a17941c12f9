#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's advisory lock (`flock` on the `lock` file), serialising appends, seals and
/// compactions between processes. It is held only for the write itself, never while idle.
enum StoreLock {
    /// Runs `body` while this process holds the lock, waiting for it if another process has it.
    static func holding<R>(_ path: String, _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        var fd: Int32 = -1
        defer { if fd >= 0 { close(fd) } }
        return try holding(path, descriptor: &fd, body)
    }

    /// The same, reusing `descriptor` (opened on first use) so a busy writer does not open
    /// the lock file for every commit. The lock itself is released before this returns.
    static func holding<R>(
        _ path: String, descriptor fd: inout Int32, _ body: () throws(StoreError) -> R
    ) throws(StoreError) -> R {
        if fd < 0 {
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            throw .io(operation: "lock", path: path, errno: errno)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
