@_spi(Engine) import CRDTCore

/// A write to one field of a task. Each field is its own last-writer-wins register.
public enum FieldWrite: Sendable, Hashable {
    case title(String)
    case notes(String?)
    case done(Bool)
    /// 0...3 (3 most urgent) or none.
    case priority(UInt8?)
    case due(Due?)
    case list(String?)
    /// One entry of the free string-to-string metadata map; nil removes the entry.
    case meta(key: String, value: String?)
    /// A field number this build does not know (written by a newer version): kept in the log
    /// and relayed verbatim, skipped when materialising. `value` is the encoded value.
    case unknown(field: UInt64, value: [UInt8])
}

/// One operation in a replica's log (Spec/crdt.md, "Operations").
public enum TaskOperation: Sendable, Hashable {
    /// Adds the task to the task list, under this operation's id as its OR-set tag.
    case add(TaskID)
    /// Removes the task: deletes the membership tags the writer had observed.
    case remove(TaskID, observed: [OperationID])
    case set(TaskID, FieldWrite)
    /// Adds a tag to the task, under this operation's id as its OR-set tag.
    case addTag(TaskID, String)
    /// Removes the observed tags of one tag name.
    case removeTag(TaskID, String, observed: [OperationID])
    /// Names the device whose log holds the operation: a last-writer-wins register per replica
    /// (Spec/crdt.md, "Device names"). Read as written; ``DeviceName/normalised(_:)`` bounds it
    /// when it is folded.
    case deviceName(String)
    /// An operation kind this build does not know (written by a newer version): kept in the log
    /// and relayed verbatim, skipped when materialising.
    case unknown(kind: UInt8, body: [UInt8])

    /// The task the operation targets (nil for unknown kinds).
    public var task: TaskID? {
        switch self {
        case .add(let t), .remove(let t, _), .set(let t, _), .addTag(let t, _), .removeTag(let t, _, _):
            t
        case .deviceName, .unknown: nil
        }
    }
}

/// One commit: the operations of one user action (or one import batch), sharing a
/// hybrid-clock time. Operation `i` has sequence number `firstSeq + i`.
public struct Commit: Sendable, Hashable {
    public var firstSeq: UInt64
    public var time: Timestamp
    /// The operations; commits decoded from one log record share one buffer.
    public var operations: ArraySlice<TaskOperation>

    public init(firstSeq: UInt64, time: Timestamp, operations: [TaskOperation]) {
        self.init(firstSeq: firstSeq, time: time, operations: operations[...])
    }

    public init(firstSeq: UInt64, time: Timestamp, operations: ArraySlice<TaskOperation>) {
        self.firstSeq = firstSeq
        self.time = time
        self.operations = operations
    }

    /// One past the last sequence number.
    @inlinable public var endSeq: UInt64 { firstSeq + UInt64(operations.count) }
}
