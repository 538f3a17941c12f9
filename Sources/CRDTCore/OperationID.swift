/// The identity of one operation: the replica that made it and its sequence number in
/// that replica's log. Sequence numbers start at 1 and are contiguous per replica.
///
/// Observed-remove sets use operation ids as the unique tags ("dots") of their adds.
public struct OperationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var replica: ReplicaID
    public var seq: UInt64

    @inlinable public init(replica: ReplicaID, seq: UInt64) {
        self.replica = replica
        self.seq = seq
    }

    @inlinable public static func == (a: OperationID, b: OperationID) -> Bool { a.seq == b.seq && a.replica == b.replica }

    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(replica)
        hasher.combine(seq)
    }

    /// Dictionaries and sets (the OR-sets' tags) hash an operation id with ``IDHash``, not SipHash.
    @inlinable public func _rawHashValue(seed: Int) -> Int {
        IDHash.hash(replica.high, replica.low, seq, seed: seed)
    }

    @inlinable public static func < (a: OperationID, b: OperationID) -> Bool {
        a.replica != b.replica ? a.replica < b.replica : a.seq < b.seq
    }

    public var description: String { "\(replica.hex):\(seq)" }
}
