import CRDTCore

/// Writes JSON text directly into a byte buffer (no intermediate objects).
public struct JSONWriter: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ s: String) {
        bytes.append(34)
        for b in s.utf8 {
            switch b {
            case 34: bytes.append(92); bytes.append(34)
            case 92: bytes.append(92); bytes.append(92)
            case 10: bytes.append(92); bytes.append(110)
            case 13: bytes.append(92); bytes.append(114)
            case 9: bytes.append(92); bytes.append(116)
            case 0..<32:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [92, 117, 48, 48, hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: bytes.append(b)
            }
        }
        bytes.append(34)
    }

    public mutating func optionalString(_ s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    public mutating func number(_ v: Int64) { bytes.append(contentsOf: String(v).utf8) }
    public mutating func number(_ v: UInt64) { bytes.append(contentsOf: String(v).utf8) }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }

    /// A hybrid-clock time as a JSON string: ISO-8601 UTC with milliseconds, written digit by
    /// digit (the hot path of listing thousands of tasks).
    public mutating func time(_ t: Timestamp) {
        let ms = Int64(clamping: t.physical)
        let days = ms / 86_400_000
        let c = CivilTime.civil(days: days)
        guard c.year >= 0 && c.year <= 9999 else {
            string(CivilTime.instantString(milliseconds: ms))
            return
        }
        let rem = Int(ms - days * 86_400_000)
        func digits(_ v: Int, _ n: Int) {
            var div = 1
            for _ in 1..<n { div *= 10 }
            var v = v
            for _ in 0..<n {
                bytes.append(UInt8(48 + v / div))
                v %= div
                div /= 10
            }
        }
        bytes.append(34)
        digits(c.year, 4); bytes.append(45); digits(c.month, 2); bytes.append(45); digits(c.day, 2)
        bytes.append(84)
        digits(rem / 3_600_000, 2); bytes.append(58); digits(rem / 60_000 % 60, 2); bytes.append(58)
        digits(rem / 1000 % 60, 2); bytes.append(46); digits(rem % 1000, 3)
        bytes.append(90)
        bytes.append(34)
    }

    /// The task in the JSON form of the CLI contract (keys in the contract's order).
    public mutating func task(_ t: TaskItem) {
        raw("{\"id\":")
        string(t.id.rawValue)
        raw(",\"title\":")
        string(t.title)
        raw(",\"notes\":")
        optionalString(t.notes)
        raw(",\"done\":")
        bool(t.isDone)
        raw(",\"completedAt\":")
        if let c = t.completedAt { time(c) } else { raw("null") }
        raw(",\"priority\":")
        if let p = t.priority { number(Int64(p)) } else { raw("null") }
        raw(",\"due\":")
        optionalString(t.due?.description)
        raw(",\"tags\":[")
        for (i, tag) in t.tags.enumerated() {
            if i > 0 { raw(",") }
            string(tag)
        }
        raw("],\"list\":")
        optionalString(t.list)
        raw(",\"meta\":{")
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
        string(t.id.rawValue)
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
