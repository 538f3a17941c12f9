import CRDTCore

/// Writes JSON text directly into a byte buffer (no intermediate objects).
///
/// Each value is written through a ``Cursor`` into room set aside at the end of ``bytes``
/// for its longest form (every string byte escaped), and the unused room is dropped: one
/// growth of the buffer per task, not one per piece.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8] = []
    private var days = CivilDayCache()

    public init() {}

    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ s: String) { write(room: Cursor.room(s)) { $0.string(s) } }

    /// A task id as a JSON string (ids never need escaping).
    public mutating func id(_ id: TaskID) { write(room: Cursor.room(id)) { $0.id(id) } }

    public mutating func optionalString(_ s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    public mutating func number(_ v: Int64) { write(room: 20) { $0.number(v) } }
    public mutating func number(_ v: UInt64) { write(room: 20) { $0.number(v) } }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }

    /// A hybrid-clock time as a JSON string: ISO-8601 UTC with milliseconds, written digit by
    /// digit (the hot path of listing thousands of tasks).
    public mutating func time(_ t: Timestamp) { write(room: Cursor.timeRoom) { $0.time(t) } }

    /// A due date or instant as a JSON string, in the form of ``Due/description``.
    public mutating func due(_ d: Due) { write(room: Cursor.timeRoom) { $0.due(d) } }

    /// The task in the JSON form of the CLI contract (keys in the contract's order).
    public mutating func task(_ t: TaskItem) { write(room: Cursor.room(t)) { $0.task(t) } }

    /// One entry of a changes list: `{"id":…,"deleted":…,"task":{…}` followed by `}`, or
    /// left open (`closed: false`) for the caller to add keys.
    public mutating func change(_ t: TaskItem, closed: Bool = true) {
        raw("{\"id\":")
        id(t.id)
        raw(",\"deleted\":")
        bool(t.isDeleted)
        raw(",\"task\":")
        task(t)
        if closed { raw("}") }
    }

    /// A JSON array of tasks, one per line.
    public mutating func taskArray(_ tasks: [TaskItem]) {
        if tasks.isEmpty { raw("[]"); return }
        bytes.reserveCapacity(bytes.count + tasks.count * 320)
        raw("[\n")
        for (i, t) in tasks.enumerated() {
            if i > 0 { raw(",\n") }
            task(t)
        }
        raw("\n]")
    }

    /// Sets `room` bytes aside at the end of ``bytes``, lets `body` write into them and drops
    /// what it left unused.
    private mutating func write(room: Int, _ body: (inout Cursor) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: room))
        var days = self.days
        let end = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = Cursor(out: buffer, at: start, days: days)
            body(&cursor)
            days = cursor.days
            return cursor.at
        }
        self.days = days
        bytes.removeSubrange(end...)
    }
}

/// The last day converted to a civil date: the times of a list mostly fall on few days.
private struct CivilDayCache: Sendable {
    var day: Int64 = .min
    var civil = (year: 0, month: 0, day: 0)

    mutating func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        if days != day {
            day = days
            civil = CivilTime.civil(days: days)
        }
        return civil
    }
}

/// Writes JSON into room set aside for it (``JSONWriter``): the caller sizes the room with
/// the `room` functions, so no write checks for space.
private struct Cursor {
    let out: UnsafeMutableBufferPointer<UInt8>
    var at: Int
    var days: CivilDayCache

    init(out: UnsafeMutableBufferPointer<UInt8>, at: Int, days: CivilDayCache) {
        self.out = out
        self.at = at
        self.days = days
    }

    // MARK: Room

    /// Room for the longest time or due value: an ISO-8601 instant of a year past 9999 in quotes.
    static let timeRoom = 40

    /// Room for `s` as a JSON string (every byte escaped as `\u00XX`, in quotes).
    static func room(_ s: String) -> Int { 2 + 6 * s.utf8.count }

    static func room(_ id: TaskID) -> Int { 2 + (id.uuid != nil ? 36 : id.rawValue.utf8.count) }

    /// Room for a task: its keys and punctuation, then each value at its longest.
    static func room(_ t: TaskItem) -> Int {
        var n = 256 + room(t.id) + room(t.title) + 4 * timeRoom + 20
        if let notes = t.notes { n += room(notes) }
        if let list = t.list { n += room(list) }
        for tag in t.tags { n += 1 + room(tag) }
        for (k, v) in t.meta { n += 2 + room(k) + room(v) }
        return n
    }

    // MARK: Writing

