@_spi(Engine) import CRDTCore

/// What the last times written were, to write them again without working them out: the
/// times of a list mostly fall on few days, and a task's creation and last change are often
/// the same instant.
struct TimeTextCache: Sendable {
    var dueDays = CivilDayCache()
    var instantDays = CivilDayCache()
    /// The last instant written in full (milliseconds), and its text with the quotes.
    var instant: Int64 = .min
    var instantText: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    static let instantLength = 26
}

/// The last day converted to a civil date.
struct CivilDayCache: Sendable {
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
struct Cursor {
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
        var n = 320 + room(t.id) + room(t.title) + 4 * timeRoom + 20
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

    /// The planning registers the task holds, as top-level keys (Spec/crdt.md, "JSON task form").
    private mutating func planning<T: ShownTask & ~Copyable>(_ t: borrowing T) {
        guard t.mayHavePlanning else { return }
        if let p = t.metaValue(PlanningKey.parent) {
            raw(",\"parent\":")
            string(p)
        }
        let dependencies = t.dependencyIDs
        if !dependencies.isEmpty {
            raw(",\"depends\":[")
            for (i, d) in dependencies.enumerated() {
                if i > 0 { byte(44) }
                string(d)
            }
            byte(93)
        }
        for (key, name) in Self.datedKeys {
            guard let v = t.metaValue(name) else { continue }
            raw(key)
            string(v)
        }
    }

    /// The planning registers after `depends`, in the order of the form, with their JSON keys.
    private static let datedKeys: [(StaticString, String)] = [
        (",\"wait\":", PlanningKey.wait), (",\"scheduled\":", PlanningKey.scheduled), (",\"start\":", PlanningKey.start),
        (",\"recur\":", PlanningKey.recur), (",\"series\":", PlanningKey.series),
    ]

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
        var first = true
        for tag in t.tags where !tag.withUTF8Bytes({ $0.first == 1 }) {
            if !first { byte(44) }
            first = false
            string(tag)
        }
        if let l = t.list {
            raw("],\"list\":")
            string(l)
        } else {
            raw("],\"list\":null")
        }
        planning(t)
        raw(",\"meta\":{")
        first = true
        t.forEachMeta { key, value in
            guard !key.withUTF8Bytes(PlanningKey.isKey) else { return }
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
