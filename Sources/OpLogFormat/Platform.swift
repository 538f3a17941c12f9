#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every system call this package makes that is not plain POSIX, with a Darwin branch or a
/// portable fallback. Each call here is either a hint (safe to skip) or has an equivalent.
/// The C shims for `statx` and `openat2` live in the `CFileStatus` module, with fallbacks.
package enum Platform {
    /// The size of a memory page.
    package static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    // MARK: Memory hints (nothing is written; a kernel without them just takes the faults)

    /// Whether ``populateForWriting(_:_:)`` does anything on this system.
    package static var canPopulateAhead: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// Faults in, writable, the pages of `bytes` bytes from the page-aligned `start`.
    package static func populateForWriting(_ start: UnsafeMutableRawPointer?, _ bytes: Int) {
        #if os(Linux)
        _ = madvise(start, bytes, MADV_POPULATE_WRITE)
        #endif
    }

    /// Asks for transparent huge pages over `bytes` bytes from the 2 MiB-aligned `start`.
    package static func preferHugePages(_ start: UnsafeMutableRawPointer?, _ bytes: Int) {
        #if os(Linux)
        _ = madvise(start, bytes, MADV_HUGEPAGE)
        #endif
    }

    /// Maps in, readable, the pages of `bytes` bytes of a file mapping from the page-aligned
    /// `start`, in one call rather than a fault at a time.
    package static func populateForReading(_ start: UnsafeRawPointer, _ bytes: Int) {
        #if os(Linux)
        _ = madvise(UnsafeMutableRawPointer(mutating: start), bytes, MADV_POPULATE_READ)
        #endif
    }

    /// Tells the kernel a mapping is read at random, so it reads no pages ahead.
    package static func adviseRandomAccess(_ start: UnsafeMutableRawPointer, _ bytes: Int) {
        _ = posix_madvise(start, bytes, Int32(POSIX_MADV_RANDOM))
    }

    /// Asks the kernel to drop the clean cached pages of `fd` (after an fsync, all of them).
    package static func dropCachedPages(fd: Int32) {
        #if os(Linux)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        #endif
    }

    // MARK: Mappings

    /// Maps `length` bytes of `fd` shared and writable; nil with errno set on failure.
    package static func mapShared(fd: Int32, length: Int) -> UnsafeMutableRawPointer? {
        let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        return p == MAP_FAILED ? nil : p
    }

    /// Maps the first `size` bytes of `fd` read-only and private, populated in one call where
    /// the system can when `populated`; nil if it will not map them.
    package static func mapForReading(fd: Int32, size: Int, populated: Bool = true) -> UnsafeRawPointer? {
        #if os(Linux)
        let flags = populated ? MAP_PRIVATE | MAP_POPULATE : MAP_PRIVATE
        #else
        let flags = MAP_PRIVATE
        #endif
        guard size > 0, let base = mmap(nil, size, PROT_READ, flags, fd, 0), base != MAP_FAILED else { return nil }
        // A reader of a few places maps only the pages it touches, not those around them.
        if !populated { adviseRandomAccess(base, size) }
        return UnsafeRawPointer(base)
    }

    // MARK: Files

    /// Allocates the blocks of `length` bytes from `offset` in `fd`, growing the file to cover
    /// them. Returns 0, or an errno value.
    package static func preallocate(fd: Int32, offset: Int, length: Int) -> Int32 {
        #if os(Linux)
        return posix_fallocate(fd, off_t(offset), off_t(length))
        #else
        var store = fstore_t(
            fst_flags: UInt32(F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE, fst_offset: 0,
            fst_length: off_t(offset + length), fst_bytesalloc: 0)
        _ = fcntl(fd, F_PREALLOCATE, &store)
        return ftruncate(fd, off_t(offset + length)) == 0 ? 0 : errno
        #endif
    }

    /// Makes the data written to `fd` durable. Returns 0, or -1 with errno set.
    package static func syncData(_ fd: Int32) -> Int32 {
        #if os(Linux)
        return fdatasync(fd)
        #else
        // On Darwin fsync reaches the drive but not its platters; F_FULLFSYNC does.
        return fcntl(fd, F_FULLFSYNC) == 0 ? 0 : fsync(fd)
        #endif
    }

    // MARK: Threads

    /// Lowers the calling thread's priority by 10 steps (background work).
    package static func lowerThreadPriority() {
        #if os(Linux)
        // On Linux a thread's nice value is its own.
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        if errno == 0 { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(nice + 10, 19)) }
        #else
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }

    // MARK: Change notifications (polling is the fallback)

    /// A descriptor that becomes readable when watched folders change, or -1 where the
    /// system has no such notification (the watcher then polls).
    package static func makeChangeNotifier() -> Int32 {
        #if os(Linux)
        return inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        #else
        return -1
        #endif
    }

    /// Watches the folder `path` for files created, written, moved or deleted in it. With
    /// `folderOnly`, a path that is a file or a symbolic link is not watched.
    package static func watchFolder(_ notifier: Int32, _ path: String, folderOnly: Bool) {
        #if os(Linux)
        var mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        if folderOnly { mask |= UInt32(IN_ONLYDIR | IN_DONT_FOLLOW) }
        _ = inotify_add_watch(notifier, path, mask)
        #endif
    }
}
