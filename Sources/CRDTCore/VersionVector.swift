/// For each replica, the highest sequence number up to which this holder has every
/// operation (a contiguous prefix of that replica's log).
///
/// Merging takes the per-replica maximum: commutative, associative and idempotent.
public struct VersionVector: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline var storage: [ReplicaID: UInt64]
    /// The replica last extended and where its entry lies in ``storage``: a replica's commits
    /// are applied one after another, and its entry is then found without hashing. Kept only
    /// while ``storage`` gains and loses no key (an index stays valid that long).
    @usableFromInline var recent: (replica: ReplicaID, index: Dictionary<ReplicaID, UInt64>.Index)?

    /// The nonzero entries.
    @inlinable public var entries: [ReplicaID: UInt64] { storage }

    public init(_ entries: [ReplicaID: UInt64] = [:]) {
        storage = entries.filter { $0.value > 0 }
    }

    /// The highest contiguous sequence number held for `replica` (0: none). Inlinable: it is
    /// read and written for every commit applied.
    @inlinable public subscript(replica: ReplicaID) -> UInt64 {
        get {
            if let r = recent, r.replica == replica { return storage.values[r.index] }
            return storage[replica] ?? 0
        }
        set {
            recent = nil
            storage[replica] = newValue == 0 ? nil : newValue
        }
    }

    /// What ``extend(_:from:through:)`` found.
    public enum Extension: Sendable { case extended, alreadyHeld, gap }

    /// Records `replica`'s operations `first...last` as held if they start right after what
    /// is held, in one lookup (applying a commit does this for every commit), none when the
    /// replica is the one extended last.
    @inlinable public mutating func extend(_ replica: ReplicaID, from first: UInt64, through last: UInt64) -> Extension {
        if let r = recent, r.replica == replica {
            let have = storage.values[r.index]
            if last <= have { return .alreadyHeld }
            guard first == have + 1 else { return .gap }
            storage.values[r.index] = last
            return .extended
        }
        return extendLookingUp(replica, from: first, through: last)
    }

    /// ``extend(_:from:through:)`` for a replica other than the one extended last: looks its
    /// entry up, and remembers where it lies when extended.
    @usableFromInline mutating func extendLookingUp(_ replica: ReplicaID, from first: UInt64, through last: UInt64) -> Extension {
        let have = storage[replica] ?? 0
        if last <= have { return .alreadyHeld }
        guard first == have + 1 else { return .gap }
        storage[replica] = last
        recent = storage.index(forKey: replica).map { (replica, $0) }
        return .extended
    }

    public static func == (a: VersionVector, b: VersionVector) -> Bool { a.storage == b.storage }

    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }

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
