@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// Encodes a whole ``TaskState`` (every register with its stamp, every live and removed
/// tag) for snapshots, and back (Spec/log-format.md, "Snapshot file").
@_spi(Engine) public enum StateCodec {
    /// - Parameter taskStarts: told, for each task, its id, the offset in the body at which the
    ///   task starts, and the parent its parent register names, if any (a snapshot's indexes).
    public static func encode(
        _ state: TaskState, taskStarts: ((_ id: TaskID, _ offset: Int, _ parent: TaskID?) -> Void)? = nil
    ) -> [UInt8] {
        var encoder = StateEncoder(numbering: state)
        encoder.header(state)
        // Tasks go in the order a listing shows them unless asked otherwise (creation time,
        // then id): a reader's records then lie in that order, so the listing's sort finds
        // them sorted and reads them front to back.
        let records = state.records
        let order = records.indices.sorted {
            TaskQuery.createdOrder(
                records.values[$0].createdAt ?? .zero, records.id(at: $0), records.values[$1].createdAt ?? .zero,
                records.id(at: $1))
        }
        for p in order {
            if let taskStarts {
                let parent = records.values[p].meta[PlanningKey.parent].flatMap { $0.value.flatMap(PlanningKey.canonicalID) }
                taskStarts(records.id(at: p), encoder.w.count, parent)
            }
            encoder.taskID(records.id(at: p))
            encoder.task(records.values[p], liveDots: records.live[p]?.set ?? [])
        }
        return encoder.w.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> TaskState { try decode(SharedBytes(bytes)) }

    /// Where a part of an encoded state's tasks starts: a byte offset in the body, and how many
    /// tasks come before it.
    public struct Split: Sendable {
        public var tasksBefore: Int
        public var offset: Int
        public init(tasksBefore: Int, offset: Int) {
            self.tasksBefore = tasksBefore
            self.offset = offset
        }
    }

    /// Decodes an encoded state lying within a larger buffer (a snapshot's body, read where it lies).
    /// - Parameter splits: given how many parts are worth decoding side by side (one per core
    ///   for a large state, else 1), where the parts after the first start, in order (a
    ///   snapshot's task index knows where each task starts). Splits that turn out not to be
    ///   where that many tasks end are damage to the index, not to the state: it is then
    ///   decoded in one part.
    public static func decode(
        _ bytes: SharedBytes, splits: (_ parts: Int) -> [Split] = { _ in [] }
    ) throws(DecodeError) -> TaskState {
        try bytes.withDecoding { (buf) throws(DecodeError) -> TaskState in
            var r = ByteReader(buf)
            let (body, head) = try BodyReader.start(&r, byteCount: buf.count)
            // Room for the tasks the log after the snapshot adds: growing the arrays would
            // copy every record (untouched capacity costs no memory).
            let capacity = head.taskCount + head.taskCount / 8 + 64
            let given = splits(SideBySide.parts(of: head.taskCount).count)
            var records: TaskTable
            if !given.isEmpty, let table = decodeSideBySide(
                buf, body, tasksStart: r.offset, count: head.taskCount, capacity: capacity, splits: given) {
                records = table
            } else {
                records = TaskTable()
                records.reserveCapacity(capacity, filling: head.taskCount)
                for _ in 0..<head.taskCount {
                    let (id, live) = try body.taskHead(&r)
                    let added = try records.add(id, live: live) { (rec) throws(DecodeError) in try body.fields(&r, into: &rec) }
                    guard added else { throw r.error("task \(id) listed twice") }
                }
                guard r.isAtEnd else { throw r.error("trailing bytes after the state") }
            }
            return TaskState._assemble(
                records: records, membershipTombstones: head.membershipTombstones, version: head.version,
                latestTime: head.latestTime, deviceNames: head.deviceNames)
        }
    }

    /// The tasks of a body decoded in parts side by side, starting at `tasksStart` and at each
    /// split; nil when the splits do not fall where their tasks start, or a part does not
    /// decode (decoding in one part then says what is wrong).
    private static func decodeSideBySide(
        _ buf: UnsafeRawBufferPointer, _ body: BodyReader, tasksStart: Int, count: Int, capacity: Int, splits: [Split]
    ) -> TaskTable? {
        var starts = [Split(tasksBefore: 0, offset: tasksStart)]
        for s in splits where s.tasksBefore > starts.last!.tasksBefore && s.offset > starts.last!.offset {
            guard s.tasksBefore < count, s.offset < buf.count else { break }
            starts.append(s)
        }
        guard starts.count > 1 else { return nil }
        starts.append(Split(tasksBefore: count, offset: buf.count))
        let parts = starts.indices.dropLast().map { starts[$0].tasksBefore..<starts[$0 + 1].tasksBefore }
        let (bytes, bounds) = (Shared(buf.baseAddress), starts)
        return TaskTable(count: count, capacity: capacity, parts: parts) { part, positions, slots in
            let buf = UnsafeRawBufferPointer(start: bytes.pointer, count: bounds.last!.offset)
            var r = ByteReader(buf, offset: bounds[part].offset, end: bounds[part + 1].offset)
            var filled = positions.lowerBound
            do throws(DecodeError) {
                for p in positions {
                    let (id, live) = try body.taskHead(&r)
                    let record = slots.records + p
                    record.initialize(to: TaskRecord())
                    do throws(DecodeError) { try body.fields(&r, into: &record.pointee) } catch {
                        record.deinitialize(count: 1)
                        throw error
                    }
                    (slots.ids + p).initialize(to: id)
                    (slots.live + p).initialize(to: live)
                    filled = p + 1
                }
                // Each part must end exactly where the next starts.
                guard r.isAtEnd else { throw r.error("part does not end where the next starts") }
                return true
            } catch {
                slots.deinitialize(positions.lowerBound..<filled)
                return false
            }
        }
    }

    /// What a state's body holds before its tasks.
    public struct Head: Sendable {
        /// The operations the state holds, per replica.
        public var version: VersionVector
        /// The greatest operation time applied (no task was created later).
        public var latestTime: Timestamp
        /// Membership dots some remove observed; no task's live dots include one.
        public var membershipTombstones: Set<OperationID>
        /// Each device's name register.
        public var deviceNames: [ReplicaID: LWWRegister<String>]
        public var taskCount: Int
    }

    /// Reads what an encoded state holds before its tasks.
    public static func head(of bytes: SharedBytes) throws(DecodeError) -> Head {
        try bytes.withDecoding { (buf) throws(DecodeError) -> Head in
            var r = ByteReader(buf)
            return try BodyReader.start(&r, byteCount: buf.count).1
        }
    }

    /// How ``forEachTask(in:inCreationOrder:reading:record:item:)`` is to read a task,
    /// told from its id and live dots before the rest is read.
    public enum TaskReading {
        /// Whole, with every stamp: to merge with.
        case record
        /// As a listing shows it, in place (the stamps skipped, not built).
        case item
        /// Not at all (only its creation time, for the order).
        case skip
    }

    /// Reads the tasks of an encoded state one at a time, in the order they are stored,
    /// without building the state: each task is handed on and then dropped.
    /// - Parameters:
    ///   - inCreationOrder: the tasks are known to be stored in creation order (the snapshot
    ///     says so): a task out of that order is then damage, reported before it is handed on.
    ///   - reading: how to read a task, from its id and live dots (nil for a deleted task).
    ///   - record: gets each task read as a record (its own to change) and its live dots;
    ///     returns false to stop.
    ///   - item: gets each task read as a listing shows it, in place; returns false to stop.
    public static func forEachTask(
        in bytes: SharedBytes, inCreationOrder: Bool, reading: (TaskID, LiveDots?) -> TaskReading,
        record: (TaskID, inout TaskRecord, LiveDots?) -> Bool, item: (borrowing SavedTask) -> Bool
    ) throws(DecodeError) {
        try withoutActuallyEscaping(reading) { (reading) throws(DecodeError) in
            try withoutActuallyEscaping(record) { (record) throws(DecodeError) in
                try withoutActuallyEscaping(item) { (item) throws(DecodeError) in
                    var visitor = ClosureVisitor(read: reading, record: record, item: item)
                    try bytes.withDecoding { (buf) throws(DecodeError) in
                        var r = ByteReader(buf)
                        let (body, h) = try BodyReader.start(&r, byteCount: buf.count)
                        var cursor = PartCursor(offset: r.offset, left: h.taskCount)
                        guard try readTasks(buf, body, &cursor, inCreationOrder: inCreationOrder, mayPause: false, &visitor) else { return }
                        guard cursor.offset == buf.count else {
                            throw DecodeError(offset: cursor.offset, reason: "trailing bytes after the state")
                        }
                    }
                }
            }
        }
    }

    /// The closures of ``forEachTask(in:inCreationOrder:reading:record:item:)`` as a visitor.
    private struct ClosureVisitor: SavedTaskVisitor {
        let read: (TaskID, LiveDots?) -> TaskReading
        let record: (TaskID, inout TaskRecord, LiveDots?) -> Bool
        let item: (borrowing SavedTask) -> Bool

        func reading(_ id: TaskID, _ live: LiveDots?) -> TaskReading { read(id, live) }
        func record(_ id: TaskID, _ rec: inout TaskRecord, _ live: LiveDots?) -> Bool { record(id, &rec, live) }
        func item(_ task: borrowing SavedTask) -> Bool { item(task) }
        var words: WordSearch? { nil }
        func isPlain(_ id: TaskID) -> Bool { false }
        func noteLink() {}
        var wantsPause: Bool { false }
        func takeTurn() {}
    }
}

extension TaskRecord {
    var stamps: [Stamp] {
        var s: [Stamp] = []
        if let r = title { s.append(r.stamp) }
        if let r = notes { s.append(r.stamp) }
        if let r = done { s.append(r.stamp) }
        if let r = priority { s.append(r.stamp) }
        if let r = due { s.append(r.stamp) }
        if let r = list { s.append(r.stamp) }
        for (_, r) in meta { s.append(r.stamp) }
        return s
    }
}
