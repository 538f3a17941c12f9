/// Memory about to be filled in one go (a buffer a file is read into, a block decompressed
/// into, the records of a snapshot being decoded) is mapped in with one call to the kernel,
/// rather than a page fault at a time as it is first written: for a state of 10,000 tasks,
/// about a thousand faults. A hint: nothing is written, and a kernel without it (before
/// Linux 5.14) just takes the faults.
///
/// Large tables read at random (the records of a big state) are also asked for 2 MiB pages
/// (``preferLargePages(_:bytes:)``): one translation then covers 512 ordinary pages, so
/// random reads over hundreds of megabytes miss the TLB far less often.
package enum MemoryHint {
    /// Below this many bytes the call costs about what it saves.
    static let smallest = 1 << 16
    package static var pageSize: Int { Platform.pageSize }
    /// The size of a transparent huge page on x86-64 and most arm64 kernels.
    static let largePage = 1 << 21

    /// Maps in the pages holding `bytes` bytes from `start`.
    package static func mapIn(_ start: UnsafeMutableRawPointer, bytes: Int) {
        guard Platform.canPopulateAhead, bytes >= smallest else { return }
        let first = Int(bitPattern: start) / pageSize * pageSize
        let end = (Int(bitPattern: start) + bytes + pageSize - 1) / pageSize * pageSize
        Platform.populateForWriting(UnsafeMutableRawPointer(bitPattern: first), end - first)
    }

    /// Asks the kernel to back the 2 MiB-aligned stretches inside `bytes` bytes from `start`
    /// with transparent huge pages, when they are first touched. Call it before writing the
    /// memory, and only for memory read at random for long: a huge page costs more to set
    /// up, and a buffer read once front to back gains nothing from it. Only regions of at
    /// least 4 MiB are advised (smaller ones hold at most one such stretch); a kernel with
    /// huge pages off ignores it.
    package static func preferLargePages(_ start: UnsafeMutableRawPointer, bytes: Int) {
        guard bytes >= 2 * largePage else { return }
        let first = (Int(bitPattern: start) + largePage - 1) / largePage * largePage
        let end = (Int(bitPattern: start) + bytes) / largePage * largePage
        guard end > first else { return }
        Platform.preferHugePages(UnsafeMutableRawPointer(bitPattern: first), end - first)
    }
}
