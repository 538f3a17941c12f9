@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// The materialised state saved to disk, so opening a store replays only the log after it.
/// It is a cache: the logs stay the source of truth (Spec/log-format.md, "Snapshot file").
enum Snapshot {
    static let headerSize = 20

    /// The snapshot of `state`, its body stored uncompressed: decompressing it was a sixth of
    /// opening a store (the body shrinks by only a third under LZ4), and a snapshot is a local
    /// cache, never sent.
    static func encode(_ state: TaskState) -> [UInt8] {
        var entries: [(key: UInt32, offset: UInt32)] = []
        entries.reserveCapacity(state.records.count)
        let body = StateCodec.encode(state) { entries.append(($0, UInt32($1))) }
        var w = ByteWriter(capacity: body.count + headerSize + TaskIndex.size(entries.count))
        w.append(FormatConstants.snapshotMagic)
        w.u8(FormatConstants.snapshotVersion)
        w.u8(tasksInCreationOrder)  // StateCodec lists them so
        w.u16le(0)
        w.u32le(UInt32(body.count))  // rawLength
        w.u32le(UInt32(body.count))  // storedLength: the same, the body as is
        w.u32le(Checksum.xxh32(body))
        w.append(body)
        // Offsets past 4 GiB cannot be listed: such a body goes without an index.
        if body.count <= Int(UInt32.max) { TaskIndex.append(entries, to: &w) }
        return w.bytes
    }

    /// The task index after a snapshot's body: where each task starts, listed by a key of its
    /// id, so that a command naming a few tasks reads only those (Spec/log-format.md, "Task
    /// index"). Readers that do not know it ignore it, as they ignore any bytes after the body.
    struct TaskIndex {
        static let magic: [UInt8] = Array("TSIX".utf8)
        static let entrySize = 8

        /// The bytes of a snapshot file and where the entries lie in it.
        private let file: SharedBytes
        private let entries: Range<Int>

        static func size(_ count: Int) -> Int { 12 + count * entrySize }

        /// Appends the index of `entries` (every task's key and offset in the body) to `w`.
        static func append(_ entries: [(key: UInt32, offset: UInt32)], to w: inout ByteWriter) {
            let start = w.count
            w.append(magic)
            w.u32le(UInt32(entries.count))
            for e in entries.sorted(by: { ($0.key, $0.offset) < ($1.key, $1.offset) }) {
                w.u32le(e.key)
                w.u32le(e.offset)
            }
            w.u32le(w.withUnsafeBytes { Checksum.xxh32(UnsafeRawBufferPointer(rebasing: $0[start...])) })
        }

        /// The index of a snapshot file whose body ends at `bodyEnd`, or nil when there is none
        /// or it does not check out (the tasks are then looked for by reading the body).
        init?(in file: SharedBytes, bodyEnd: Int) {
            let rest = file.count - bodyEnd
            guard rest >= Self.size(0) else { return nil }
            let found: (count: Int, sum: UInt32, computed: UInt32)? = file.withUnsafeBytes { buf in
                guard Array(buf[bodyEnd..<(bodyEnd + 4)]) == Self.magic else { return nil }
                return (Int(buf.loadUnaligned(fromByteOffset: bodyEnd + 4, as: UInt32.self).littleEndian),
                        buf.loadUnaligned(fromByteOffset: buf.count - 4, as: UInt32.self).littleEndian,
                        Checksum.xxh32(UnsafeRawBufferPointer(rebasing: buf[bodyEnd..<(buf.count - 4)])))
            }
            guard let found, rest == Self.size(found.count), found.sum == found.computed else { return nil }
            self.file = file
            entries = (bodyEnd + 8)..<(file.count - 4)
        }

        /// How many entries the index lists.
        private var count: Int { entries.count / Self.entrySize }

        /// Entry `i` of the index in `file`'s bytes.
        private func entry(_ i: Int, in buf: UnsafeRawBufferPointer) -> (key: UInt32, offset: Int) {
            let at = entries.lowerBound + i * Self.entrySize
            return (buf.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian,
                    Int(buf.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self).littleEndian))
        }

        /// The body offsets listed under `id`'s key (each to be checked to hold `id`).
        func offsets(of id: TaskID) -> [Int] {
            let key = StateCodec.indexKey(of: id)
            return file.withUnsafeBytes { buf in
                var low = 0, high = count
                while low < high {
                    let mid = (low + high) / 2
                    if entry(mid, in: buf).key < key { low = mid + 1 } else { high = mid }
                }
                var out: [Int] = []
                while low < count, entry(low, in: buf).key == key {
                    out.append(entry(low, in: buf).offset)
                    low += 1
                }
                return out
            }
        }

