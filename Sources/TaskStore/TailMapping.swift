#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
@_spi(Engine) import OpLogFormat

/// The fast path for non-durable commits under a lock lease: records are copied into zero
/// bytes reserved past the tail's end through a shared mapping, instead of written with a
/// system call.
///
/// Invariants (``violations(recordsEnd:)`` checks them):
/// - While space is reserved, the file is `reservedEnd` bytes long and `reservedEnd` is past
///   the records' end, so the file ends in at least one zero byte and readers see a torn tail,
///   never a settled one.
/// - The mapping covers the reserved space.
/// - Pages handed to the fault-in thread lie within the reserved space.
/// The reservation is given back (the file cut to its records) before the lock is released.
struct TailMapping {
    private(set) var mapping: UnsafeMutableRawPointer?
    private(set) var mappedLength = 0
    /// The file's length while space is reserved; zero when none is.
    private(set) var reservedEnd = 0
    /// The end of the reserved pages handed to ``faultInAhead(recordsEnd:)``.
    private var faultedEnd = 0

    /// Bytes reserved at a time past the records (rounded to whole pages).
    static let reservation = 1 << 20
    /// Bytes of reserved pages faulted in at a time ahead of the records.
    static let faultWindow = 128 << 10

    var isReserved: Bool { reservedEnd > 0 }

    /// Makes sure `fd` has zero bytes reserved and mapped for `count` more bytes past
    /// `recordsEnd`, with at least one to spare.
    mutating func reserve(_ count: Int, recordsEnd: Int, fd: Int32, path: String) throws(StoreError) {
        let needed = recordsEnd + count
        if needed < reservedEnd && needed < mappedLength { return }
        let page = MemoryHint.pageSize
        let end = (needed + Self.reservation + page - 1) / page * page
        // Blocks are allocated now, so running out of space is an error here, never a fault
        // on a write through the mapping.
        let status = Platform.preallocate(fd: fd, offset: recordsEnd, length: end - recordsEnd)
        guard status == 0 else { throw .io(operation: "reserve space in", path: path, errno: status) }
        reservedEnd = end  // given back before the lock is released, even if mapping fails below
        if end > mappedLength { try remap(length: max(end, 2 * mappedLength, 4 << 20), fd: fd, path: path) }
    }

    private mutating func remap(length: Int, fd: Int32, path: String) throws(StoreError) {
        unmap(keepingReservation: true)
        guard let p = Platform.mapShared(fd: fd, length: length) else { throw .io(operation: "map", path: path, errno: errno) }
        // Each page is faulted in as a record first reaches it; readahead would only fill
        // pages that the next give-back drops unused.
        Platform.adviseRandomAccess(p, length)
        mapping = p
        mappedLength = length
    }

    /// Copies `bytes` into the reserved space at `offset` (``reserve(_:recordsEnd:fd:path:)``
    /// must have made room for them).
    func copy(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset + bytes.count < reservedEnd && offset + bytes.count <= mappedLength)
        mapping!.advanced(by: offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
    }

    /// Cuts `fd` back to `recordsEnd`, giving back the reserved space.
    /// - Returns: whether there was space to give back.
    mutating func giveBack(fd: Int32, recordsEnd: Int) -> Bool {
        guard reservedEnd > 0, fd >= 0 else { return false }
        forgetReservation()
        while ftruncate(fd, off_t(recordsEnd)) != 0 && errno == EINTR {}
        return true
    }

    /// Forgets the reservation after the file was cut by other means.
    mutating func forgetReservation() {
        reservedEnd = 0
        faultedEnd = 0
    }

    /// Unmaps the file (forgetting the reservation unless told to keep it).
    mutating func unmap(keepingReservation: Bool = false) {
        if let mapping { munmap(mapping, mappedLength) }
        mapping = nil
        mappedLength = 0
        faultedEnd = 0
        if !keepingReservation { reservedEnd = 0 }
    }

    /// Keeps the reserved pages just ahead of the records faulted in, a window at a time, on
    /// another thread: faulting in a page of a shared mapping costs microseconds the
    /// committing thread would otherwise pay. A hint: a page not yet faulted in is faulted in
    /// when a record reaches it. (The range may be unmapped meanwhile: the kernel then
    /// reports an error, or faults in whatever is mapped there; nothing is written.)
    mutating func faultInAhead(recordsEnd: Int) {
        guard Platform.canPopulateAhead, let mapping, reservedEnd > 0, recordsEnd + Self.faultWindow / 2 >= faultedEnd
        else { return }
        let page = MemoryHint.pageSize
        let start = max(faultedEnd, recordsEnd / page * page)
        let end = min(reservedEnd, start + Self.faultWindow)
        guard end > start else { return }
        faultedEnd = end
        let (address, bytes) = (UInt(bitPattern: mapping + start), end - start)
        Self.faulting.async { Platform.populateForWriting(UnsafeMutableRawPointer(bitPattern: address), bytes) }
    }

    /// One thread for every writer's faulting in: it must never hold up the shared pool's
    /// threads (which end the leases on time).
    private static let faulting = DispatchQueue(label: "tasklog.tail-fault-in", qos: .utility)

    /// The invariants this mapping breaks, given the records' end and the file's size.
    func violations(recordsEnd: Int, fileSize: Int?) -> [String] {
        var found: [String] = []
        if reservedEnd > 0 {
            if reservedEnd <= recordsEnd { found.append("reserved end \(reservedEnd) is not past the records' end \(recordsEnd)") }
            if reservedEnd > mappedLength { found.append("reserved end \(reservedEnd) is past the mapping's \(mappedLength) bytes") }
            if let fileSize, fileSize != reservedEnd { found.append("the file is \(fileSize) bytes, not the reserved \(reservedEnd)") }
            if faultedEnd > reservedEnd { found.append("pages faulted in up to \(faultedEnd), past the reserved \(reservedEnd)") }
        } else if faultedEnd != 0 {
            found.append("pages faulted in up to \(faultedEnd) with nothing reserved")
        }
        if (mapping == nil) != (mappedLength == 0) { found.append("mapping and its length disagree") }
        return found
    }
}
