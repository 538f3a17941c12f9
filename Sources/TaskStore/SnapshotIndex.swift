@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// The entries of one of a snapshot's indexes: a magic, a count, and entries of a key and a
/// body offset, 12 bytes each (Spec/log-format.md, "Task index", "Child index"). Each entry
/// is checked against the block table as it is read.
struct IndexEntries: Sendable {
    static let entrySize = 12
    let blocks: SnapshotBlocks
    /// Where the entries lie in the file.
    let entries: Range<Int>

    static func size(_ count: Int) -> Int { 8 + count * entrySize }

    /// Appends an index of `entries`, in the order given.
    static func append(_ magic: [UInt8], _ entries: some Collection<(key: UInt64, offset: UInt32)>, to w: inout ByteWriter) {
        w.append(magic)
        w.u32le(UInt32(entries.count))
        for e in entries {
            w.u64le(e.key)
            w.u32le(e.offset)
        }
    }

    /// The index at `range` of the file; nil when the range is empty (the writer left the
    /// index out).
    /// - Throws: when its first bytes do not check out, or its magic or count is wrong.
    init?(_ magic: [UInt8], _ range: Range<Int>, in blocks: SnapshotBlocks) throws(DecodeError) {
        guard !range.isEmpty else { return nil }
        guard range.count >= 8 else { throw DecodeError(offset: range.lowerBound, reason: "snapshot index is truncated") }
        try blocks.check(range.lowerBound..<(range.lowerBound + 8))
        let (found, count) = blocks.bytes.withUnsafeBytes { buf in
            (Array(buf[range.lowerBound..<(range.lowerBound + 4)]),
             Int(buf.loadUnaligned(fromByteOffset: range.lowerBound + 4, as: UInt32.self).littleEndian))
        }
        guard found == magic, range.count == Self.size(count) else {
            throw DecodeError(offset: range.lowerBound, reason: "snapshot index \(String(decoding: magic, as: UTF8.self)) is malformed")
        }
        self.blocks = blocks
        entries = (range.lowerBound + 8)..<range.upperBound
    }

    var count: Int { entries.count / Self.entrySize }

    /// Entry `i`, its bytes checked.
    func entry(_ i: Int) throws(DecodeError) -> (key: UInt64, offset: Int) {
        let at = entries.lowerBound + i * Self.entrySize
        try blocks.check(at..<(at + Self.entrySize))
        return blocks.bytes.withUnsafeBytes { Self.entry(at: at, in: $0) }
    }

    /// The entry at file offset `at`, unchecked.
    static func entry(at: Int, in buf: UnsafeRawBufferPointer) -> (key: UInt64, offset: Int) {
        (buf.loadUnaligned(fromByteOffset: at, as: UInt64.self).littleEndian,
         Int(buf.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self).littleEndian))
    }

    /// The first entry whose key is not below `key`, or `count`.
    func firstEntry(notBelow key: UInt64) throws(DecodeError) -> Int {
        try firstEntry { (e) throws(DecodeError) in e.key < key }
    }

    /// The first entry for which `isBelow` is false, or `count`: a binary search over entries
    /// for which it is true and then false.
    func firstEntry(where isBelow: ((key: UInt64, offset: Int)) throws(DecodeError) -> Bool) throws(DecodeError) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if try isBelow(entry(mid)) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

/// The task index: where each task starts in the body, in the byte order of the ids' text,
/// each keyed by its text's first 8 bytes. A lookup of an id or a prefix reads only the
/// entries a binary search touches, and the ids at their offsets when keys tie.
struct TaskIndex: Sendable {
    static let magic: [UInt8] = Array("TSIX".utf8)
    let list: IndexEntries

    static func size(_ count: Int) -> Int { IndexEntries.size(count) }

    /// Appends the index of `tasks` (every task of the body and its offset).
    static func append(_ tasks: [(id: TaskID, offset: UInt32)], to w: inout ByteWriter) {
        let keyed = tasks.map { (key: key(of: $0.id), offset: $0.offset, id: $0.id) }
        let sorted = keyed.sorted { a, b in a.key != b.key ? a.key < b.key : a.id < b.id }
        IndexEntries.append(magic, sorted.lazy.map { ($0.key, $0.offset) }, to: &w)
    }

    init?(_ range: Range<Int>, in blocks: SnapshotBlocks) throws(DecodeError) {
        guard let list = try IndexEntries(Self.magic, range, in: blocks) else { return nil }
        self.list = list
    }

    /// The key of a text: its first 8 bytes as a big-endian number, padded with zeros. Keys
    /// order as the texts do, ties aside.
    static func key(of text: some Collection<UInt8>) -> UInt64 {
        var key: UInt64 = 0
        for (i, b) in text.prefix(8).enumerated() { key |= UInt64(b) << UInt64(56 - 8 * i) }
        return key
    }

    static func key(of id: TaskID) -> UInt64 {
        if let (high, _) = id.uuid {
            // The text of a UUID starts with the hex digits of its first 4 bytes.
            var key: UInt64 = 0
            for i in 0..<8 {
                let nibble = UInt8(truncatingIfNeeded: high >> UInt64(60 - 4 * i)) & 15
                key |= UInt64(nibble < 10 ? 48 + nibble : 87 + nibble) << UInt64(56 - 8 * i)
            }
            return key
        }
        return key(of: id.rawValue.utf8)
    }

