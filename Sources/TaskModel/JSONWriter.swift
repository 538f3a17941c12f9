import CRDTCore

/// Writes JSON text directly into a byte buffer (no intermediate objects).
///
/// Each value is written through a ``Cursor`` into room past the end of what is written,
/// sized for its longest form (every string byte escaped). The buffer keeps that room
/// between values, zeroed once when it grows: making room afresh for each value cost more
/// than writing it.
public struct JSONWriter: Sendable {
    /// What has been written.
    public var bytes: [UInt8] {
        get { withBytes { Array($0) } }
        set {
            buffer = newValue
            length = newValue.count
        }
    }

    /// How many bytes have been written.
    public var count: Int { length }

    /// Reads what has been written in place.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }

    /// The written bytes, then room for more.
    private var buffer: [UInt8] = []
    private var length = 0
    private var times = TimeTextCache()

    public init() {}

    /// Drops what has been written, keeping the memory for what comes next.
    public mutating func removeAll() { length = 0 }

    public mutating func raw(_ s: StaticString) {
        guard s.utf8CodeUnitCount > 0 else { return }
        if buffer.count - length >= s.utf8CodeUnitCount {
            // Copied straight in: going through a cursor costs more than a few bytes do.
            buffer.withUnsafeMutableBytes { out in
                s.withUTF8Buffer { out.baseAddress!.advanced(by: length).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            length += s.utf8CodeUnitCount
        } else {
            write(room: s.utf8CodeUnitCount) { $0.raw(s) }
        }
    }

    /// Text that is JSON already, written as it is.
    public mutating func raw(json text: String) { write(room: text.utf8.count) { $0.raw(json: text) } }

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

    /// A saved task in the same form, written from its bytes in place.
    public mutating func task(_ t: borrowing SavedTask) {
        let room = Cursor.room(t)
        write(room: room) { $0.task(t) }
    }

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
        raw("[\n")
        for (i, t) in tasks.enumerated() {
            if i > 0 { raw(",\n") }
            task(t)
        }
        raw("\n]")
    }

    /// Lets `body` write into the room past what is written, making sure there are at least
    /// `room` bytes of it.
    private mutating func write(room: Int, _ body: (inout Cursor) -> Void) {
        if buffer.count - length < room {
            buffer += [UInt8](repeating: 0, count: Swift.max(room, buffer.count, 4096))
        }
        var times = self.times
        let start = length
        length = buffer.withUnsafeMutableBufferPointer { buffer in
            var cursor = Cursor(out: buffer, at: start, times: times)
            body(&cursor)
            times = cursor.times
            return cursor.at
        }
        self.times = times
    }
}

/// What the last times written were, to write them again without working them out: the
/// times of a list mostly fall on few days, and a task's creation and last change are often
/// the same instant.
private struct TimeTextCache: Sendable {
    var dueDays = CivilDayCache()
    var instantDays = CivilDayCache()
    /// The last instant written in full (milliseconds), and its text with the quotes.
    var instant: Int64 = .min
    var instantText: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    static let instantLength = 26
}

/// The last day converted to a civil date.
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
    var times: TimeTextCache

    init(out: UnsafeMutableBufferPointer<UInt8>, at: Int, times: TimeTextCache) {
        self.out = out
        self.at = at
        self.times = times
    }

    // MARK: Room

    /// Room for the longest time or due value: an ISO-8601 instant of a year past 9999 in quotes.
    static let timeRoom = 40

    /// Room for `s` as a JSON string (every byte escaped as `\u00XX`, in quotes).
    static func room(_ s: some JSONText) -> Int { 2 + 6 * s.utf8Count }

    static func room(_ id: TaskID) -> Int { 2 + (id.uuid != nil ? 36 : id.rawValue.utf8.count) }

    /// Room for a task: its keys and punctuation, then each value at its longest.
    static func room<T: ShownTask & ~Copyable>(_ t: borrowing T) -> Int {
        var n = 256 + room(t.id) + room(t.title) + 4 * timeRoom + 20
        if let notes = t.notes { n += room(notes) }
        if let list = t.list { n += room(list) }
        for tag in t.tags { n += 1 + room(tag) }
        t.forEachMeta { k, v in n += 2 + room(k) + room(v) }
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

    mutating func raw(json text: String) {
        var text = text
        text.withUTF8 { copy($0) }
    }

    @inline(__always) mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        (out.baseAddress! + at).update(from: base, count: bytes.count)
        at += bytes.count
    }

