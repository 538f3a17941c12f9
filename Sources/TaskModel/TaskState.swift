@_spi(Engine) import CRDTCore

/// The materialised task list: the fold of every operation applied so far.
///
/// Applying the same set of operations in any order (respecting each replica's own order)
/// gives equal states, and ``merge(_:)`` of two states equals the state of the union of
/// their operations (Spec/crdt.md, "Materialising").
public struct TaskState: Sendable, Equatable {
    /// The task records, with each task's live membership dots beside its record.
    @_spi(Engine) public internal(set) var records = TaskTable()
    /// Membership dots some remove observed (the tombstones of the membership OR-set).
    @usableFromInline private(set) var membershipTombstones: Set<OperationID> = []
    /// The operations applied, per replica (a contiguous prefix of each replica's log).
    public internal(set) var version = VersionVector()
    /// The greatest operation time applied.
    public internal(set) var latestTime: Timestamp = .zero
    /// Each device's name: a last-writer-wins register per replica, written only by that
    /// replica's own operations and held normalised (``DeviceName/normalised(_:)``).
    @_spi(Engine) public internal(set) var deviceNameRegisters: [ReplicaID: LWWRegister<String>] = [:]

    public init() {}

    /// Applies a commit of `replica`. The commit must be the next one in that replica's log
    /// (`firstSeq == version[replica] + 1`); earlier commits are ignored, as re-delivery is harmless.
    /// - Returns: false if the commit leaves a gap and was not applied.
    @discardableResult
    @_spi(Engine) public mutating func apply(_ commit: Commit, from replica: ReplicaID) -> Bool {
        switch version.extend(replica, from: commit.firstSeq, through: commit.endSeq - 1) {
        case .alreadyHeld: return true
        case .gap: return false
        case .extended: break
        }
        withUnsafePointer(to: commit) { applyOperations(of: $0, from: replica) }
        if commit.time > latestTime { latestTime = commit.time }
        return true
    }

    /// The state holding only `commit`: what its operations say on their own, whatever came
    /// before them in the replica's log (used to show a just-created task without reading the store).
    @_spi(Engine) public static func holding(_ commit: Commit, from replica: ReplicaID) -> TaskState {
        var s = TaskState()
        var seq = commit.firstSeq
        for op in commit.operations {
            s.apply(op, stamp: Stamp(time: commit.time, operation: OperationID(replica: replica, seq: seq)))
            seq += 1
        }
        s.latestTime = commit.time
        return s
    }

    /// Applies one operation regardless of the version vector (used by ``apply(_:from:)``, and
    /// to fold the operations on a few tasks).
    package mutating func apply(_ op: TaskOperation, stamp: Stamp) {
        withUnsafePointer(to: op) { apply(at: $0, stamp: stamp) }
    }

    /// ``apply(_:stamp:)`` for an operation read where it lies: only the parts it needs are
    /// copied out, not the whole operation.
    /// - Parameter hash: `PositionIndex.hash` of the operation's task, when known already.
    mutating func apply(at op: UnsafePointer<TaskOperation>, stamp: Stamp, hash: Int? = nil) {
        switch op.pointee {
        case .add(let id):
            let p = records.positionCreating(id, hash: hash)
            if membershipTombstones.isEmpty || !membershipTombstones.contains(stamp.operation) {
                records.addLive(stamp.operation, at: p)
            }
            records.values[p].noteAdd(stamp.time)
        case .remove(let id, let observed):
            let p = records.positionCreating(id, hash: hash)
            for dot in observed {
                membershipTombstones.insert(dot)
                // A dot named under another task (a malformed remove) is dead all the same,
                // exactly as merge would make it, so arrival order cannot matter.
                if !records.removeLive(dot, at: p) { records.removeLiveAnywhere(dot) }
            }
            records.values[p].touch(stamp.time)
        case .set(let id, let write):
            // A field this build does not know still counts as an operation on the task.
            modify(id, hash, stamp.time) { $0.apply(write, stamp) }
        case .addTag(let id, let tag):
            modify(id, hash, stamp.time) { $0.tags.add(tag, tag: stamp.operation) }
        case .removeTag(let id, let tag, let observed):
            modify(id, hash, stamp.time) { $0.tags.remove(tag, observed: observed) }
        case .deviceName(let name):
            deviceNameRegisters[stamp.operation.replica].assign(DeviceName.normalised(name), at: stamp)
        case .unknown:
            break
        }
    }

