import CRDTCore
import OpLogFormat

/// Encodes commits into the payload of a commits record and back
/// (Spec/log-format.md, "Commit payload").
public enum CommitCodec {
    enum Kind {
        static let add: UInt8 = 1
        static let remove: UInt8 = 2
        static let set: UInt8 = 3
        static let addTag: UInt8 = 4
        static let removeTag: UInt8 = 5
        /// Kinds from this value up are length-prefixed extensions a reader may skip.
        static let firstExtension: UInt8 = 8
    }

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

    /// The payload for `commits`, which must be consecutive and in increasing clock order.
    public static func encode(_ commits: [Commit]) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + commits.count * 24)
        encode(commits, into: &w)
        return w.bytes
    }

    /// Appends the payload for `commits` to `w`.
    public static func encode(_ commits: [Commit], into w: inout ByteWriter) { encodeAny(commits, into: &w) }

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
                // Written through a cursor over room reserved once, which a commit of a few
                // operations fits; one that does not is written again through the writer.
                func body(_ w: inout some ByteSink) {
                    // Indexes are given in order of first mention: an operation mentions its
                    // task first exactly when its index is the count of tasks listed so far.
                    w.uvarint(distinct)
                    var listed = 0
                    for i in ops.indices where taskIndex[i] == listed {
                        guard let t = ops[i].task else { continue }
                        StateCodec.taskID(t, &w)
                        listed += 1
                    }
                    var prev = Timestamp.zero
                    encodeTime(commit.time, after: &prev, into: &w)
                    w.uvarint(ops.count)
                    for i in ops.indices { encode(ops[i], taskIndex: taskIndex[i], into: &w) }
                }
                if !w.withCursor(room: 1 << 10, { body(&$0) }) { body(&w) }
            }
        }
    }

    private static func encodeAny(_ commits: some Collection<Commit>, into w: inout ByteWriter) {
        // Each operation's task index is looked up once, here, and kept for the second pass.
        var table = TaskTable()
        var taskIndexes: [Int] = []
        taskIndexes.reserveCapacity(commits.count)
        for c in commits {
            for op in c.operations {
                if let t = op.task { taskIndexes.append(table.index(of: t)) }
            }
        }
        let order = table.order
        var nextIndex = 0
        w.uvarint(order.count)
        for t in order { StateCodec.taskID(t, &w) }
        var prev = Timestamp.zero
        for c in commits {
            encodeTime(c.time, after: &prev, into: &w)
            w.uvarint(c.operations.count)
            for op in c.operations {
                let taskIndex = op.task == nil ? 0 : taskIndexes[nextIndex]
                if op.task != nil { nextIndex += 1 }
                encode(op, taskIndex: taskIndex, into: &w)
            }
        }
    }

    /// Appends a commit's time, delta-encoded from the previous commit's `prev` (then `time`).
    static func encodeTime(_ time: Timestamp, after prev: inout Timestamp, into w: inout some ByteSink) {
        precondition(time > prev || (prev == .zero && time == .zero), "commit times must increase")
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
    struct TaskTable {
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

    // MARK: Decoding

    /// Decodes a commits payload holding exactly `opCount` operations starting at `firstSeq`.
    public static func decode(
        _ payload: [UInt8], firstSeq: UInt64, opCount: UInt64
    ) throws(DecodeError) -> [Commit] {
        try payload.withDecoding { (buf) throws(DecodeError) -> [Commit] in
            try decode(buf, firstSeq: firstSeq, opCount: opCount)
        }
    }

    /// The same, reading the payload where it lies (a record stored raw inside a file: no copy).
    public static func decode(
        _ buf: UnsafeRawBufferPointer, firstSeq: UInt64, opCount: UInt64
    ) throws(DecodeError) -> [Commit] {
        var commits: [Commit] = []
        try decode(buf, firstSeq: firstSeq, opCount: opCount, chunkOperations: .max) { commits = $0 }
        return commits
    }

    /// Decodes a commits payload where it lies and hands its commits to `emit` in order, in
    /// arrays of about `chunkOperations` operations (whole commits; the last array may hold
    /// fewer), so that a reader can apply the first while the rest is decoded. Every array
    /// but the last is handed over before the payload has been read to its end: a payload
    /// found damaged afterwards has already given some of its commits.
    public static func decode(
        _ buf: UnsafeRawBufferPointer, firstSeq: UInt64, opCount: UInt64, chunkOperations: Int,
        emit: ([Commit]) -> Void
    ) throws(DecodeError) {
        var r = ByteReader(buf)
        let taskCount = try r.count(limit: buf.count)
        var tasks: [TaskID] = []
        tasks.reserveCapacity(taskCount)
        for _ in 0..<taskCount { tasks.append(try StateCodec.taskID(&r)) }
        guard firstSeq >= 1, opCount <= UInt64.max - firstSeq else {
            throw DecodeError(offset: 0, reason: "sequence numbers \(firstSeq) + \(opCount) are out of range")
        }
        // The operations of every commit of a chunk go into one array, which the commits
        // then share (one allocation per chunk instead of one per commit).
        var spans: [(firstSeq: UInt64, time: Timestamp, start: Int)] = []
        var ops: [TaskOperation] = []
        var seq = firstSeq
        let end = firstSeq + opCount
        /// Makes room for the next chunk: a commit holds at least one operation and takes at
        /// least four bytes; past 65,536 commits the arrays grow as usual (a damaged count
        /// cannot reserve much).
        func reserve(_ r: borrowing ByteReader) {
            spans.reserveCapacity(Int(min(end - seq, UInt64(r.remaining / 4), 1 << 16, UInt64(chunkOperations))))
            let expected = Int(min(end - seq, UInt64(r.remaining / 2), 1 << 20, UInt64(chunkOperations)))
            ops.reserveCapacity(expected)
            ops.withUnsafeMutableBufferPointer { b in
                if let base = b.baseAddress { MemoryHint.mapIn(base, bytes: expected * MemoryLayout<TaskOperation>.stride) }
            }
        }
        func commits() -> [Commit] {
            var commits: [Commit] = []
            commits.reserveCapacity(spans.count)
            commits.withUnsafeMutableBufferPointer { b in
                if let base = b.baseAddress { MemoryHint.mapIn(base, bytes: spans.count * MemoryLayout<Commit>.stride) }
            }
            for i in spans.indices {
                let end = i + 1 < spans.count ? spans[i + 1].start : ops.count
                commits.append(Commit(firstSeq: spans[i].firstSeq, time: spans[i].time, operations: ops[spans[i].start..<end]))
            }
            return commits
        }
        /// The operation arrays of the last chunks handed over: once their commits are freed,
        /// the oldest is emptied and filled again, rather than a fresh array taken (and the
        /// large block freed) for every chunk.
        var handedOver: [[TaskOperation]] = []
        func recycled(after emitted: [TaskOperation]) -> [TaskOperation] {
            handedOver.append(emitted)
            guard handedOver.count > 4 else { return [] }
            var oldest = handedOver.removeFirst()
            oldest.removeAll(keepingCapacity: true)  // in place once nothing else holds it
            return oldest
        }
        reserve(r)
        var prev = Timestamp.zero
        var isFirst = true
        while !r.isAtEnd {
            let step = try r.uvarint()
            let delta = step >> 1
            guard delta <= UInt64.max - prev.physical else { throw r.error("clock overflows") }
            let physical = prev.physical + delta
            guard physical <= Timestamp.maxPhysical else { throw r.error("clock time \(physical) is beyond the largest allowed") }
            let logical: UInt32
            if step & 1 == 1 {
                let v = try r.uvarint()
                guard v <= UInt64(UInt32.max) else { throw r.error("logical clock overflows") }
                logical = UInt32(v)
            } else {
                logical = delta == 0 ? prev.logical &+ 1 : 0
            }
            let time = Timestamp(physical: physical, logical: logical)
            guard isFirst || time > prev else { throw r.error("commit times do not increase") }
            isFirst = false
            prev = time
            // Every operation takes at least two bytes, which bounds the count.
            let n = try r.count(limit: Int(min(end - seq, UInt64(r.remaining / 2))))
            guard n > 0 else { throw r.error("empty commit") }
            spans.append((seq, time, ops.count))
            for _ in 0..<n { ops.append(try decodeOp(&r, tasks: tasks)) }
            seq += UInt64(n)
            if ops.count >= chunkOperations && !r.isAtEnd {
                emit(commits())
                spans.removeAll(keepingCapacity: true)
                ops = recycled(after: ops)
                reserve(r)
            }
        }
        guard seq == end else { throw r.error("payload holds \(seq - firstSeq) operations, header says \(opCount)") }
        if !spans.isEmpty { emit(commits()) }
    }

    static func decodeOp(_ r: inout ByteReader, tasks: [TaskID]) throws(DecodeError) -> TaskOperation {
        let header = try r.u8()
        let kind = header >> 4
        if kind >= Kind.firstExtension {
            let n = try r.count(limit: r.remaining)
            return .unknown(kind: header, body: Array(try r.bytes(n)))
        }
        guard !tasks.isEmpty else { throw r.error("operation refers to a task, but the task table is empty") }
        let index = try r.count(limit: tasks.count - 1)
        let task = tasks[index]
        switch kind {
        case Kind.add:
            return .add(task)
        case Kind.remove:
            return .remove(task, observed: try decodeDots(&r))
        case Kind.set:
            return .set(task, try decodeSet(&r, fieldNibble: header & 15))
        case Kind.addTag:
            return .addTag(task, try r.string())
        case Kind.removeTag:
            let tag = try r.string()
            return .removeTag(task, tag, observed: try decodeDots(&r))
        default:
            throw r.error("invalid operation kind \(kind)")
        }
    }

    static func decodeDots(_ r: inout ByteReader) throws(DecodeError) -> [OperationID] {
        let n = try r.count(limit: r.remaining / 17)
        var dots: [OperationID] = []
        dots.reserveCapacity(n)
        for _ in 0..<n {
            let replica = ReplicaID(bytes: try r.bytes(16))
            dots.append(OperationID(replica: replica, seq: try r.uvarint()))
        }
        return dots
    }

    /// A decoded value of any type; known fields check the type they expect.
    enum Value {
        case none, bool(Bool), uint(UInt64), string(String), date(Int64), instant(Int64), opaque
    }

    static func decodeValue(_ r: inout ByteReader) throws(DecodeError) -> Value {
        let tag = try r.u8()
        switch tag {
        case ValueTag.none: return .none
        case ValueTag.falseValue: return .bool(false)
        case ValueTag.trueValue: return .bool(true)
        case ValueTag.uint: return .uint(try r.uvarint())
        case ValueTag.string: return .string(try r.string())
        case ValueTag.date: return .date(try r.svarint())
        case ValueTag.instant: return .instant(try r.svarint())
        case ValueTag.smallUInt..<ValueTag.firstOpaque: return .uint(UInt64(tag - ValueTag.smallUInt))
        case ValueTag.firstOpaque...:
            let n = try r.count(limit: r.remaining)
            _ = try r.bytes(n)
            return .opaque
        default: throw r.error("invalid value tag \(tag)")
        }
    }

    static func decodeSet(_ r: inout ByteReader, fieldNibble: UInt8) throws(DecodeError) -> FieldWrite {
        if fieldNibble == Field.extended {
            let field = try r.uvarint()
            guard field >= UInt64(Field.extended) else {
                throw r.error("field \(field) written in the extended form; numbers below 15 use the nibble")
            }
            let start = r.offset
            _ = try decodeValue(&r)
            return .unknown(field: field, value: Array(UnsafeRawBufferPointer(rebasing: r.base[start..<r.offset])))
        }
        let field = UInt64(fieldNibble)
        let key = field == Field.meta ? try r.string() : ""
        let start = r.offset
        let value = try decodeValue(&r)
        switch (field, value) {
        case (Field.title, .string(let s)): return .title(s)
        case (Field.notes, .string(let s)): return .notes(s)
        case (Field.notes, .none): return .notes(nil)
        case (Field.done, .bool(let b)): return .done(b)
        case (Field.priority, .uint(let p)) where p <= 3: return .priority(UInt8(p))
        case (Field.priority, .none): return .priority(nil)
        case (Field.due, .date(let d)): return .due(.date(days: d))
        case (Field.due, .instant(let ms)): return .due(.instant(milliseconds: ms))
        case (Field.due, .none): return .due(nil)
        case (Field.list, .string(let s)): return .list(s)
        case (Field.list, .none): return .list(nil)
        case (Field.meta, .string(let s)): return .meta(key: key, value: s)
        case (Field.meta, .none): return .meta(key: key, value: nil)
        case (0...Field.meta, _): throw DecodeError(offset: start, reason: "wrong value type for field \(field)")
        default:
            // A field number from a newer version: keep it whole, so it is relayed verbatim.
            return .unknown(field: field, value: Array(UnsafeRawBufferPointer(rebasing: r.base[start..<r.offset])))
        }
    }
}
