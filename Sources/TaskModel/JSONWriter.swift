import CRDTCore

/// Writes JSON text directly into a byte buffer (no intermediate objects).
public struct JSONWriter: Sendable {
    public var bytes: [UInt8] = []
    /// The last day converted to a civil date: the times of a list mostly fall on few days.
    private var lastDay: Int64 = .min
    private var lastCivil = (year: 0, month: 0, day: 0)

    public init() {}

    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { u in
            bytes.append(34)
            // Copy runs of plain bytes whole; only quotes, backslashes and controls are escaped.
            var start = 0
            for i in 0..<u.count {
                let b = u[i]
                guard b < 32 || b == 34 || b == 92 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[start..<i]))
                escape(b)
                start = i + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[start...]))
            bytes.append(34)
        }
    }

    private mutating func escape(_ b: UInt8) {
        switch b {
        case 34: bytes.append(92); bytes.append(34)
        case 92: bytes.append(92); bytes.append(92)
        case 10: bytes.append(92); bytes.append(110)
        case 13: bytes.append(92); bytes.append(114)
        case 9: bytes.append(92); bytes.append(116)
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [92, 117, 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
        }
    }

    /// A task id as a JSON string (ids never need escaping).
    public mutating func id(_ id: TaskID) {
        bytes.append(34)
        id.appendText(to: &bytes)
        bytes.append(34)
    }

    public mutating func optionalString(_ s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    public mutating func number(_ v: Int64) {
        if (0...9).contains(v) { bytes.append(UInt8(48 + v)) } else { bytes.append(contentsOf: String(v).utf8) }
    }
    public mutating func number(_ v: UInt64) { bytes.append(contentsOf: String(v).utf8) }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }

    /// A hybrid-clock time as a JSON string: ISO-8601 UTC with milliseconds, written digit by
    /// digit (the hot path of listing thousands of tasks).
    public mutating func time(_ t: Timestamp) { instant(milliseconds: Int64(clamping: t.physical)) }

    /// A due date or instant as a JSON string, in the form of ``Due/description``.
    public mutating func due(_ d: Due) {
        switch d {
        case .date(let days):
            let c = civil(days: days)
            guard (0...9999).contains(c.year) else { return string(d.description) }
            fixed(12) { out in
                out[0] = 34
                Self.date(c, into: out)
                out[11] = 34
            }
        case .instant(let ms): instant(milliseconds: ms)
        }
    }

    private mutating func instant(milliseconds ms: Int64) {
        let c = civil(days: CivilTime.floorDivide(ms, 86_400_000))
        guard (0...9999).contains(c.year) else { return string(CivilTime.instantString(milliseconds: ms)) }
        let rem = Int(CivilTime.floorRemainder(ms, 86_400_000))
        fixed(26) { out in
            out[0] = 34
            Self.date(c, into: out)
            out[11] = 84
            Self.digits(rem / 3_600_000, 2, out, at: 12)
            out[14] = 58
            Self.digits(rem / 60_000 % 60, 2, out, at: 15)
            out[17] = 58
            Self.digits(rem / 1000 % 60, 2, out, at: 18)
            out[20] = 46
            Self.digits(rem % 1000, 3, out, at: 21)
            out[24] = 90
            out[25] = 34
        }
    }

    private mutating func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        if days != lastDay {
            lastDay = days
            lastCivil = CivilTime.civil(days: days)
        }
        return lastCivil
    }

    /// `YYYY-MM-DD` at offset 1 of `out`.
    private static func date(_ c: (year: Int, month: Int, day: Int), into out: UnsafeMutableBufferPointer<UInt8>) {
        digits(c.year, 4, out, at: 1)
        out[5] = 45
        digits(c.month, 2, out, at: 6)
        out[8] = 45
        digits(c.day, 2, out, at: 9)
    }

    @inline(__always)
    private static func digits(_ value: Int, _ count: Int, _ out: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        var v = value
        var k = start + count - 1
        while k >= start {
            out[k] = UInt8(truncatingIfNeeded: 48 + v % 10)
            v /= 10
            k -= 1
        }
    }

    /// Appends `count` bytes filled in by `body` (one append for the whole piece).
    @inline(__always)
    private mutating func fixed(_ count: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { out in
            body(out)
            bytes.append(contentsOf: UnsafeBufferPointer(out))
        }
    }

    /// The task in the JSON form of the CLI contract (keys in the contract's order).
    public mutating func task(_ t: TaskItem) {
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
            number(Int64(p))
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
            if i > 0 { raw(",") }
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
            if i > 0 { raw(",") }
            string(key)
            raw(":")
            string(t.meta[key]!)
        }
        raw("},\"createdAt\":")
        time(t.createdAt)
        raw(",\"updatedAt\":")
        time(t.updatedAt)
        raw("}")
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
        bytes.reserveCapacity(bytes.count + tasks.count * 320)
        raw("[\n")
        for (i, t) in tasks.enumerated() {
            if i > 0 { raw(",\n") }
            task(t)
        }
        raw("\n]")
    }
}

/// A hybrid-clock time shown to users: its physical part as ISO-8601 UTC with milliseconds.
public func isoTime(_ t: Timestamp) -> String {
    CivilTime.instantString(milliseconds: Int64(clamping: t.physical))
}
