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
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        defer { close(fd) }  // closing the descriptor releases the lock
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            throw .io(operation: "lock", path: path, errno: errno)
        }
        return try body()
    }
}
