@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// The open tasks of one snapshot sorted for ranking by urgency, kept beside it in
/// `snapshot-plan` (Spec/log-format.md, "Urgency plan"): lists of body offsets, each list one
/// due form and one class of bonuses, sorted by due; and the scheduled tasks by scheduled
/// date or time. A cache: a plan for another snapshot is stale, and damage is found by checksums, of
/// the header at once and of each block of entries when first read.
package final class UrgencyPlan {
    package enum Role: UInt8 { case rank = 0, scheduled = 1 }
    package enum Form: UInt8 { case none = 0, date = 1, instant = 2 }

    /// One list of the plan. A rank list holds the tasks of one due form and one class
    /// (``PlanFacts/rankClass``); a scheduled list the tasks scheduled in one form. Each is
    /// sorted by the instant of its value (``Due/sortKey``), then by offset.
    package struct List: Sendable {
        package let role: Role
        package let form: Form
        package let rankClass: UInt8
        package let count: Int
        /// Where its first entry starts in the file.
        let start: Int
        var entrySize: Int { form == .none ? 4 : 12 }
    }

    static let magic: [UInt8] = Array("TPLN".utf8)
    static let version: UInt8 = 1
    static let blockSize = 4096

    private let file: SharedBytes
    package let lists: [List]
    private let entriesStart: Int
    private let sumsStart: Int
    private var checked: [Bool]

    /// The plan in `file` if it describes the snapshot `tie` names (``tie(snapshot:version:)``);
    /// nil when it describes another or is of another version.
    /// - Throws: when the file is damaged (its header does not check out).
    package init?(_ file: SharedBytes, tie: [UInt8]) throws(DecodeError) {
        let header = try Self.readHeader(file)
        guard header.version == Self.version else { return nil }
        guard header.tie == tie else { return nil }
        self.file = file
        (lists, entriesStart, sumsStart) = (header.lists, header.entriesStart, header.sumsStart)
        checked = Array(repeating: false, count: header.blockCount)
    }

    /// Entry `i` of `list`: its value and body offset (``entries(_:_:)``).
    package func entry(_ list: List, _ i: Int) throws(DecodeError) -> (value: Int64, offset: Int) {
        try entries(list, i..<(i + 1))[0]
    }

    /// The entries `range` of `list`: each one's value (due or scheduled, in days or
    /// milliseconds; 0 in a list of undated tasks) and the body offset of its task.
    package func entries(_ list: List, _ range: Range<Int>) throws(DecodeError) -> [(value: Int64, offset: Int)] {
        guard !range.isEmpty else { return [] }
        let first = try checkedStart(list, range.lowerBound, through: range.upperBound - 1)
        let size = list.entrySize
        return file.withUnsafeBytes { buf in
            range.indices.map { i in
                let at = first + (i - range.lowerBound) * size
                let value = size == 4 ? 0 : Int64(littleEndian: buf.loadUnaligned(fromByteOffset: at, as: Int64.self))
                return (value, Int(UInt32(littleEndian: buf.loadUnaligned(fromByteOffset: at + size - 4, as: UInt32.self))))
            }
        }
    }

    /// Where entry `i` of `list` starts, the blocks up to the end of entry `last` checked.
    private func checkedStart(_ list: List, _ i: Int, through last: Int) throws(DecodeError) -> Int {
        precondition(i >= 0 && i <= last && last < list.count, "entry outside the list")
        let at = list.start + i * list.entrySize
        let end = list.start + (last + 1) * list.entrySize
        for block in ((at - entriesStart) / Self.blockSize)...((end - 1 - entriesStart) / Self.blockSize) {
            try check(block)
        }
        return at
    }

    private func check(_ block: Int) throws(DecodeError) {
        guard !checked[block] else { return }
        let start = entriesStart + block * Self.blockSize
        let matches = file.withUnsafeBytes { buf in
            let sum = UInt32(littleEndian: buf.loadUnaligned(fromByteOffset: sumsStart + 4 * block, as: UInt32.self))
            return Checksum.xxh32(UnsafeRawBufferPointer(rebasing: buf[start..<min(start + Self.blockSize, buf.count)])) == sum
        }
        guard matches else { throw DecodeError(offset: start, reason: "urgency plan block \(block) checksum mismatch") }
        checked[block] = true
    }

    /// The bytes that tie a plan to one snapshot: the snapshot's header, its size, and the
    /// version vector its body starts with.
    package static func tie(snapshot: SharedBytes, version: VersionVector) -> [UInt8] {
        var w = ByteWriter()
        snapshot.withUnsafeBytes { w.append(UnsafeRawBufferPointer(rebasing: $0[0..<min(Snapshot.Layout.headerSize, $0.count)])) }
        w.u64le(UInt64(snapshot.count))
        w.u32le(UInt32(version.entries.count))
        for (replica, seq) in version.sortedEntries {
            w.append(replica.bytes)
            w.u64le(seq)
        }
        return w.bytes
    }
}