    /// Where the task with this id starts in the body; nil when the index does not list it.
    func offset(of id: TaskID, in file: SnapshotFile) throws(DecodeError) -> Int? {
        var text: [UInt8] = []
        id.appendText(to: &text)
        let i = try first(notBelow: text, in: file)
        guard i < list.count else { return nil }
        let e = try list.entry(i)
        guard e.key == Self.key(of: text), try self.id(at: e, in: file) == id else { return nil }
        return e.offset
    }

    /// Where the tasks whose id's text starts with `prefix` (not empty) start in the body;
    /// nil when there are more than `limit`.
    func offsets(withPrefix prefix: [UInt8], limit: Int, in file: SnapshotFile) throws(DecodeError) -> [Int]? {
        let key = Self.key(of: prefix)
        let mask: UInt64 = prefix.count >= 8 ? ~0 : ~(~0 >> UInt64(8 * prefix.count))
        var out: [Int] = []
        for i in try first(notBelow: prefix, in: file)..<list.count {
            let e = try list.entry(i)
            guard e.key & mask == key else { break }
            if prefix.count > 8, !(try id(at: e, in: file).textStarts(with: prefix)) { break }
            guard out.count < limit else { return nil }
            out.append(e.offset)
        }
        return out
    }

    /// The first entry whose id's text is not below `text`, or the count.
    private func first(notBelow text: [UInt8], in file: SnapshotFile) throws(DecodeError) -> Int {
        let key = Self.key(of: text)
        return try list.firstEntry { (e) throws(DecodeError) -> Bool in
            // With equal keys, an id not longer than 8 bytes is the text or starts with it.
            if e.key != key || text.count <= 8 { return e.key < key }
            var found: [UInt8] = []
            try id(at: e, in: file).appendText(to: &found)
            return found.lexicographicallyPrecedes(text)
        }
    }

    /// The id at an entry's offset, which must have the entry's key.
    private func id(at e: (key: UInt64, offset: Int), in file: SnapshotFile) throws(DecodeError) -> TaskID {
        let id = try file.taskID(at: e.offset)
        guard Self.key(of: id) == e.key else {
            throw DecodeError(offset: e.offset, reason: "the task index does not match the snapshot's tasks")
        }
        return id
    }

    /// For each of `positions` (body offsets, ascending), the greatest offset the index lists
    /// at or before it, nil when none: where the task holding that byte starts. Reads every
    /// entry.
    func starts(enclosing positions: [Int]) throws(DecodeError) -> [Int?] {
        guard let last = positions.last else { return [] }
        // Each listed offset is noted at the first position at or after it; the start
        // enclosing a position is then the greatest noted at or before it.
        var noted = [Int](repeating: -1, count: positions.count)
        for i in 0..<list.count {
            let offset = try list.entry(i).offset
            guard offset <= last else { continue }
            var (low, high) = (0, positions.count)
            while low < high {
                let mid = (low + high) / 2
                if positions[mid] < offset { low = mid + 1 } else { high = mid }
            }
            noted[low] = max(noted[low], offset)
        }
        var greatest = -1
        return noted.map { greatest = max(greatest, $0); return greatest < 0 ? nil : greatest }
    }

    /// Offsets where `parts` parts of a body of `bodyCount` bytes could start after the
    /// first, each with how many tasks the index lists before it: the listed offsets
    /// nearest the even splits of the bytes. The decoder checks that each is where that
    /// many tasks end.
    /// - Precondition: every block of the file is checked.
    func splits(into parts: Int, bodyCount: Int) -> [StateCodec.Split] {
        guard parts > 1 else { return [] }
        return list.blocks.bytes.withUnsafeBytes { buf in
            let offsets = stride(from: list.entries.lowerBound, to: list.entries.upperBound, by: IndexEntries.entrySize).lazy.map {
                IndexEntries.entry(at: $0, in: buf).offset
            }
            return (1..<parts).map { part in
                let target = bodyCount * part / parts
                var nearest = 0
                for offset in offsets where abs(offset - target) < abs(nearest - target) { nearest = offset }
                return StateCodec.Split(tasksBefore: offsets.count { $0 < nearest }, offset: nearest)
            }
        }
    }
}

/// The child index: the tasks whose parent register names a task, keyed by the XXH3-64 of
/// the parent's id text, so that the subtasks of a task are found without reading every task.
struct ChildIndex: Sendable {
    static let magic: [UInt8] = Array("TSCX".utf8)
    let list: IndexEntries

    static func size(_ count: Int) -> Int { IndexEntries.size(count) }

    static func key(of parent: TaskID) -> UInt64 {
        var text: [UInt8] = []
        parent.appendText(to: &text)
        return text.withUnsafeBytes { Checksum.xxh3($0) }
    }

    /// Appends the index of `children` (each child's parent key and offset).
    static func append(_ children: [(key: UInt64, offset: UInt32)], to w: inout ByteWriter) {
        IndexEntries.append(magic, children.sorted { ($0.key, $0.offset) < ($1.key, $1.offset) }, to: &w)
    }

    init?(_ range: Range<Int>, in blocks: SnapshotBlocks) throws(DecodeError) {
        guard let list = try IndexEntries(Self.magic, range, in: blocks) else { return nil }
        self.list = list
    }

    /// Where the tasks listed under `parent`'s key start in the body (each to be read to see
    /// whether its parent is `parent`).
    func offsets(of parent: TaskID) throws(DecodeError) -> [Int] {
        let key = Self.key(of: parent)
        var out: [Int] = []
        var i = try list.firstEntry(notBelow: key)
        while i < list.count {
            let e = try list.entry(i)
            guard e.key == key else { break }
            out.append(e.offset)
            i += 1
        }
        return out
    }
}
