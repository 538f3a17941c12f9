@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// What reads the tasks of one part of an encoded state (``StateCodec/forEachTask(in:splits:visitors:)``):
/// told each task's id and live dots, it says how the task is to be read, then gets it.
protocol SavedTaskVisitor: SendableMetatype {
    /// How to read the task with this id and these live dots (nil for a deleted task).
    mutating func reading(_ id: TaskID, _ live: LiveDots?) -> StateCodec.TaskReading
    /// A task read whole, its own to change; returns false to stop.
    mutating func record(_ id: TaskID, _ record: inout TaskRecord, _ live: LiveDots?) -> Bool
    /// A task read in place; returns false to stop.
    mutating func item(_ task: borrowing SavedTask) -> Bool
    /// Words that a task to be read in place must hold in its title or notes: one that does
    /// not is stepped over unread. Nil when any task will do.
    var words: WordSearch? { get }
    /// Whether the task with this id, whatever its live dots, is read in place or not at all
    /// (``StateCodec/TaskReading/item`` or ``StateCodec/TaskReading/skip``): only such a
    /// task is stepped over for lacking the words.
    func isPlain(_ id: TaskID) -> Bool
    /// Told that a task stepped over may name a parent or a dependency.
    mutating func noteLink()
    /// Whether a part read beside the parts before it is to stop for now: what it holds waits
    /// for their turn to end. It reads on once its own turn comes.
    var wantsPause: Bool { get }
    /// Told, part after part in order, once every part before this one is done.
    mutating func takeTurn()
}

extension StateCodec {
    /// Reads the tasks of an encoded state as ``forEachTask(in:inCreationOrder:reading:record:item:)``
    /// does (in creation order), in parts side by side: `visitors[k]` reads the part that starts
    /// at split k - 1 (the first part at the first task), each on its own thread. The parts
    /// then take their turns in order (``SavedTaskVisitor/takeTurn()``), and one that paused
    /// reads on in its turn. Splits that are not where that many tasks end are damage to the
    /// index, not to the state: the parts after such a split are dropped from `visitors`, and
    /// the part before it reads on in their place. Visitors beyond the parts are dropped too.
    /// - Throws: what reading the tasks in one part would throw, once the parts before the
    ///   damage have had their turns.
    static func forEachTask<V: SavedTaskVisitor>(
        in bytes: SharedBytes, splits: [Split], visitors: inout [V]
    ) throws(DecodeError) {
        try bytes.withDecoding { (buf) throws(DecodeError) in
            var r = ByteReader(buf)
            let (body, head) = try BodyReader.start(&r, byteCount: buf.count)
            var starts = [Split(tasksBefore: 0, offset: r.offset)]
            for s in splits.prefix(visitors.count - 1) {
                guard s.tasksBefore > starts.last!.tasksBefore, s.offset > starts.last!.offset,
                    s.tasksBefore < head.taskCount, s.offset < buf.count
                else { break }
                starts.append(s)
            }
            visitors.removeLast(visitors.count - starts.count)
            var cursors = starts.indices.map { k in
                PartCursor(offset: starts[k].offset, left: (k + 1 < starts.count ? starts[k + 1].tasksBefore : head.taskCount) - starts[k].tasksBefore)
            }
            visitors[0].takeTurn()
            let outcomes = readSideBySide(buf, body, &cursors, &visitors)
            guard let last = try takeTurns(buf, body, starts, head.taskCount, &cursors, &visitors, outcomes) else { return }
            guard cursors[last].offset == buf.count else {
                throw DecodeError(offset: cursors[last].offset, reason: "trailing bytes after the state")
            }
        }
    }

    /// Reads every part (the first not pausing), side by side when there are several.
    /// - Returns: each part's outcome: whether it went on to its end (or paused), or what it threw.
    private static func readSideBySide<V: SavedTaskVisitor>(
        _ buf: UnsafeRawBufferPointer, _ body: BodyReader, _ cursors: inout [PartCursor], _ visitors: inout [V]
    ) -> [Result<Bool, DecodeError>] {
        var outcomes = [Result<Bool, DecodeError>](repeating: .success(true), count: cursors.count)
        cursors.withUnsafeMutableBufferPointer { c in
            visitors.withUnsafeMutableBufferPointer { v in
                outcomes.withUnsafeMutableBufferPointer { o in
                    let run = PartRun(buf: buf, body: body, cursors: c.baseAddress!, visitors: v.baseAddress!, outcomes: o.baseAddress!)
                    SideBySide.forEach(c.indices.map { $0..<($0 + 1) }) { k, _ in run.read(k) }
                }
            }
        }
        return outcomes
    }

    /// What the threads of ``readSideBySide(_:_:_:_:)`` share: each reads and writes only
    /// its own part's cursor, visitor and outcome.
    private struct PartRun<V: SavedTaskVisitor>: @unchecked Sendable {
        let buf: UnsafeRawBufferPointer
        let body: BodyReader
        let cursors: UnsafeMutablePointer<PartCursor>
        let visitors: UnsafeMutablePointer<V>
        let outcomes: UnsafeMutablePointer<Result<Bool, DecodeError>>

        func read(_ k: Int) {
            outcomes[k] = Result { () throws(DecodeError) -> Bool in
                try readTasks(buf, body, &cursors[k], inCreationOrder: true, mayPause: k > 0, &visitors[k])
            }
        }
    }

