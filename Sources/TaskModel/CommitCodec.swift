@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// Encodes commits into the payload of a commits record and back
/// (Spec/log-format.md, "Commit payload").
@_spi(Engine) public enum CommitCodec {
    enum Kind {
        static let add: UInt8 = 1
        static let remove: UInt8 = 2
        static let set: UInt8 = 3
        static let addTag: UInt8 = 4
        static let removeTag: UInt8 = 5
        /// Kinds from this value up are length-prefixed extensions a reader may skip.
        static let firstExtension: UInt8 = 8
        /// An extension kind: the name of the device whose log holds it.
        static let deviceName: UInt8 = 9
    }

    /// The header byte of a device name; the same kind with another low nibble is unknown.
    static let deviceNameHeader: UInt8 = Kind.deviceName << 4

    /// The header of a placeholder operation standing for one that was lost to damage (an
    /// extension kind with an empty body: it has no effect, and keeps sequence numbers unique).
    public static let lostOperationHeader: UInt8 = Kind.firstExtension << 4

    enum Field {
        static let title: UInt64 = 0
        static let notes: UInt64 = 1
        static let done: UInt64 = 2
        static let priority: UInt64 = 3
        static let due: UInt64 = 4
        static let list: UInt64 = 5
        static let meta: UInt64 = 6
        /// A field nibble of 15 means the field number follows as a uvarint.
        static let extended: UInt8 = 15
    }

    enum ValueTag {
        static let none: UInt8 = 0
        static let falseValue: UInt8 = 1
        static let trueValue: UInt8 = 2
        static let uint: UInt8 = 3
        static let string: UInt8 = 4
        static let date: UInt8 = 5
        static let instant: UInt8 = 6
        static let smallUInt: UInt8 = 0x10  // 0x10...0x1F: the value tag - 0x10
        static let firstOpaque: UInt8 = 0x20  // uvarint length + bytes
    }

    // MARK: Encoding