extension UrgencyPlan {
    /// What a plan file's header says.
    private struct Header {
        var version: UInt8
        var tie: [UInt8] = []
        var lists: [List] = []
        var blockCount = 0
        var sumsStart = 0
        var entriesStart = 0
    }

    /// Reads and checks the header: magic, checksum, and lists that fill the file exactly.
    private static func readHeader(_ file: SharedBytes) throws(DecodeError) -> Header {
        try file.withDecoding { (buf) throws(DecodeError) -> Header in
            var r = ByteReader(buf)
            guard buf.count >= 8, Array(try r.bytes(4)) == magic else { throw DecodeError(offset: 0, reason: "not an urgency plan") }
            var header = Header(version: try r.u8())
            guard header.version == version else { return header }
            _ = try r.bytes(3)
            header.tie = Array(try r.bytes(try r.count(limit: r.remaining)))
            header.lists = try readLists(&r)
            guard Int(try r.u32le()) == blockSize else { throw r.error("urgency plan block size is not \(blockSize)") }
            header.blockCount = try r.count(limit: r.remaining / 4)
            header.sumsStart = r.offset
            _ = try r.bytes(4 * header.blockCount)
            let sum = Checksum.xxh32(UnsafeRawBufferPointer(rebasing: buf[0..<r.offset]))
            guard try r.u32le() == sum else { throw r.error("urgency plan header checksum mismatch") }
            header.entriesStart = r.offset
            var start = r.offset
            header.lists = header.lists.map { list in
                defer { start += list.count * list.entrySize }
                return List(role: list.role, form: list.form, rankClass: list.rankClass, count: list.count, start: start)
            }
            guard start == buf.count, header.blockCount == (buf.count - header.entriesStart + blockSize - 1) / blockSize else {
                throw r.error("urgency plan lists do not fill the file")
            }
            return header
        }
    }

    /// The directory: each list's role, form, class and count, in strictly increasing order
    /// of role, form and class (their starts are set once the header is read).
    private static func readLists(_ r: inout ByteReader) throws(DecodeError) -> [List] {
        var lists: [List] = []
        for _ in 0..<(try r.count(limit: r.remaining / 8)) {
            let (role, form, rankClass) = (Role(rawValue: try r.u8()), Form(rawValue: try r.u8()), try r.u8())
            guard try r.u8() == 0, let role, let form, rankClass < 16, role == .rank || (form != .none && rankClass == 0) else {
                throw r.error("urgency plan list of unknown kind")
            }
            let list = List(role: role, form: form, rankClass: rankClass, count: Int(try r.u32le()), start: 0)
            if let last = lists.last, (last.role.rawValue, last.form.rawValue, last.rankClass) >= (role.rawValue, form.rawValue, rankClass) {
                throw r.error("urgency plan lists out of order")
            }
            lists.append(list)
        }
        return lists
    }
}