    @inline(__always)
    private mutating func modify(_ id: TaskID, _ hash: Int?, _ time: Timestamp, _ body: (inout TaskRecord) -> Void) {
        records.update(id, hash: hash) { Self.update(&$0, time, body) }
    }

    @inline(__always)
    private static func update(_ record: inout TaskRecord, _ time: Timestamp, _ body: (inout TaskRecord) -> Void) {
        body(&record)
        record.touch(time)
    }

    /// Merges another state: the result is the state of the union of both states' operations.
    public mutating func merge(_ other: TaskState) {
        membershipTombstones.formUnion(other.membershipTombstones)
        for q in other.records.indices {
            let p = records.positionCreating(other.records.id(at: q))
            records.values[p].merge(other.records.values[q])  // merging into an empty record gives it
            if let dots = other.records.live[q] { records.addLive(dots, at: p) }
        }
        records.subtractLive(membershipTombstones)
        for (replica, name) in other.deviceNameRegisters { deviceNameRegisters[replica].assign(name.value, at: name.stamp) }
        version.merge(other.version)
        if other.latestTime > latestTime { latestTime = other.latestTime }
    }

    public func merging(_ other: TaskState) -> TaskState {
        var m = self
        m.merge(other)
        return m
    }

    // MARK: Reading

    /// Which task ids are on the list, as an add-wins observed-remove set (built from the
    /// records on each call: for inspection; ``isLive(_:)`` and ``observedDots(of:)`` are cheap).
    @_spi(Engine) public var membership: ORSet<TaskID> {
        var dots: [TaskID: LiveDots] = [:]
        dots.reserveCapacity(records.liveCount)
        for p in records.indices { if let d = records.live[p] { dots[records.id(at: p)] = d } }
        return ORSet(dotsByElement: dots, tombstones: membershipTombstones)
    }

    /// How many tasks are on the list.
    public var liveCount: Int { records.liveCount }

    public func isLive(_ id: TaskID) -> Bool { records.position(of: id).map { records.live[$0] != nil } ?? false }

    /// The membership dots a remove of `id` issued now would observe.
    @_spi(Engine) public func observedDots(of id: TaskID) -> Set<OperationID> {
        records.position(of: id).flatMap { records.live[$0]?.set } ?? []
    }

    /// The task as users see it, or nil if it was never added.
    public func task(_ id: TaskID) -> TaskItem? {
        guard let p = records.position(of: id), records.values[p].createdAt != nil else { return nil }
        return TaskItem(id: id, record: records.values[p], isDeleted: records.live[p] == nil)
    }

    /// Every live task (open and done), unsorted.
    public var liveTasks: [TaskItem] {
        var out: [TaskItem] = []
        out.reserveCapacity(records.liveCount)
        for p in records.indices where records.live[p] != nil {
            out.append(TaskItem(id: records.id(at: p), record: records.values[p], isDeleted: false))
        }
        return out
    }

    /// The name device `replica` last gave itself; nil if it has none (or named itself "").
    public func deviceName(of replica: ReplicaID) -> String? {
        deviceNameRegisters[replica].flatMap { $0.value.isEmpty ? nil : $0.value }
    }

    /// Every task ever added, deleted ones included.
    public var allTasks: [TaskItem] {
        records.indices.compactMap { p -> TaskItem? in
            records.values[p].createdAt == nil
                ? nil : TaskItem(id: records.id(at: p), record: records.values[p], isDeleted: records.live[p] == nil)
        }
    }

    /// Restores the pieces of a state (used by the snapshot decoder: each record's live
    /// dots are in `records`).
    @_spi(Engine) public static func _assemble(
        records: TaskTable, membershipTombstones: Set<OperationID>, version: VersionVector, latestTime: Timestamp,
        deviceNames: [ReplicaID: LWWRegister<String>] = [:]
    ) -> TaskState {
        var s = TaskState()
        s.deviceNameRegisters = deviceNames
        s.records = records
        s.membershipTombstones = membershipTombstones
        s.version = version
        s.latestTime = latestTime
        return s
    }
}

extension TaskRecord {
    mutating func noteAdd(_ t: Timestamp) {
        if createdAt.map({ t < $0 }) ?? true { createdAt = t }
        touch(t)
    }
}
