/// A hybrid logical clock reading: wall-clock milliseconds plus a logical counter.
///
/// Timestamps order first by `physical`, then by `logical`. Within one replica every
/// timestamp it issues is greater than every timestamp it has issued or observed before
/// (Spec/crdt.md, "Hybrid logical clock").
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var physical: UInt64
    /// Breaks ties between readings within the same millisecond.
    public var logical: UInt32

    @inlinable public init(physical: UInt64, logical: UInt32 = 0) {
        self.physical = physical
        self.logical = logical
    }

    public static let zero = Timestamp(physical: 0, logical: 0)

    /// The largest physical time the format carries: 2^48 - 1 ms, in the year 10889.
    /// Decoders treat anything later as damage, so a wild clock cannot poison others.
    public static let maxPhysical: UInt64 = (1 << 48) - 1

    @inlinable public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.physical != b.physical ? a.physical < b.physical : a.logical < b.logical
    }

    /// The smallest timestamp greater than this one.
    public var successor: Timestamp {
        logical == .max ? Timestamp(physical: physical + 1, logical: 0)
            : Timestamp(physical: physical, logical: logical + 1)
    }

    public var description: String { "\(physical).\(logical)" }
}
