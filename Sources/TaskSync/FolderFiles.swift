#if canImport(Glibc)
import CFileStatus
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskStore

/// The shared folder's files as a reader meets them: looked at with `lstat`, opened with
/// `O_NOFOLLOW`, and read no further than their own framing allows. Anyone may write
/// into a shared folder, so nothing in it is trusted (Spec/sync-folder.md, "Reader rules").
enum FolderFiles {
    static let linkNote = SegmentFile.Invalid.symbolicLink.description

    /// The size the largest segment of `operations` operations may have: the header, and
    /// per operation at most one record of the largest payload (sealed segments hold only
    /// commits records, each of at least one operation).
    static func largestSegment(operations: UInt64) -> Int {
        let perRecord = UInt64(SegmentScanner.recordPrefixLimit + FormatConstants.maxRawPayload)
        let (body, overflow) = operations.multipliedReportingOverflow(by: perRecord)
        return overflow || body > UInt64(Int.max / 2) ? Int.max : FormatConstants.segmentHeaderSize + Int(body)
    }

    /// The segment file `relative` (its namespace and name) in `folder`, whose name says it
    /// holds `operations` operations, checked to be a clean sealed segment: its bytes and the
    /// operations they hold; nil if it is gone.
    /// - Throws: why it is not usable (a link on the way, not a regular file, a size its
    ///   name rules out, damage), in words for the sync report.
    static func readSegment(
        in folder: String, _ relative: String, operations: UInt64
    ) throws(SegmentFile.Invalid) -> (bytes: [UInt8], replica: ReplicaID, first: UInt64, last: UInt64)? {
        try withOpenFile(in: folder, relative, largest: largestSegment(operations: operations), operations: operations) {
            (fd, size) throws(SegmentFile.Invalid) in
            try SegmentFile.read(size: size) { (offset, count) throws(SegmentFile.Invalid) in try read(fd, from: offset, count: count) }
        }
    }

    /// The whole of the file `relative` in `folder` if it is at most `largest` bytes; nil if it is gone.
    static func readWhole(in folder: String, _ relative: String, largest: Int, operations: UInt64) throws(SegmentFile.Invalid) -> [UInt8]? {
        try withOpenFile(in: folder, relative, largest: largest, operations: operations) { (fd, size) throws(SegmentFile.Invalid) in
            try read(fd, from: 0, count: size)
        }
    }

    /// The first `count` bytes of the file `relative` in `folder` (all of it when shorter);
    /// nil if it is gone.
    static func readPrefix(in folder: String, _ relative: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        try withOpenFile(in: folder, relative, largest: Int.max, operations: 0) { (fd, size) throws(SegmentFile.Invalid) in
            try read(fd, from: 0, count: min(count, size))
        }
    }

    /// Runs `body` on the file opened without links, checked to be a regular file of at most
    /// `largest` bytes; nil if it is gone.
    private static func withOpenFile<R>(
        in folder: String, _ relative: String, largest: Int, operations: UInt64,
        _ body: (Int32, Int) throws(SegmentFile.Invalid) -> R
    ) throws(SegmentFile.Invalid) -> R? {
        let fd = openWithoutLinks(folder, relative)
        if fd < 0 {
            switch errno {
            case ENOENT: return nil
            case ELOOP, EXDEV: throw .symbolicLink
            default: throw .unreadable(errno: errno)
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw .notRegularFile
        }
        let size = Int(st.st_size)
        guard size <= largest else { throw .tooLarge(bytes: size, operations: operations) }
        return try body(fd, size)
    }

    /// `relative` in `folder` opened for reading, following no symbolic link after `folder`
    /// itself (the user's choice); -1 with errno set if it cannot be opened. Non-blocking, so
    /// a FIFO put in a file's place cannot hang the reader.
    private static func openWithoutLinks(_ folder: String, _ relative: String) -> Int32 {
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        let root = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return -1 }
        defer { close(root) }
        #if canImport(Glibc)
        let fd = tasklog_open_beneath(root, relative, flags)
        if fd >= 0 || errno != ENOSYS { return fd }
        #endif
        // Before Linux 5.6: the namespace was checked to be a real folder when listed.
        return openat(root, relative, flags)
    }

    /// Exactly `count` bytes from `offset`, or why they cannot be had (the file shrank).
    private static func read(_ fd: Int32, from offset: Int, count: Int) throws(SegmentFile.Invalid) -> [UInt8] {
        do {
            return try Posix.read(fd: fd, from: offset, count: count, path: "")
        } catch {
            guard case .io(_, _, let e) = error else { throw .unreadable(errno: EIO) }
            var st = stat()
            if fstat(fd, &st) == 0, Int(st.st_size) < offset + count { throw .shrank(at: Int(st.st_size)) }
            throw .unreadable(errno: e)
        }
    }
}