    mutating func string(_ s: some JSONText) {
        s.withUTF8Bytes { u in
            byte(34)
            // Copy runs of plain bytes whole; only quotes, backslashes and controls are escaped.
            // Eight bytes are checked at once; a word holding one of those is gone through byte
            // by byte.
            var start = 0
            var i = 0
            let raw = UnsafeRawPointer(u.baseAddress)
            while let raw, i < u.count {
                if i + 8 <= u.count, !Self.needsEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                    i += 8
                    continue
                }
                for j in i..<Swift.min(i + 8, u.count) {
                    let b = u[j]
                    guard b < 32 || b == 34 || b == 92 else { continue }
                    copy(UnsafeBufferPointer(rebasing: u[start..<j]))
                    escape(b)
                    start = j + 1
                }
                i += 8
            }
            copy(UnsafeBufferPointer(rebasing: u[start...]))
            byte(34)
        }
    }

    /// Whether one of the eight bytes of `w` is a control character, a quote or a backslash
    /// (it may say so of a plain byte beside one of those, never miss one).
    @inline(__always) private static func needsEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let control = (w &- ones &* 0x20) & ~w & highs != 0  // a byte below 0x20
        return control || hasZeroByte(w ^ (ones &* 0x22)) || hasZeroByte(w ^ (ones &* 0x5C))
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
            // 8-4-4-4-12 hex digits, eight at a time.
            hex8(UInt32(truncatingIfNeeded: h >> 32))
            byte(45)
            hex8(UInt32(truncatingIfNeeded: h), dashInside: true)
            byte(45)
            hex8(UInt32(truncatingIfNeeded: l >> 32), dashInside: true)
            hex8(UInt32(truncatingIfNeeded: l))
        } else {
            var text = id.rawValue
            text.withUTF8 { copy($0) }
        }
        byte(34)
    }

    /// `v` as eight lowercase hex digits, most significant first, with a dash after the
    /// fourth if `dashInside`. The digits are made in one word: each nibble is spread
    /// into a byte of its own, and ASCII is added to all eight bytes at once.
    @inline(__always) private mutating func hex8(_ v: UInt32, dashInside: Bool = false) {
        var n = UInt64(v)
        n = (n | n << 16) & 0x0000_FFFF_0000_FFFF
        n = (n | n << 8) & 0x00FF_00FF_00FF_00FF
        n = (n | n << 4) & 0x0F0F_0F0F_0F0F_0F0F  // byte k holds nibble k, from the least significant
        let letters = ((n &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101  // 1 where the nibble is 10 or more
        let text = (n &+ 0x3030_3030_3030_3030 &+ letters &* 39).byteSwapped  // '0' + v, or 'a' + v - 10
        let p = UnsafeMutableRawPointer(out.baseAddress! + at)
        if dashInside {
            p.storeBytes(of: UInt32(truncatingIfNeeded: text), as: UInt32.self)
            p.storeBytes(of: 45, toByteOffset: 4, as: UInt8.self)
            p.storeBytes(of: UInt32(truncatingIfNeeded: text >> 32), toByteOffset: 5, as: UInt32.self)
            at += 9
        } else {
            p.storeBytes(of: text, as: UInt64.self)
            at += 8
        }
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
            let c = times.dueDays.civil(days: d)
            guard (0...9999).contains(c.year) else { return string(Due.date(days: d).description) }
            byte(34)
            date(c)
            byte(34)
        case .instant(let ms): instant(milliseconds: ms)
        }
    }

    private mutating func instant(milliseconds ms: Int64) {
        let length = TimeTextCache.instantLength
        if ms == times.instant {
            withUnsafeBytes(of: times.instantText) { copy(UnsafeBufferPointer(rebasing: $0.bindMemory(to: UInt8.self)[..<length])) }
            return
        }
        let c = times.instantDays.civil(days: CivilTime.floorDivide(ms, 86_400_000))
        guard (0...9999).contains(c.year) else { return string(CivilTime.instantString(milliseconds: ms)) }
        let start = at
        defer {
            times.instant = ms
            withUnsafeMutableBytes(of: &times.instantText) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: out.baseAddress! + start, count: length))
            }
        }
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

    mutating func task<T: ShownTask & ~Copyable>(_ t: borrowing T) {
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
        var first = true
        t.forEachMeta { key, value in
            if !first { byte(44) }
            first = false
            string(key)
            byte(58)
            string(value)
        }
        raw("},\"createdAt\":")
        time(t.createdAt)
        raw(",\"updatedAt\":")
        time(t.updatedAt)
        byte(125)
    }
}

/// Text a ``Cursor`` writes as a JSON string: a `String`, or UTF-8 in place.
protocol JSONText {
    var utf8Count: Int { get }
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
}

extension String: JSONText {
    var utf8Count: Int { utf8.count }

    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var s = self
        return s.withUTF8(body)
    }
}

extension UnsafeBufferPointer<UInt8>: JSONText {
    var utf8Count: Int { count }
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(self) }
}

/// A task as its JSON form shows it: an item, or a saved task read in place.
protocol ShownTask: ~Copyable {
    associatedtype Text: JSONText
    var id: TaskID { get }
    var title: Text { get }
    var notes: Text? { get }
    var isDone: Bool { get }
    var completedAt: Timestamp? { get }
    var priority: UInt8? { get }
    var due: Due? { get }
    /// In byte order.
    var tags: [Text] { get }
    var list: Text? { get }
    var createdAt: Timestamp { get }
    var updatedAt: Timestamp { get }
    /// Hands on each meta entry, in byte order of the keys.
    func forEachMeta(_ body: (Text, Text) -> Void)
}

extension TaskItem: ShownTask {
    func forEachMeta(_ body: (String, String) -> Void) {
        guard !meta.isEmpty else { return }
        for key in meta.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { body(key, meta[key]!) }
    }
}

extension SavedTask: ShownTask {
    func forEachMeta(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        for (k, v) in meta { body(k, v) }
    }
}

/// A hybrid-clock time shown to users: its physical part as ISO-8601 UTC with milliseconds.
public func isoTime(_ t: Timestamp) -> String {
    CivilTime.instantString(milliseconds: Int64(clamping: t.physical))
}