        /// For each of `positions` (body offsets, ascending), the greatest offset the index
        /// lists at or before it, nil when none: where the task holding that byte starts.
        func starts(enclosing positions: [Int]) -> [Int?] {
            guard !positions.isEmpty else { return [] }
            // Each listed offset is noted at the first position at or after it; the start
            // enclosing a position is then the greatest noted at or before it.
            var noted = [Int](repeating: -1, count: positions.count)
            file.withUnsafeBytes { buf in
                for i in 0..<count {
                    let offset = entry(i, in: buf).offset
                    guard offset <= positions[positions.count - 1] else { continue }
                    var low = 0, high = positions.count
                    while low < high {
                        let mid = (low + high) / 2
                        if positions[mid] < offset { low = mid + 1 } else { high = mid }
                    }
                    noted[low] = max(noted[low], offset)
                }
            }
            var greatest = -1
            return noted.map { greatest = max(greatest, $0); return greatest < 0 ? nil : greatest }
        }

        /// Offsets where `parts` parts of a body of `bodyCount` bytes could start after the
        /// first, each with how many tasks the index lists before it: the listed offsets
        /// nearest the even splits of the bytes. The decoder checks that each is where that
        /// many tasks end.
        func splits(into parts: Int, bodyCount: Int) -> [StateCodec.Split] {
            guard parts > 1 else { return [] }
            return file.withUnsafeBytes { buf in
                (1..<parts).map { part in
                    let target = bodyCount * part / parts
                    var nearest = 0
                    for i in 0..<count where abs(entry(i, in: buf).offset - target) < abs(nearest - target) {
                        nearest = entry(i, in: buf).offset
                    }
                    let before = (0..<count).count { entry($0, in: buf).offset < nearest }
                    return StateCodec.Split(tasksBefore: before, offset: nearest)
                }
            }
        }
    }

    /// Whether `bytes` are a snapshot of an older version, which holds no device names: it is
    /// not damage, only of no use, and the state is rebuilt from the logs without a warning.
    static func isOlderVersion(_ bytes: SharedBytes) -> Bool {
        bytes.withUnsafeBytes { buf in
            buf.count >= headerSize && Array(buf[0..<4]) == FormatConstants.snapshotMagic
                && (1..<FormatConstants.snapshotVersion).contains(buf[4])
        }
    }

    /// Header flags (Spec/log-format.md, "Snapshot file").
    static let tasksInCreationOrder: UInt8 = 1

    /// Decodes a snapshot; any problem is reported as a reason (the caller rebuilds from logs).
    static func decode(_ bytes: SharedBytes) -> Result<TaskState, DecodeError> {
        Result { () throws(DecodeError) -> TaskState in
            let (body, _, index) = try body(of: bytes)
            // A large state is decoded in parts side by side, split where the index says tasks start.
            return try StateCodec.decode(body) { parts in index?.splits(into: parts, bodyCount: body.count) ?? [] }
        }
    }

    /// The body of a snapshot, checked and decompressed, and whether its tasks are listed in
    /// creation order (then it can be read one task at a time in listing order).
    static func body(of bytes: SharedBytes) throws(DecodeError) -> (body: SharedBytes, inCreationOrder: Bool, index: TaskIndex?) {
        let (raw, storedRange, flags): (Int, Range<Int>, UInt8) = try bytes.withDecoding { (buf) throws(DecodeError) in
            var r = ByteReader(buf)
            guard buf.count >= headerSize, Array(buf[0..<4]) == FormatConstants.snapshotMagic else {
                throw DecodeError(offset: 0, reason: "not a snapshot file")
            }
            _ = try r.bytes(4)
            let version = try r.u8()
            guard version == FormatConstants.snapshotVersion else {
                throw DecodeError(offset: 4, reason: "snapshot version \(version) is not supported")
            }
            let flags = try r.u8()
            _ = try r.u16le()
            let raw = Int(try r.u32le())
            let stored = Int(try r.u32le())
            let sum = try r.u32le()
            guard stored <= r.remaining, stored <= raw else { throw r.error("snapshot is truncated") }
            // LZ4 expands at most 255 times; anything claiming more is damage, not a reason
            // to allocate gigabytes.
            guard raw <= max(stored, 1) * 255 else { throw r.error("snapshot claims an impossible size") }
            let payload = try r.bytes(stored)
            guard Checksum.xxh32(payload) == sum else { throw DecodeError(offset: headerSize, reason: "snapshot checksum mismatch") }
            return (raw, headerSize..<(headerSize + stored), flags)
        }
        let inOrder = flags & tasksInCreationOrder != 0
        let index = TaskIndex(in: bytes, bodyEnd: storedRange.upperBound)
        if storedRange.count == raw { return (bytes[storedRange], inOrder, index) }  // read where it lies
        guard let d = bytes.withUnsafeBytes({ LZ4Block.decompress(UnsafeRawBufferPointer(rebasing: $0[storedRange]), rawCount: raw) }) else {
            throw DecodeError(offset: headerSize, reason: "snapshot payload does not decompress")
        }
        return (SharedBytes(d), inOrder, index)
    }
}