    /// Gives each part after the first its turn, in order, once the part before has been
    /// found to end where it starts; a part that paused reads on in its turn.
    /// - Returns: the last part read, or nil when a visitor stopped the reading.
    private static func takeTurns<V: SavedTaskVisitor>(
        _ buf: UnsafeRawBufferPointer, _ body: BodyReader, _ starts: [Split], _ taskCount: Int,
        _ cursors: inout [PartCursor], _ visitors: inout [V], _ outcomes: [Result<Bool, DecodeError>]
    ) throws(DecodeError) -> Int? {
        for k in cursors.indices {
            if k > 0 {
                guard cursors[k - 1].offset == starts[k].offset else {
                    // The split is not where the part before ends: that part reads on instead.
                    visitors.removeLast(visitors.count - k)
                    cursors[k - 1].left = taskCount - starts[k].tasksBefore
                    return try readTasks(buf, body, &cursors[k - 1], inCreationOrder: true, mayPause: false, &visitors[k - 1]) ? k - 1 : nil
                }
                if let last = cursors[k - 1].last, let (first, end) = cursors[k].first,
                    !TaskQuery.createdOrder(last.created, last.id, first.created, first.id) {
                    throw DecodeError(offset: end, reason: "task \(first.id) is out of the creation order the snapshot claims")
                }
                visitors[k].takeTurn()
            }
            guard try outcomes[k].get() else {
                visitors.removeLast(visitors.count - k - 1)
                return nil
            }
            if cursors[k].left > 0 {  // paused
                guard try readTasks(buf, body, &cursors[k], inCreationOrder: true, mayPause: false, &visitors[k]) else {
                    visitors.removeLast(visitors.count - k - 1)
                    return nil
                }
            }
        }
        return cursors.count - 1
    }

    /// The id at `offset` when it is a UUID (its form byte, then 16 bytes), read in place.
    @inline(__always)
    private static func uuidTaskID(_ buf: UnsafeRawBufferPointer, at offset: Int) -> TaskID? {
        guard offset + 17 <= buf.count, buf[offset] == 0 else { return nil }
        return TaskID(
            uuidHigh: UInt64(bigEndian: buf.loadUnaligned(fromByteOffset: offset + 1, as: UInt64.self)),
            low: UInt64(bigEndian: buf.loadUnaligned(fromByteOffset: offset + 9, as: UInt64.self)))
    }

    /// Where reading a run of tasks stands: the next task's offset, how many tasks are left,
    /// and the first and last task read (the creation order is checked where parts meet).
    struct PartCursor {
        typealias Key = (created: Timestamp, id: TaskID)
        var offset: Int
        var left: Int
        var first: (key: Key, end: Int)?
        var last: Key?

        /// Notes the task `id` read up to `r`'s offset; throws when it comes before the last one.
        mutating func note(_ created: Timestamp?, _ id: TaskID, _ r: borrowing ByteReader, inCreationOrder: Bool) throws(DecodeError) {
            let key = (created ?? .zero, id)
            if inCreationOrder, let p = last, !TaskQuery.createdOrder(p.created, p.id, key.0, key.1) {
                throw r.error("task \(id) is out of the creation order the snapshot claims")
            }
            if first == nil { first = (key, r.offset) }
            last = key
            left -= 1
        }
    }

    /// Reads tasks from `cursor` on until its part is done, `v` stops, or (when `mayPause`)
    /// `v` wants a pause after a task; the cursor is left after the last task read.
    /// - Returns: false when `v` stopped the reading.
    static func readTasks<V: SavedTaskVisitor>(
        _ buf: UnsafeRawBufferPointer, _ body: BodyReader, _ cursor: inout PartCursor, inCreationOrder: Bool,
        mayPause: Bool, _ v: inout V
    ) throws(DecodeError) -> Bool {
        var r = ByteReader(buf, offset: cursor.offset)
        defer { cursor.offset = r.offset }
        // Unwrapped once: binding it for each task would retain its storage each time.
        let (searching, words) = (v.words != nil, v.words ?? WordSearch([]))
        let replicas = body.replicas.count
        while cursor.left > 0 {
            if searching {
                // A task that cannot hold the words is stepped over, not read.
                let start = r.offset
                let id: TaskID
                if let uuid = Self.uuidTaskID(buf, at: start) { id = uuid } else { id = try taskID(&r) }
                let dots = r.offset == start ? start + 17 : r.offset
                if v.isPlain(id), let skim = TaskSkim(buf, at: dots, replicas: replicas) {
                    if skim.holdsLink { v.noteLink() }
                    if !words.matches(title: skim.title, notes: skim.notes) {
                        r = ByteReader(buf, offset: skim.end)
                        try cursor.note(skim.created, id, r, inCreationOrder: inCreationOrder)
                        continue
                    }
                }
                r = ByteReader(buf, offset: start)
            }
            let (id, live) = try body.taskHead(&r)
            switch v.reading(id, live) {
            case .record:
                var rec = TaskRecord()
                try body.fields(&r, into: &rec)
                try cursor.note(rec.createdAt, id, r, inCreationOrder: inCreationOrder)
                guard v.record(id, &rec, live) else { return false }
            case .item:
                var task = SavedTask(reading: id)
                try body.fields(&r, into: &task)
                try cursor.note(task.createdAt, id, r, inCreationOrder: inCreationOrder)
                guard v.item(task) else { return false }
            case .skip:
                var times = CreationTime()
                try body.fields(&r, into: &times)
                try cursor.note(times.created, id, r, inCreationOrder: inCreationOrder)
            }
            if mayPause && v.wantsPause { return true }
        }
        return true
    }
}

extension StateCodec {
    /// How many parts side by side a state of `taskCount` tasks is worth reading in: one per
    /// core when it is large, else 1.
    package static func partsWorthReading(taskCount: Int) -> Int { SideBySide.parts(of: taskCount).count }
}
