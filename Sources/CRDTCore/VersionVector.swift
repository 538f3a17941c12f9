/// For each replica, the highest sequence number up to which this holder has every
/// operation (a contiguous prefix of that replica's log).
///
/// Merging takes the per-replica maximum: commutative, associative and idempotent.
public struct VersionVector: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline var storage: [ReplicaID: UInt64]

    /// The nonzero entries.
    @inlinable public var entries: [ReplicaID: UInt64] { storage }

    public init(_ entries: [ReplicaID: UInt64] = [:]) {
        storage = entries.filter { $0.value > 0 }
    }

    /// The highest contiguous sequence number held for `replica` (0: none). Inlinable: it is
    /// read and written for every commit applied.
    @inlinable public subscript(replica: ReplicaID) -> UInt64 {
        get { storage[replica] ?? 0 }
        set { storage[replica] = newValue == 0 ? nil : newValue }
    }

    /// Whether this vector holds every operation `other` holds.
    public func includes(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { self[$0.key] >= $0.value }
    }

    /// Whether the operation is covered by this vector.
    public func contains(_ operation: OperationID) -> Bool {
        operation.seq <= self[operation.replica]
    }

    public mutating func merge(_ other: VersionVector) {
        for (r, s) in other.storage where s > self[r] { self[r] = s }
    }

    public func merging(_ other: VersionVector) -> VersionVector {
        var m = self
        m.merge(other)
        return m
    }

    /// Total number of operations covered.
    public var operationCount: UInt64 { entries.values.reduce(0, +) }

    /// Replicas in ascending id order.
    public var sortedEntries: [(replica: ReplicaID, seq: UInt64)] {
        entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public var description: String {
        "{" + sortedEntries.map { "\($0.replica.hex):\($0.seq)" }.joined(separator: ", ") + "}"
    }
}
