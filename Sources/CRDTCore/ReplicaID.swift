/// The identity of one replica (one device's store): 128 random bits, generated once.
///
/// Replica ids order by their big-endian bytes; that order breaks ties between
/// last-writer-wins writes with equal timestamps (Spec/crdt.md, "LWW register").
public struct ReplicaID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    @inlinable public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new random replica id.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> ReplicaID {
        ReplicaID(high: generator.next(), low: generator.next())
    }

    /// A new replica id from the system's secure random source.
    public static func random() -> ReplicaID {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    /// Parses the 32-character lowercase (or uppercase) hexadecimal form.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == 32, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }) else {
            return nil
        }
        let s = String(hex)
        guard let h = UInt64(s.prefix(16), radix: 16), let l = UInt64(s.suffix(16), radix: 16) else {
            return nil
        }
        self.init(high: h, low: l)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    public init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == 16, "a replica id has 16 bytes")
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        self.init(high: h, low: l)
    }

    /// 32 lowercase hexadecimal digits.
    public var hex: String { hex16(high) + hex16(low) }

    public var description: String { hex }

    @inlinable public static func == (a: ReplicaID, b: ReplicaID) -> Bool { a.high == b.high && a.low == b.low }

    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
    }

    /// Dictionaries and sets hash a replica id with ``IDHash``, not SipHash.
    @inlinable public func _rawHashValue(seed: Int) -> Int { IDHash.hash(high, low, seed: seed) }

    @inlinable public static func < (a: ReplicaID, b: ReplicaID) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }
}

/// `value` as exactly 16 lowercase hexadecimal digits.
public func hex16(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
}
