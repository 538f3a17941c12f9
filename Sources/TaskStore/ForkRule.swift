@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// The deterministic rule that settles a fork (Spec/sync-folder.md, "Forks"): two branches
/// of one replica's log that share their commits up to sequence number `seq - 1` and differ
/// at `seq`. The branch whose commit at `seq` encodes smaller keeps the replica id; the other
/// branch's commits from `seq` on move to a replica id derived from that commit, renumbered
/// from 1, with the dots they name of their own branch renumbered the same way. Every replica
/// that meets the two branches, in either order, reaches the same result. Values only, no I/O.
@_spi(Engine) public enum ForkRule {
    /// Whether the branch whose commit at the fork point is `a` keeps the replica id over the
    /// branch whose commit there is `b`: `a`'s commit payload (Spec/log-format.md, "Commit
    /// payload", holding just that commit) sorts first, byte by byte.
    public static func keeps(_ a: Commit, over b: Commit) -> Bool {
        CommitCodec.encode([a]).lexicographicallyPrecedes(CommitCodec.encode([b]))
    }

    /// The replica id the losing branch of `replica` moves to: XXH3-128 of the ASCII bytes
    /// `tasklog-fork`, the 16 id bytes, `seq` as 8 big-endian bytes and the payload of the
    /// losing branch's commit at `seq`.
    public static func movedReplica(of replica: ReplicaID, at seq: UInt64, losingCommit: Commit) -> ReplicaID {
        var input = Array("tasklog-fork".utf8) + replica.bytes
        for shift in stride(from: 56, through: 0, by: -8) { input.append(UInt8(truncatingIfNeeded: seq >> UInt64(shift))) }
        input += CommitCodec.encode([losingCommit])
        let hash = ContentHash.xxh3_128(input)
        return ReplicaID(high: hash.high, low: hash.low)
    }

    /// The losing branch's `commits` (of `replica`, from sequence number `seq` on) as commits
    /// of `moved`: sequence numbers shifted to start at 1, times and contents unchanged except
    /// that removals naming dots of `replica` at or after `seq` (the branch's own additions)
    /// name the moved dots instead.
    public static func rehome(_ commits: [Commit], of replica: ReplicaID, from seq: UInt64, as moved: ReplicaID) -> [Commit] {
        func dot(_ d: OperationID) -> OperationID {
            d.replica == replica && d.seq >= seq ? OperationID(replica: moved, seq: d.seq - seq + 1) : d
        }
        return commits.map { c in
            Commit(firstSeq: c.firstSeq - seq + 1, time: c.time, operations: c.operations.map { op in
                switch op {
                case .remove(let t, let observed): .remove(t, observed: observed.map(dot))
                case .removeTag(let t, let tag, let observed): .removeTag(t, tag, observed: observed.map(dot))
                case .add, .set, .addTag, .deviceName, .unknown: op
                }
            })
        }
    }
}

/// A fork that a store settled while integrating (``TaskStore/integrate(_:from:)``).
public struct ResolvedFork: Sendable, Equatable, CustomStringConvertible {
    /// The replica whose log had forked.
    public var replica: ReplicaID
    /// The first sequence number at which the branches differ.
    public var seq: UInt64
    /// Whether the branch this store held keeps the id (otherwise the arriving one does).
    public var keptHeld: Bool
    /// Where the other branch's operations now live.
    public var movedTo: ReplicaID
    /// How many operations moved.
    public var movedOperations: UInt64
    /// Where the other branch came from (a folder file, a peer URL), when the caller knows.
    public var source: String?

    public init(replica: ReplicaID, seq: UInt64, keptHeld: Bool, movedTo: ReplicaID, movedOperations: UInt64) {
        self.replica = replica
        self.seq = seq
        self.keptHeld = keptHeld
        self.movedTo = movedTo
        self.movedOperations = movedOperations
    }

    public var description: String {
        "fork of replica \(replica.hex) at sequence number \(seq) between this store and \(source ?? "the arriving operations") resolved: \(keptHeld ? "the branch held here" : "the arriving branch") keeps the id, the other branch's \(movedOperations) operation(s) continue as replica \(movedTo.hex); nothing was lost (Spec/sync-folder.md, section Forks)"
    }
}

/// What ``TaskStore/integrate(_:from:)`` did.
public struct Integration: Sendable, Equatable {
    /// Operations new to this store (including those of a moved branch).
    public var operations: UInt64
    /// The fork settled on the way, if the commits disagreed with those held.
    public var fork: ResolvedFork?

    public init(operations: UInt64, fork: ResolvedFork? = nil) {
        self.operations = operations
        self.fork = fork
    }
}
