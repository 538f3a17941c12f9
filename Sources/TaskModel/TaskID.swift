/// The identity of a task: `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`.
///
/// `add` generates lowercase UUIDs; other writers (the REST API, imports) may choose any
/// valid id such as `task3`.
public struct TaskID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Validates `rawValue`; nil if it is not a valid task id.
    public init?(_ rawValue: String) {
        guard TaskID.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    init(unchecked rawValue: String) { self.rawValue = rawValue }

    public static func isValid(_ s: String) -> Bool {
        var n = 0
        for b in s.utf8 {
            let alnum = (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122)
            if n == 0 ? !alnum : !(alnum || b == 46 || b == 95 || b == 45) { return false }
            n += 1
            if n > 128 { return false }
        }
        return n > 0
    }

    /// A new random (version 4) UUID in lowercase canonical form.
    public static func random<G: RandomNumberGenerator>(using g: inout G) -> TaskID {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return TaskID(uuidBytes: bytes)
    }

    public static func random() -> TaskID {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    /// The 16 bytes of a lowercase canonical UUID id, or nil for any other id.
    public var uuidBytes: [UInt8]? {
        let u = Array(rawValue.utf8)
        guard u.count == 36, u[8] == 45, u[13] == 45, u[18] == 45, u[23] == 45 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var hi: UInt8? = nil
        for (i, c) in u.enumerated() where i != 8 && i != 13 && i != 18 && i != 23 {
            let v: UInt8
            switch c {
            case 48...57: v = c - 48
            case 97...102: v = c - 87
            default: return nil
            }
            if let h = hi { out.append(h << 4 | v); hi = nil } else { hi = v }
        }
        return out
    }

    /// The lowercase canonical UUID text for 16 bytes.
    public init(uuidBytes b: some Collection<UInt8>) {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var s: [UInt8] = []
        s.reserveCapacity(36)
        for (i, byte) in b.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { s.append(45) }
            s.append(digits[Int(byte >> 4)])
            s.append(digits[Int(byte & 15)])
        }
        rawValue = String(decoding: s, as: UTF8.self)
    }

    /// Byte order (ids are ASCII, so this is also their character order).
    public static func < (a: TaskID, b: TaskID) -> Bool { a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8) }
    public var description: String { rawValue }
}
