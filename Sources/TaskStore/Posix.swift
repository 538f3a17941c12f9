#if canImport(Glibc)
import CFileStatus
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
@_spi(Engine) import OpLogFormat

/// The few file-system calls the store makes, with errors that name the path.
package enum Posix {
    package static func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }

    /// The whole file, or nil if it does not exist.
    package static func readFile(_ path: String) throws(StoreError) -> [UInt8]? {
        try withFileOpenForReading(path) { (fd) throws(StoreError) in try readAll(fd: fd, path: path) }
    }

    /// `body` given the file open for reading (closed after), or nil if it does not exist.
    private static func withFileOpenForReading<R>(
        _ path: String, _ body: (Int32) throws(StoreError) -> R
    ) throws(StoreError) -> R? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .io(operation: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        return try body(fd)
    }

    /// The whole file, mapped into memory read-only when it is large (its pages are the page
    /// cache's: nothing is copied, and no fresh memory is faulted in and zeroed to read it
    /// into), or nil if it does not exist. Only for files that are replaced whole (written
    /// beside and renamed over), never rewritten in place: a mapped file cut short by another
    /// program while it is read would fault the reader.
    /// - Parameter populated: map every page at once, for a reader of the whole file; else
    ///   a page is mapped when first read, for a reader of a few parts of it.
    package static func mapFile(_ path: String, populated: Bool = true) throws(StoreError) -> SharedBytes? {
        try withFileOpenForReading(path) { (fd) throws(StoreError) -> SharedBytes in
            guard let (_, size) = linksAndSize(fd) else { throw .io(operation: "stat", path: path, errno: errno) }
            if size >= MappedFile.smallest, let mapped = MappedFile(fd: fd, size: size, populated: populated) {
                return SharedBytes(mapped.bytes, owner: mapped)
            }
            return SharedBytes(try readAll(fd: fd, path: path))
        }
    }

    /// The link count and size of an open file, without reading its times (see CFileStatus);
    /// nil if they cannot be read.
    package static func linksAndSize(_ fd: Int32) -> (links: Int, size: Int)? {
        #if canImport(Glibc)
        var links: UInt32 = 0
        var size: UInt64 = 0
        if tasklog_links_and_size(fd, &links, &size) == 0 { return (Int(links), Int(size)) }
        #endif
        var st = stat()
        return fstat(fd, &st) == 0 ? (Int(st.st_nlink), Int(st.st_size)) : nil
    }

    package static func readAll(fd: Int32, path: String) throws(StoreError) -> [UInt8] {
        guard let (_, size) = linksAndSize(fd) else { throw .io(operation: "stat", path: path, errno: errno) }
        // One byte more than the size: a read that fills the room means the file grew
        // meanwhile, and it is read again into twice the room.
        var capacity = max(size, 0) + 1
        while true {
            var failure: Int32 = 0
            // Read straight into uninitialized room (not zero-filled first).
            let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                MemoryHint.mapIn(buffer.baseAddress!, bytes: capacity)
                while count < capacity {
                    // pread: always from the start of the file, wherever the descriptor's offset is.
                    let n = pread(fd, buffer.baseAddress! + count, capacity - count, off_t(count))
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { failure = errno }
                    if n <= 0 { return }
                    count += n
                }
            }
            if failure != 0 { throw .io(operation: "read", path: path, errno: failure) }
            if out.count < capacity { return out }
            capacity *= 2
        }
    }

    /// `count` bytes of an open file from `offset`.
    package static func read(fd: Int32, from offset: Int, count: Int, path: String) throws(StoreError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .io(operation: "read", path: path, errno: n < 0 ? errno : EIO) }
            done += n
        }
        return out
    }

    package static func writeAll(fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(StoreError) {
        try bytes.withUnsafeBufferPointer { (b) throws(StoreError) in try writeAll(fd: fd, UnsafeRawBufferPointer(b), at: offset, path: path) }
    }

    package static func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws(StoreError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", path: path, errno: errno)
            }
            done += n
        }
    }

    package static func fsyncFD(_ fd: Int32, path: String) throws(StoreError) {
        guard fsync(fd) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
        DurabilityProbe.synced(fd, path)
    }

    package static func fsyncDirectory(_ dir: String) throws(StoreError) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open", path: dir, errno: errno) }
        defer { close(fd) }
        try fsyncFD(fd, path: dir)
    }

    /// Creates or replaces `path` atomically: write a temporary file, fsync it, rename it over
    /// `path`, fsync the directory. Readers see the old file or the new one, never a mix.
    /// - Parameter cached: keep the written pages in the page cache; a large file that is read
    ///   a few places at a time (a snapshot) is dropped, so a reader maps small pages of it.
    package static func writeAtomically(_ path: String, _ bytes: [UInt8], sync: Bool = true, cached: Bool = true) throws(StoreError) {
        try install(try writeTemporary(beside: path, bytes, sync: sync, cached: cached), as: path, sync: sync)
    }

    /// Writes `bytes` to a new temporary file in the folder of `path` (fsynced when `sync`),
    /// to be renamed over `path` by ``install(_:as:sync:)``: the two halves of write-temp.
    /// The file is readable only by its owner (0600).
    package static func writeTemporary(
        beside path: String, _ bytes: [UInt8], sync: Bool = true, cached: Bool = true
    ) throws(StoreError) -> String {
        let temp = join(directory(of: path), temporaryName())
        try writeNewFile(temp, bytes, mode: 0o600, sync: sync, cached: cached)
        return temp
    }

    /// A fresh name for a temporary file of write-temp (`.tmp-<pid>-<random>`).
    package static func temporaryName() -> String { ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    /// Creates `name` (relative to the open folder `folder`, or to the working directory)
    /// exclusively, never through a link, with exactly `mode`; writes `bytes` and fsyncs it
    /// when `sync`. On failure the file is removed. Unless `cached`, its pages then leave the
    /// page cache: written pages stay in large units, which a reader mapping the file would
    /// map whole, its memory then growing with the file rather than with what it reads.
    package static func writeNewFile(
        _ name: String, in folder: Int32 = AT_FDCWD, _ bytes: [UInt8], mode: mode_t, sync: Bool = true, cached: Bool = true
    ) throws(StoreError) {
        let fd = openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .io(operation: "create", path: name, errno: errno) }
        do {
            fchmod(fd, mode)  // whatever the umask
            try writeAll(fd: fd, bytes, at: 0, path: name)
            if sync { try fsyncFD(fd, path: name) }
            if !cached { Platform.dropCachedPages(fd: fd) }
        } catch {
            close(fd)
            unlinkat(folder, name, 0)
            throw error
        }
        close(fd)
    }

    /// Renames a temporary file from ``writeTemporary(beside:_:sync:)`` over `path`.
    package static func install(_ temp: String, as path: String, sync: Bool = true) throws(StoreError) {
        guard rename(temp, path) == 0 else {
            let e = errno
            unlink(temp)
            throw .io(operation: "rename", path: path, errno: e)
        }
        if sync { try fsyncDirectory(directory(of: path)) }
    }

    /// Runs `body` on a new detached thread at a lower scheduling priority (nice +10 on
    /// Linux, where the nice value is per thread): background work that should yield the
    /// processor to the threads that commit and read. The thread ends with `body`, so the
    /// lowered priority never reaches anyone else's work.
    package static func detachLowPriorityThread(_ body: @escaping @Sendable () -> Void) {
        if !detachThread(lowerPriority: true, body) {
            // No thread to be had: a shared one does the work (never the caller, which may
            // hold locks the work takes).
            DispatchQueue.global(qos: .utility).async { body() }
        }
    }

    /// Runs `body` on a new detached thread of its own (not a shared pool's, which a caller
    /// blocked on the result could starve), at a lower priority when asked.
    /// - Returns: false, running nothing, when no thread could be made.
    package static func detachThread(lowerPriority: Bool = false, _ body: @escaping @Sendable () -> Void) -> Bool {
        final class Job: Sendable {
            let body: @Sendable () -> Void
            let lowerPriority: Bool
            init(_ body: @escaping @Sendable () -> Void, lowerPriority: Bool) {
                self.body = body
                self.lowerPriority = lowerPriority
            }
        }
        let job = Unmanaged.passRetained(Job(body, lowerPriority: lowerPriority)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            if job.lowerPriority { Platform.lowerThreadPriority() }
            job.body()
            return nil
        }, job)
        guard status == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Creates `path` and its missing parents, readable only by their owner (0700): a store
    /// holds every task in the clear.
    package static func makeDirectories(_ path: String) throws(StoreError) {
        if isDirectory(path) { return }
        let parent = directory(of: path)
        if parent != path && !parent.isEmpty && parent != "." { try makeDirectories(parent) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .io(operation: "create folder", path: path, errno: errno)
        }
    }

    /// Which file `path` names and when it was last replaced: its inode and status-change
    /// time (an inode number alone may be reused by the file that replaces it). Nil if absent.
    package static func version(of path: String) -> FileVersion? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileVersion(inode: UInt64(st.st_ino), changed: Int64(st.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_ctim.tv_nsec))
    }

    package static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    package static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    package static func fileSize(_ path: String) -> Int? {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : nil
    }

    /// Names in a folder (without "." and ".."); empty if the folder does not exist.
    package static func list(_ dir: String) throws(StoreError) -> [String] {
        guard let d = opendir(dir) else {
            if errno == ENOENT { return [] }
            throw .io(operation: "list", path: dir, errno: errno)
        }
        defer { closedir(d) }
        return names(in: d)
    }

    /// The names an open folder stream gives from where it stands (without "." and "..").
    package static func names(in d: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes temporary files (`.tmp-*`) older than `age` seconds left in `dir` by a crash
    /// between creating and renaming them.
    package static func removeStaleTemporaries(in dir: String, olderThan age: Int = 600) {
        guard let names = try? list(dir) else { return }
        let now = time(nil)
        for n in names where n.hasPrefix(".tmp-") {
            let p = join(dir, n)
            var st = stat()
            guard lstat(p, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
            let modified = st.st_mtimespec.tv_sec
            #else
            let modified = st.st_mtim.tv_sec
            #endif
            if now - modified > age { unlink(p) }
        }
    }

    /// Nanoseconds on the monotonic clock.
    package static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Milliseconds since the epoch from the real-time clock.
    package static func wallClockMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(ts.tv_nsec / 1_000_000)
    }
}

extension String {
    /// The string without the given characters at either end.
    package func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let f = s.first, chars.contains(f) { s.removeFirst() }
        while let l = s.last, chars.contains(l) { s.removeLast() }
        return String(s)
    }
}

extension Substring {
    /// The substring without the given characters at either end, as a string.
    package func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}

/// See ``Posix/version(of:)``.
package struct FileVersion: Equatable, Sendable {
    var inode: UInt64
    var changed: Int64
}

/// A whole file mapped into memory, read-only, for as long as the object lives.
final class MappedFile {
    /// Below this size reading the file costs less than mapping and unmapping it.
    static let smallest = 1 << 16

    let bytes: UnsafeRawBufferPointer

    /// Maps the first `size` bytes of the open file `fd`; nil if the system will not map it.
    /// When `populated`, where the system can, the pages are mapped in one call, not a fault at a time.
    init?(fd: Int32, size: Int, populated: Bool) {
        guard let base = Platform.mapForReading(fd: fd, size: size, populated: populated) else { return nil }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
}
