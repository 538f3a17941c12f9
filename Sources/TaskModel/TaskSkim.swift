@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// A saved task stepped over in place, nothing built: its creation time, title and notes (the
/// text unchecked), and where it ends. What a search needs to pass over a task that does not
/// hold its words, in a fraction of the time reading it takes (Spec/log-format.md, "Snapshot
/// file", lays out what is stepped over).
struct TaskSkim {
    var created: Timestamp?
    var title = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    var notes: UnsafeBufferPointer<UInt8>?
    /// The offset just after the task.
    var end = 0
    /// Whether it may name a parent or a dependency: it holds a parent entry with a value,
    /// or a reserved element in its tag set.
    var holdsLink = false

    /// Steps over the task whose live dots start at `offset` in `buf`, a body with `replicas`
    /// replicas. Nil when anything is not as a well-formed task has it (out of bounds, an
    /// unknown replica or form): the task is then read the usual way, which says what is wrong.
    init?(_ buf: UnsafeRawBufferPointer, at offset: Int, replicas: Int) {
        var s = Skimmer(buf, offset, replicas: replicas)
        guard s.dots(), let flag = s.byte(), flag <= 1 else { return nil }
        if flag == 1 {
            guard let time = s.time() else { return nil }
            created = time
        }
        guard s.time() != nil, let present = s.byte() else { return nil }
        if present & 1 != 0 {
            guard s.stamp(), let t = s.text() else { return nil }
            title = t
        }
        if present & 2 != 0 {
            guard s.stamp(), let n = s.optionalText() else { return nil }
            notes = n
        }
        guard s.laterRegisters(present), let linked = s.metaAndTags() else { return nil }
        end = s.at
        holdsLink = linked
    }
}

/// Steps over the parts of a task in a body, checking bounds and replica numbers; each step
/// is false (or nil) when it cannot be taken.
private struct Skimmer {
    let base: UnsafePointer<UInt8>
    let end: Int
    var at: Int
    let replicas: UInt64

    init(_ buf: UnsafeRawBufferPointer, _ offset: Int, replicas: Int) {
        base = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
        end = buf.count
        at = offset
        self.replicas = UInt64(replicas)
    }

    @inline(__always)
    mutating func byte() -> UInt8? {
        guard at < end else { return nil }
        at += 1
        return base[at - 1]
    }

    /// A varint's value. Most are one byte; one of up to eight is decoded from one load.
    @inline(__always)
    mutating func varint() -> UInt64? {
        if at < end, base[at] < 0x80 {
            at += 1
            return UInt64(base[at - 1])
        }
        if end - at >= 8, let (x, length) = ByteReader.varint(inWord: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self)) {
            at += length
            return x
        }
        return longVarint()
    }

    /// A varint read a byte at a time: near the end, or longer than eight bytes.
    mutating func longVarint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while at < end, shift < 64 {
            let b = base[at]
            at += 1
            if shift == 63 && b > 1 { return nil }  // more than 64 bits
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// Steps over `n` varints (at most 8): from one load when they end within eight bytes.
    @inline(__always)
    mutating func skip(_ n: Int) -> Bool {
        if end - at >= 8 {
            var stops = ~UInt64(littleEndian: UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self)) & 0x8080_8080_8080_8080
            if stops.nonzeroBitCount >= n {
                for _ in 1..<n { stops &= stops &- 1 }
                at += (stops.trailingZeroBitCount + 1) / 8
                return true
            }
        }
        for _ in 0..<n where longVarint() == nil { return false }
        return true
    }

    /// A clock time, in range.
    @inline(__always)
    mutating func time() -> Timestamp? {
        guard let physical = varint(), let logical = varint(), physical <= Timestamp.maxPhysical, logical <= UInt32.max
        else { return nil }
        return Timestamp(physical: physical, logical: UInt32(logical))
    }

    /// A stamp: a time, a replica number and a sequence number.
    @inline(__always)
    mutating func stamp() -> Bool { skip(2) && (varint().map { $0 < replicas } ?? false) && skip(1) }

    /// A length, then that many bytes.
    @inline(__always)
    mutating func text() -> UnsafeBufferPointer<UInt8>? {
        guard let n = varint(), n <= UInt64(end - at) else { return nil }
        at += Int(n)
        return UnsafeBufferPointer(start: base + at - Int(n), count: Int(n))
    }

    /// A text that may be missing: nil when it cannot be read, .some(nil) when missing.
    @inline(__always)
    mutating func optionalText() -> UnsafeBufferPointer<UInt8>?? {
        switch byte() {
        case 0: return .some(nil)
        case 1: return text().map { .some($0) }
        default: return nil
        }
    }

    /// Dots: a count, then each dot's replica number and sequence number.
    @inline(__always)
    mutating func dots() -> Bool {
        guard let n = varint(), n <= UInt64(end - at) else { return false }
        for _ in 0..<n {
            guard varint().map({ $0 < replicas }) ?? false, skip(1) else { return false }
        }
        return true
    }

    /// The registers after the notes that `present` marks: done, priority, due and list.
    @inline(__always)
    mutating func laterRegisters(_ present: UInt8) -> Bool {
        if present & 4 != 0 { guard stamp(), byte() != nil else { return false } }
        if present & 8 != 0 { guard stamp(), let p = byte(), p <= 4 else { return false } }
        if present & 16 != 0 {
            guard stamp(), let form = byte(), form <= 2, form == 0 || skip(1) else { return false }
        }
        if present & 32 != 0 { guard stamp(), optionalText() != nil else { return false } }
        return true
    }

    /// The meta entries, the tags with their dots, and the tags' tombstones; whether a parent
    /// entry has a value or a tag is a reserved element (nil when they cannot be read).
    @inline(__always)
    mutating func metaAndTags() -> Bool? {
        var linked = false
        guard let entries = varint(), entries <= UInt64(end - at) else { return nil }
        for _ in 0..<entries {
            guard let key = text(), stamp(), let value = optionalText() else { return nil }
            if value != nil && key.elementsEqual(PlanningKey.parent.utf8) { linked = true }
        }
        guard let tags = varint(), tags <= UInt64(end - at) else { return nil }
        for _ in 0..<tags {
            guard let tag = text(), dots() else { return nil }
            if tag.first == 1 { linked = true }
        }
        return dots() ? linked : nil
    }
}