    /// The payload for `commits`, which must be consecutive, in increasing clock order and
    /// at most ``Timestamp/maxPhysical`` (a later time stops the process).
    public static func encode(_ commits: [Commit]) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + commits.count * 24)
        encode(commits, into: &w)
        return w.bytes
    }

    /// Appends the payload for `commits` to `w`.
    public static func encode(_ commits: [Commit], into w: inout ByteWriter) { encodeAny(commits, into: &w) }

    /// The bytes of the payload for `commits`, counted without writing it.
    public static func payloadSize(of commits: some Collection<Commit>) -> Int {
        var counter = ByteCounter()
        encodeAny(commits, into: &counter)
        return counter.count
    }

    /// Appends the payload of one commit to `w` (writers reuse one buffer for every commit).
    /// A commit of a few operations, the common case, finds its task table by comparing each
    /// operation's task with the earlier ones, and allocates nothing.
    public static func encode(_ commit: Commit, into w: inout ByteWriter) {
        guard commit.operations.count <= 16 else { return encodeAny(CollectionOfOne(commit), into: &w) }
        commit.operations.withUnsafeBufferPointer { ops in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: ops.count) { taskIndex in
                var distinct = 0
                for i in ops.indices {
                    guard let t = ops[i].task else {
                        taskIndex[i] = 0
                        continue
                    }
                    if let j = (0..<i).first(where: { ops[$0].task == t }) {
                        taskIndex[i] = taskIndex[j]
                    } else {
                        taskIndex[i] = distinct
                        distinct += 1
                    }
                }
                let table = FirstMentions(ops: ops, taskIndex: UnsafeBufferPointer(taskIndex))
                let indexes = UnsafeBufferPointer(taskIndex)
                func body(_ w: inout some ByteSink) {
                    writeTable(table, count: distinct, into: &w)
                    var prev = Timestamp.zero
                    writeCommit(time: commit.time, ops, taskIndexes: indexes, after: &prev, into: &w)
                }
                // Written through a cursor over room reserved once, which a commit of a few
                // operations fits; one that does not is written again through the writer.
                if !w.withCursor(room: 1 << 10, { body(&$0) }) { body(&w) }
            }
        }
    }

    private static func encodeAny(_ commits: some Collection<Commit>, into w: inout some ByteSink) {
        // Each operation's task index is looked up once, here, and kept for the writing pass.
        var table = PayloadTaskIDs()
        var taskIndexes: [Int] = []
        taskIndexes.reserveCapacity(commits.count)
        for c in commits {
            for op in c.operations { taskIndexes.append(op.task.map { table.index(of: $0) } ?? 0) }
        }
        writeTable(table.order, count: table.order.count, into: &w)
        var prev = Timestamp.zero
        var k = 0
        taskIndexes.withUnsafeBufferPointer { indexes in
            for c in commits {
                let n = c.operations.count
                c.operations.withUnsafeBufferPointer { ops in
                    writeCommit(
                        time: c.time, ops, taskIndexes: UnsafeBufferPointer(rebasing: indexes[k..<(k + n)]), after: &prev,
                        into: &w)
                }
                k += n
            }
        }
    }

    // The payload is written by these two alone (Spec/log-format.md, "Commit payload"): the
    // task table, then each commit. Callers only work out the table.

    /// Writes the task table: its length, then each task id.
    @inline(__always)
    private static func writeTable(_ table: some Sequence<TaskID>, count: Int, into w: inout some ByteSink) {
        w.uvarint(count)
        for t in table { StateCodec.taskID(t, &w) }
    }

    /// Writes one commit: its time (delta-encoded from `prev`), its operation count, then each
    /// operation with its task's index in the table (`taskIndexes`, one per operation).
    @inline(__always)
    private static func writeCommit(
        time: Timestamp, _ ops: UnsafeBufferPointer<TaskOperation>, taskIndexes: UnsafeBufferPointer<Int>,
        after prev: inout Timestamp, into w: inout some ByteSink
    ) {
        encodeTime(time, after: &prev, into: &w)
        w.uvarint(ops.count)
        for i in ops.indices { encode(ops[i], taskIndex: taskIndexes[i], into: &w) }
    }

    /// The tasks of a commit's operations in order of first mention, without an array: an
    /// operation mentions its task first exactly when its index is the count listed so far.
    private struct FirstMentions: Sequence, IteratorProtocol {
        let ops: UnsafeBufferPointer<TaskOperation>
        let taskIndex: UnsafeBufferPointer<Int>
        private var i = 0
        private var listed = 0

        init(ops: UnsafeBufferPointer<TaskOperation>, taskIndex: UnsafeBufferPointer<Int>) {
            self.ops = ops
            self.taskIndex = taskIndex
        }

        mutating func next() -> TaskID? {
            while i < ops.count {
                defer { i += 1 }
                if taskIndex[i] == listed, let t = ops[i].task {
                    listed += 1
                    return t
                }
            }
            return nil
        }
    }

    /// Appends a commit's time, delta-encoded from the previous commit's `prev` (then `time`).
    /// Times are at most ``Timestamp/maxPhysical``, so a step (twice the delta, plus a bit)
    /// always fits 64 bits; writers refuse a later time before they encode it.
    static func encodeTime(_ time: Timestamp, after prev: inout Timestamp, into w: inout some ByteSink) {
        precondition(time > prev || (prev == .zero && time == .zero), "commit times must increase")
        precondition(time.physical <= Timestamp.maxPhysical, "commit times are at most Timestamp.maxPhysical")
        let delta = time.physical - prev.physical
        let implicitLogical: UInt32 = delta == 0 ? prev.logical &+ 1 : 0
        if time.logical == implicitLogical {
            w.uvarint(delta << 1)
        } else {
            w.uvarint(delta << 1 | 1)
            w.uvarint(UInt64(time.logical))
        }
        prev = time
    }

    /// Task ids in order of first mention, with their indexes (a linear search for the few
    /// ids of a single commit, a dictionary for big batches).
    struct PayloadTaskIDs {
        var order: [TaskID] = []
        var index: [TaskID: Int]?

        /// The index of `t`, added at the end if it is new (one dictionary lookup).
        mutating func index(of t: TaskID) -> Int {
            if index != nil {
                let next = order.count
                let i = valueInserting(&index![t, default: next])
                if i == next { order.append(t) }
                return i
            }
            if let i = order.firstIndex(of: t) { return i }
            order.append(t)
            if order.count > 16 { index = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) }) }
            return order.count - 1
        }
    }

    /// Encodes `op`, whose task (if it names one) has index `taskIndex` in the record's table.
    static func encode(_ op: TaskOperation, taskIndex: Int, into w: inout some ByteSink) {
        switch op {
        case .add:
            w.u8(Kind.add << 4)
            w.uvarint(taskIndex)
        case .remove(_, let observed):
            w.u8(Kind.remove << 4)
            w.uvarint(taskIndex)
            encodeDots(observed, into: &w)
        case .set(_, let write):
            encodeSet(write, taskIndex: taskIndex, into: &w)
        case .addTag(_, let tag):
            w.u8(Kind.addTag << 4)
            w.uvarint(taskIndex)
            w.string(tag)
        case .removeTag(_, let tag, let observed):
            w.u8(Kind.removeTag << 4)
            w.uvarint(taskIndex)
            w.string(tag)
            encodeDots(observed, into: &w)
        case .deviceName(let name):
            w.u8(deviceNameHeader)
            w.uvarint(ByteCounter.uvarintSize(UInt64(name.utf8.count)) + name.utf8.count)
            w.string(name)
        case .unknown(let header, let body):
            w.u8(header)
            w.uvarint(body.count)
            body.withUnsafeBytes { w.append($0) }
        }
    }

    static func encodeSet(_ write: FieldWrite, taskIndex: Int, into w: inout some ByteSink) {
        func head(_ field: UInt64) {
            w.u8(Kind.set << 4 | UInt8(field))
            w.uvarint(taskIndex)
        }
        switch write {
        case .title(let s):
            head(Field.title)
            encodeString(s, into: &w)
        case .notes(let s):
            head(Field.notes)
            encodeOptionalString(s, into: &w)
        case .done(let b):
            head(Field.done)
            w.u8(b ? ValueTag.trueValue : ValueTag.falseValue)
        case .priority(let p):
            head(Field.priority)
            if let p { w.u8(ValueTag.smallUInt + p) } else { w.u8(ValueTag.none) }
        case .due(let d):
            head(Field.due)
            switch d {
            case nil: w.u8(ValueTag.none)
            case .date(let days)?:
                w.u8(ValueTag.date)
                w.svarint(days)
            case .instant(let ms)?:
                w.u8(ValueTag.instant)
                w.svarint(ms)
            }
        case .list(let s):
            head(Field.list)
            encodeOptionalString(s, into: &w)
        case .meta(let key, let value):
            head(Field.meta)
            w.string(key)
            encodeOptionalString(value, into: &w)
        case .unknown(let field, let value):
            if field < UInt64(Field.extended) {
                head(field)
            } else {
                w.u8(Kind.set << 4 | Field.extended)
                w.uvarint(taskIndex)
                w.uvarint(field)
            }
            value.withUnsafeBytes { w.append($0) }
        }
    }

    static func encodeString(_ s: String, into w: inout some ByteSink) {
        w.u8(ValueTag.string)
        w.string(s)
    }

    static func encodeOptionalString(_ s: String?, into w: inout some ByteSink) {
        if let s { encodeString(s, into: &w) } else { w.u8(ValueTag.none) }
    }

    static func encodeDots(_ dots: [OperationID], into w: inout some ByteSink) {
        w.uvarint(dots.count)
        for d in dots {
            w.u64le(d.replica.high.byteSwapped)
            w.u64le(d.replica.low.byteSwapped)
            w.uvarint(d.seq)
        }
    }
}
