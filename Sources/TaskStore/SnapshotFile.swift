@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskModel

/// A snapshot file opened for reading, its bytes checked a block at a time as they are read
/// (Spec/log-format.md, "Block checksums"). Opening checks the header, the block table and
/// the body's first bytes; a lookup then checks the blocks it reads, and a reader of the whole
/// state checks them all. Each block is checked once, whichever thread reads it first.
final class SnapshotFile: Sendable {
    let layout: Snapshot.Layout
    /// The body: an encoded state (``StateCodec``).
    let body: SharedBytes
    /// The start of the body, up to its tombstones, checked.
    let head: StateCodec.LookupHead
    let taskIndex: TaskIndex?
    let childIndex: ChildIndex?
    let blocks: SnapshotBlocks
    /// The body's tombstones, once read.
    private let savedTombstones = Mutex<Set<OperationID>?>(nil)

    /// Opens the snapshot in `bytes`.
    /// - Throws: when it is not a snapshot of this version, or its header, block table or
    ///   first bytes do not check out.
    init(_ bytes: SharedBytes) throws(DecodeError) {
        let layout = try bytes.withDecoding { (buf) throws(DecodeError) -> Snapshot.Layout in
            let layout = try Snapshot.Layout(buf)
            let table = UnsafeRawBufferPointer(rebasing: buf[layout.table])
            guard Checksum.xxh3(table) == buf.loadUnaligned(fromByteOffset: layout.table.upperBound, as: UInt64.self).littleEndian else {
                throw DecodeError(offset: layout.table.upperBound, reason: "snapshot block table checksum mismatch")
            }
            return layout
        }
        let blocks = SnapshotBlocks(layout, bytes)
        self.layout = layout
        self.blocks = blocks
        body = bytes[layout.body]
        // The first block holds the head of all but a store of many devices: checked before
        // it is read, so that damage there is reported as such.
        try blocks.check(layout.body.lowerBound..<(layout.body.lowerBound + 1))
        head = try StateCodec.lookupHead(of: body)
        try blocks.check(layout.body.lowerBound..<(layout.body.lowerBound + head.end))
        taskIndex = try TaskIndex(layout.taskIndex, in: blocks)
        childIndex = try ChildIndex(layout.childIndex, in: blocks)
    }

    /// Whether the tasks are listed in creation order (then the body can be listed one task
    /// at a time in that order).
    var inCreationOrder: Bool { layout.flags & Snapshot.tasksInCreationOrder != 0 }

    /// Checks the blocks holding the body's bytes at `range` (offsets within the body).
    func checkBody(_ range: Range<Int>) throws(DecodeError) {
        try blocks.check((layout.body.lowerBound + range.lowerBound)..<(layout.body.lowerBound + range.upperBound))
    }

    /// Checks every block not checked yet; with `mappingIn`, mapping the file's pages in
    /// first in one call (for a file mapped a page at a time as read).
    func checkAll(mappingIn: Bool = false) throws(DecodeError) { try blocks.checkAll(mappingIn: mappingIn) }

    /// The body's membership tombstones, read (and their bytes checked) on first use.
    func tombstones() throws(DecodeError) -> Set<OperationID> {
        if let read = savedTombstones.withLock({ $0 }) { return read }
        let (read, end) = try StateCodec.tombstones(of: body, head)
        try checkBody(0..<end)
        savedTombstones.withLock { $0 = read }
        return read
    }

    /// The id of the task at `offset` in the body, its bytes checked.
    func taskID(at offset: Int) throws(DecodeError) -> TaskID {
        let (id, end) = try StateCodec.taskID(at: offset, in: body, head)
        try checkBody(offset..<end)
        return id
    }

    /// The task at `offset` in the body, whole with its live dots, its bytes checked.
    func task(at offset: Int) throws(DecodeError) -> (id: TaskID, record: TaskRecord, live: LiveDots?) {
        let (id, record, live, end) = try StateCodec.task(at: offset, in: body, head)
        try checkBody(offset..<end)
        return (id, record, live)
    }
}

/// The blocks of a snapshot file and which of them were checked against the block table.
final class SnapshotBlocks: Sendable {
    let bytes: SharedBytes
    private let layout: Snapshot.Layout
    /// One bit per block, set once its checksum held.
    private let checked: Mutex<[UInt64]>

    init(_ layout: Snapshot.Layout, _ bytes: SharedBytes) {
        self.layout = layout
        self.bytes = bytes
        checked = Mutex([UInt64](repeating: 0, count: (layout.blockCount + 63) / 64))
    }

    /// Checks the blocks holding the file's bytes at `range` that are not checked yet.
    /// - Throws: when a block's checksum fails, or `range` is not within the blocks.
    func check(_ range: Range<Int>) throws(DecodeError) {
        guard !range.isEmpty else { return }
        let covered = layout.covered
        guard range.lowerBound >= covered.lowerBound, range.upperBound <= covered.upperBound else {
            throw DecodeError(offset: range.lowerBound, reason: "snapshot read outside its blocks")
        }
        let first = (range.lowerBound - covered.lowerBound) >> layout.blockShift
        let last = (range.upperBound - 1 - covered.lowerBound) >> layout.blockShift
        for block in first...last where !isChecked(block) { try check(block: block) }
    }

    /// Checks every block not checked yet, with `mappingIn`, mapping the file's pages in
    /// first in one call.
    func checkAll(mappingIn: Bool) throws(DecodeError) {
        if mappingIn { mapIn() }
        try check(layout.covered)
    }

    private func mapIn() {
        bytes.withUnsafeBytes { buf in
            guard let base = buf.baseAddress, buf.count >= MappedFile.smallest else { return }
            let first = Int(bitPattern: base) / Platform.pageSize * Platform.pageSize
            Platform.populateForReading(UnsafeRawPointer(bitPattern: first)!, Int(bitPattern: base) + buf.count - first)
        }
    }

    private func isChecked(_ block: Int) -> Bool {
        checked.withLock { $0[block >> 6] & (1 << UInt64(block & 63)) != 0 }
    }

    private func check(block: Int) throws(DecodeError) {
        let covered = layout.covered
        let start = covered.lowerBound + block << layout.blockShift
        let end = min(start + 1 << layout.blockShift, covered.upperBound)
        let holds = bytes.withUnsafeBytes { buf in
            Checksum.xxh3(UnsafeRawBufferPointer(rebasing: buf[start..<end]))
                == buf.loadUnaligned(fromByteOffset: layout.table.lowerBound + 8 * block, as: UInt64.self).littleEndian
        }
        guard holds else { throw DecodeError(offset: start, reason: "snapshot block \(block) checksum mismatch") }
        checked.withLock { $0[block >> 6] |= 1 << UInt64(block & 63) }
    }
}
