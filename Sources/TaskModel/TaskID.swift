@_spi(Engine) import CRDTCore

/// The identity of a task: `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`.
///
/// `add` generates lowercase UUIDs; other writers (the REST API, imports) may choose any
/// valid id such as `task3`. A lowercase canonical UUID is held as its 128 bits, so the ids
/// of most tasks cost no allocation and hash, compare and encode as two integers.
public struct TaskID: Sendable, Hashable, Comparable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        /// A lowercase canonical UUID, big-endian halves.
        case uuid(UInt64, UInt64)
        /// Any other id (never the text of a lowercase canonical UUID).
        case text(String)
    }

    private let storage: Storage

    /// Validates `rawValue`; nil if it is not a valid task id.
    public init?(_ rawValue: String) {
        guard TaskID.isValid(rawValue) else { return nil }
        self.init(unchecked: rawValue)
    }

    init(unchecked rawValue: String) {
        if let u = TaskID.parseUUID(rawValue) {
            storage = .uuid(u.high, u.low)
        } else {
            storage = .text(rawValue)
        }
    }

    /// The id of a lowercase canonical UUID given as its big-endian halves.
    public init(uuidHigh high: UInt64, low: UInt64) { storage = .uuid(high, low) }

    /// The lowercase canonical UUID text for 16 bytes.
    public init(uuidBytes b: some Collection<UInt8>) {
        precondition(b.count == 16, "a UUID has 16 bytes")
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, byte) in b.enumerated() {
            if i < 8 { h = h << 8 | UInt64(byte) } else { l = l << 8 | UInt64(byte) }
        }
        storage = .uuid(h, l)
    }

    /// The id's text.
    public var rawValue: String {
        switch storage {
        case .text(let s): return s
        case .uuid:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(36)
            appendText(to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Whether the id's UTF-8 text starts with `prefix`, comparing a UUID's digits as they
    /// are produced (no text is built).
    public func textStarts(with prefix: [UInt8]) -> Bool {
        switch storage {
        case .text(let s): return s.utf8.starts(with: prefix)
        case .uuid(let h, let l):
            guard prefix.count <= 36 else { return false }
            var at = 0
            for i in 0..<16 where at < prefix.count {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    guard prefix[at] == 45 else { return false }
                    at += 1
                    if at == prefix.count { break }
                }
                let byte = UInt8(truncatingIfNeeded: (i < 8 ? h : l) >> UInt64(56 - 8 * (i & 7)))
                guard prefix[at] == TaskID.hexDigit(byte >> 4) else { return false }
                at += 1
                if at == prefix.count { break }
                guard prefix[at] == TaskID.hexDigit(byte & 15) else { return false }
                at += 1
            }
            return true
        }
    }

    /// Appends the id's UTF-8 text to `bytes` (no intermediate string for UUIDs).
    public func appendText(to bytes: inout [UInt8]) {
        switch storage {
        case .text(let s): bytes.append(contentsOf: s.utf8)
        case .uuid(let h, let l):
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { out in
                var at = 0
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[at] = 45
                        at += 1
                    }
                    let byte = UInt8(truncatingIfNeeded: (i < 8 ? h : l) >> UInt64(56 - 8 * (i & 7)))
                    out[at] = TaskID.hexDigit(byte >> 4)
                    out[at + 1] = TaskID.hexDigit(byte & 15)
                    at += 2
                }
                bytes.append(contentsOf: out)
            }
        }
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 87 + v }

    /// The big-endian halves of a lowercase canonical UUID id, or nil for any other id.
    public var uuid: (high: UInt64, low: UInt64)? {
        if case .uuid(let h, let l) = storage { return (h, l) }
        return nil
    }

    /// The 16 bytes of a lowercase canonical UUID id, or nil for any other id.
    public var uuidBytes: [UInt8]? {
        guard let (h, l) = uuid else { return nil }
        return (0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? h : l) >> UInt64(56 - 8 * ($0 & 7))) }
    }

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

    /// The halves of `s` if it is a lowercase canonical UUID.
    private static func parseUUID(_ s: String) -> (high: UInt64, low: UInt64)? {
        var s = s
        return s.withUTF8 { u -> (high: UInt64, low: UInt64)? in
            guard u.count == 36, u[8] == 45, u[13] == 45, u[18] == 45, u[23] == 45 else { return nil }
            var h: UInt64 = 0
            var l: UInt64 = 0
            var nibbles = 0
            for (i, c) in u.enumerated() where i != 8 && i != 13 && i != 18 && i != 23 {
                let v: UInt64
                switch c {
                case 48...57: v = UInt64(c - 48)
                case 97...102: v = UInt64(c - 87)
                default: return nil
                }
                if nibbles < 16 { h = h << 4 | v } else { l = l << 4 | v }
                nibbles += 1
            }
            return (h, l)
        }
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

    /// Byte order of the text (ids are ASCII, so this is also their character order). For
    /// two UUIDs it is the order of their bits: hex digits sort as their values.
    public static func < (a: TaskID, b: TaskID) -> Bool {
        if case .uuid(let ah, let al) = a.storage, case .uuid(let bh, let bl) = b.storage {
            return ah != bh ? ah < bh : al < bl
        }
        return a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8)
    }

    public var description: String { rawValue }

    /// A UUID hashes as its two halves (the ids of the state's maps are hashed on every
    /// operation applied); other ids as their text.
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .uuid(let h, let l):
            hasher.combine(h)
            hasher.combine(l)
        case .text(let s): hasher.combine(s)
        }
    }

    /// Dictionaries and sets hash a UUID id with ``IDHash`` (two words, no SipHash); other ids
    /// as their text.
    public func _rawHashValue(seed: Int) -> Int {
        switch storage {
        case .uuid(let h, let l): return IDHash.hash(h, l, seed: seed)
        case .text(let s):
            var hasher = Hasher()
            hasher.combine(seed)
            hasher.combine(s)
            return hasher.finalize()
        }
    }
}
