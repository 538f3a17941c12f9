@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// The materialised state saved to disk, so opening a store replays only the log after it.
/// It is a cache: the logs stay the source of truth (Spec/log-format.md, "Snapshot file").
///
/// A file is a header, the body (the state as ``StateCodec`` encodes it, stored as is), a
/// task index, a child index, and a table of block checksums. A reader that wants a few
/// tasks checks only the blocks it reads (``SnapshotFile``).
enum Snapshot {
    /// Header flags (Spec/log-format.md, "Snapshot file").
    static let tasksInCreationOrder: UInt8 = 1
    /// Blocks of 16 KiB: a lookup checks a dozen at most (a binary search over the index of a
    /// million tasks touches ten), and the table, which opening checks whole, holds 8 bytes
    /// per block (57 KB for a million tasks).
    static let blockShift = 14

    /// The snapshot of `state`.
    static func encode(_ state: TaskState) -> [UInt8] {
        var tasks: [(id: TaskID, offset: UInt32)] = []
        tasks.reserveCapacity(state.records.count)
        var children: [(key: UInt64, offset: UInt32)] = []
        let body = StateCodec.encode(state) { id, offset, parent in
            tasks.append((id, UInt32(offset)))
            if let parent { children.append((ChildIndex.key(of: parent), UInt32(offset))) }
        }
        let taskIndexSize = TaskIndex.size(tasks.count)
        let childIndexSize = ChildIndex.size(children.count)
        let covered = body.count + taskIndexSize + childIndexSize
        let blocks = (covered + (1 << blockShift) - 1) >> blockShift
        var w = ByteWriter(capacity: Layout.headerSize + covered + 8 * blocks + 8)
        w.append(FormatConstants.snapshotMagic)
        w.u8(FormatConstants.snapshotVersion)
        w.u8(tasksInCreationOrder)  // StateCodec lists them so
        w.u8(UInt8(blockShift))
        w.u8(0)
        for length in [body.count, taskIndexSize, childIndexSize] { w.u32le(UInt32(length)) }
        w.u32le(w.withUnsafeBytes { Checksum.xxh32($0) })
        w.append(body)
        TaskIndex.append(tasks, to: &w)
        ChildIndex.append(children, to: &w)
        appendBlockTable(covering: Layout.headerSize..<w.count, to: &w)
        return w.bytes
    }

    /// Appends the checksum of each block of `covered` and then the table's own checksum.
    private static func appendBlockTable(covering covered: Range<Int>, to w: inout ByteWriter) {
        let sums = w.withUnsafeBytes { buf in
            stride(from: covered.lowerBound, to: covered.upperBound, by: 1 << blockShift).map { start in
                Checksum.xxh3(UnsafeRawBufferPointer(rebasing: buf[start..<min(start + (1 << blockShift), covered.upperBound)]))
            }
        }
        let tableStart = w.count
        for sum in sums { w.u64le(sum) }
        w.u64le(w.withUnsafeBytes { Checksum.xxh3(UnsafeRawBufferPointer(rebasing: $0[tableStart...])) })
    }

    /// Whether `bytes` are a snapshot of an older version: it is not damage, only of no use,
    /// and the state is rebuilt from the logs without a warning.
    static func isOlderVersion(_ bytes: SharedBytes) -> Bool {
        bytes.withUnsafeBytes { buf in
            buf.count >= 20 && Array(buf[0..<4]) == FormatConstants.snapshotMagic
                && (1..<FormatConstants.snapshotVersion).contains(buf[4])
        }
    }

    /// Decodes a snapshot, checking every block; any problem is reported as a reason (the
    /// caller rebuilds from logs).
    static func decode(_ bytes: SharedBytes) -> Result<TaskState, DecodeError> {
        Result { () throws(DecodeError) -> TaskState in
            let file = try SnapshotFile(bytes)
            try file.checkAll()
            // A large state is decoded in parts side by side, split where the index says tasks start.
            return try StateCodec.decode(file.body) { parts in
                file.taskIndex?.splits(into: parts, bodyCount: file.body.count) ?? []
            }
        }
    }

    /// Where the parts of a snapshot file lie, read from its header (Spec/log-format.md,
    /// "Snapshot file"). Offsets count from the start of the file.
    struct Layout {
        static let headerSize = 24
        let flags: UInt8
        let blockShift: Int
        let body: Range<Int>
        let taskIndex: Range<Int>
        let childIndex: Range<Int>
        /// The checksums of the blocks, 8 bytes each, then the table's own.
        let table: Range<Int>

        /// The bytes the blocks cover: the body and the indexes.
        var covered: Range<Int> { body.lowerBound..<childIndex.upperBound }
        var blockCount: Int { (covered.count + (1 << blockShift) - 1) >> blockShift }

        /// Reads and checks the header of the snapshot file in `buf`, and that its size is
        /// what the header gives.
        init(_ buf: UnsafeRawBufferPointer) throws(DecodeError) {
            var r = ByteReader(buf)
            guard buf.count >= Self.headerSize, Array(buf[0..<4]) == FormatConstants.snapshotMagic else {
                throw DecodeError(offset: 0, reason: "not a snapshot file")
            }
            _ = try r.bytes(4)
            let version = try r.u8()
            guard version == FormatConstants.snapshotVersion else {
                throw DecodeError(offset: 4, reason: "snapshot version \(version) is not supported")
            }
            flags = try r.u8()
            blockShift = Int(try r.u8())
            _ = try r.u8()
            let lengths = [Int(try r.u32le()), Int(try r.u32le()), Int(try r.u32le())]
            guard try r.u32le() == Checksum.xxh32(UnsafeRawBufferPointer(rebasing: buf[0..<20])) else {
                throw DecodeError(offset: 20, reason: "snapshot header checksum mismatch")
            }
            // Blocks of 1 KiB to 16 MiB: the table stays small, and so does what a lookup checks.
            guard (10...24).contains(blockShift) else { throw DecodeError(offset: 6, reason: "snapshot block size out of range") }
            body = Self.headerSize..<(Self.headerSize + lengths[0])
            taskIndex = body.upperBound..<(body.upperBound + lengths[1])
            childIndex = taskIndex.upperBound..<(taskIndex.upperBound + lengths[2])
            table = childIndex.upperBound..<(childIndex.upperBound + 8 * ((lengths.reduce(0, +) + (1 << blockShift) - 1) >> blockShift))
            guard table.upperBound + 8 == buf.count else {
                throw DecodeError(offset: 8, reason: "snapshot size does not match its header")
            }
        }
    }
}
