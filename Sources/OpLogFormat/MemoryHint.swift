#if canImport(Glibc)
import Glibc
#endif

/// Memory about to be filled in one go (a buffer a file is read into, a block decompressed
/// into, the records of a snapshot being decoded) is mapped in with one call to the kernel,
/// rather than a page fault at a time as it is first written: for a state of 10,000 tasks,
/// about a thousand faults. A hint: nothing is written, and a kernel without it (before
/// Linux 5.14) just takes the faults.
public enum MemoryHint {
    /// Below this many bytes the call costs about what it saves.
    static let smallest = 1 << 16
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Maps in the pages holding `bytes` bytes from `start`.
    public static func mapIn(_ start: UnsafeMutableRawPointer, bytes: Int) {
        #if os(Linux)
        guard bytes >= smallest else { return }
        let first = Int(bitPattern: start) / pageSize * pageSize
        let end = (Int(bitPattern: start) + bytes + pageSize - 1) / pageSize * pageSize
        _ = madvise(UnsafeMutableRawPointer(bitPattern: first), end - first, MADV_POPULATE_WRITE)
        #endif
    }
}