    @inline(__always) mutating func byte(_ b: UInt8) {
        out[at] = b
        at += 1
    }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { copy($0) }
    }

    @inline(__always) mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        (out.baseAddress! + at).update(from: base, count: bytes.count)
        at += bytes.count
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { u in
            byte(34)
            // Copy runs of plain bytes whole; only quotes, backslashes and controls are escaped.
            var start = 0
            for i in 0..<u.count {
                let b = u[i]
                guard b < 32 || b == 34 || b == 92 else { continue }
                copy(UnsafeBufferPointer(rebasing: u[start..<i]))
                escape(b)
                start = i + 1
            }
            copy(UnsafeBufferPointer(rebasing: u[start...]))
            byte(34)
        }
    }

    private mutating func escape(_ b: UInt8) {
        byte(92)
        switch b {
        case 34: byte(34)
        case 92: byte(92)
        case 10: byte(110)
        case 13: byte(114)
        case 9: byte(116)
        default:
            byte(117)
            byte(48)
            byte(48)
            byte(Self.hex(b >> 4))
            byte(Self.hex(b & 15))
        }
    }

    @inline(__always) private static func hex(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }

    mutating func id(_ id: TaskID) {
        byte(34)
        if let (h, l) = id.uuid {
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { byte(45) }
                let b = UInt8(truncatingIfNeeded: (i < 8 ? h : l) >> UInt64(56 - 8 * (i & 7)))
                byte(Self.hex(b >> 4))
                byte(Self.hex(b & 15))
            }
        } else {
            var text = id.rawValue
            text.withUTF8 { copy($0) }
        }
        byte(34)
    }

    mutating func number(_ v: Int64) {
        if v < 0 { byte(45) }
        number(v.magnitude)
    }

    mutating func number(_ v: UInt64) {
        var digits = 1
        var rest = v / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var k = at + digits - 1
        var x = v
        repeat {
            out[k] = UInt8(truncatingIfNeeded: 48 + x % 10)
            x /= 10
            k -= 1
        } while x > 0
        at += digits
    }

    mutating func time(_ t: Timestamp) { instant(milliseconds: Int64(clamping: t.physical)) }

    mutating func due(_ d: Due) {
        switch d {
        case .date(let d):
            let c = days.civil(days: d)
            guard (0...9999).contains(c.year) else { return string(Due.date(days: d).description) }
            byte(34)
            date(c)
            byte(34)
        case .instant(let ms): instant(milliseconds: ms)
        }
    }

    private mutating func instant(milliseconds ms: Int64) {
        let c = days.civil(days: CivilTime.floorDivide(ms, 86_400_000))
        guard (0...9999).contains(c.year) else { return string(CivilTime.instantString(milliseconds: ms)) }
        let rem = Int(CivilTime.floorRemainder(ms, 86_400_000))
        byte(34)
        date(c)
        byte(84)
        digits(rem / 3_600_000, 2)
        byte(58)
        digits(rem / 60_000 % 60, 2)
        byte(58)
        digits(rem / 1000 % 60, 2)
        byte(46)
        digits(rem % 1000, 3)
        byte(90)
        byte(34)
    }

    /// `YYYY-MM-DD`.
    private mutating func date(_ c: (year: Int, month: Int, day: Int)) {
        digits(c.year, 4)
        byte(45)
        digits(c.month, 2)
        byte(45)
        digits(c.day, 2)
    }

    /// `value` in exactly `count` digits.
    @inline(__always) private mutating func digits(_ value: Int, _ count: Int) {
        var v = value
        var k = at + count - 1
        while k >= at {
            out[k] = UInt8(truncatingIfNeeded: 48 + v % 10)
            v /= 10
            k -= 1
        }
        at += count
    }

    mutating func task(_ t: TaskItem) {
        raw("{\"id\":")
        id(t.id)
        raw(",\"title\":")
        string(t.title)
        if let n = t.notes {
            raw(",\"notes\":")
            string(n)
        } else {
            raw(",\"notes\":null")
        }
        if let c = t.completedAt {
            raw(t.isDone ? ",\"done\":true,\"completedAt\":" : ",\"done\":false,\"completedAt\":")
            time(c)
        } else {
            raw(t.isDone ? ",\"done\":true,\"completedAt\":null" : ",\"done\":false,\"completedAt\":null")
        }
        if let p = t.priority {
            raw(",\"priority\":")
            number(UInt64(p))
        } else {
            raw(",\"priority\":null")
        }
        if let d = t.due {
            raw(",\"due\":")
            due(d)
        } else {
            raw(",\"due\":null")
        }
        raw(",\"tags\":[")
        for (i, tag) in t.tags.enumerated() {
            if i > 0 { byte(44) }
            string(tag)
        }
        if let l = t.list {
            raw("],\"list\":")
            string(l)
            raw(",\"meta\":{")
        } else {
            raw("],\"list\":null,\"meta\":{")
        }
        for (i, key) in t.meta.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if i > 0 { byte(44) }
            string(key)
            byte(58)
            string(t.meta[key]!)
        }
        raw("},\"createdAt\":")
        time(t.createdAt)
        raw(",\"updatedAt\":")
        time(t.updatedAt)
        byte(125)
    }
}

/// A hybrid-clock time shown to users: its physical part as ISO-8601 UTC with milliseconds.
public func isoTime(_ t: Timestamp) -> String {
    CivilTime.instantString(milliseconds: Int64(clamping: t.physical))
}
