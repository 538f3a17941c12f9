@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

// Reading a snapshot's body for the urgency plan (Spec/log-format.md, "Urgency plan"): what
// the plan keeps of each open task, and a saved task read at an offset the plan lists.

/// What the urgency plan keeps of an open saved task: the registers that place it in a list.
@_spi(Engine) public struct PlanFacts: Sendable, Equatable {
    public var priority: UInt8?
    public var due: Due?
    public var scheduled: Due?
    public var inProgress = false

    public init(priority: UInt8?, due: Due?, scheduled: Due?, inProgress: Bool) {
        (self.priority, self.due, self.scheduled, self.inProgress) = (priority, due, scheduled, inProgress)
    }

    /// The list class: the priority rank (0 to 3, none counting as 0) in bits 0–1, bit 2
    /// when in progress, bit 3 when scheduled.
    public var rankClass: UInt8 {
        Self.rankClass(priorityRank: min(priority ?? 0, 3), inProgress: inProgress, scheduled: scheduled != nil)
    }

    public static func rankClass(priorityRank: UInt8, inProgress: Bool, scheduled: Bool) -> UInt8 {
        priorityRank | (inProgress ? 4 : 0) | (scheduled ? 8 : 0)
    }
}

/// Reads what ``PlanFacts`` needs of a task, stepping over the rest unchecked.
private struct PlanFactsReader: TaskFields {
    static var keepsStamps: Bool { false }

    var isDone = false
    var facts = PlanFacts(priority: nil, due: nil, scheduled: nil, inProgress: false)

    static func text(_ r: inout ByteReader) throws(DecodeError) -> UnsafeRawBufferPointer {
        try r.bytes(try r.count(limit: r.remaining))
    }

    mutating func times(created: Timestamp?, updated: Timestamp) {}
    mutating func title(_ value: UnsafeRawBufferPointer, _ stamp: Stamp) {}
    mutating func notes(_ value: UnsafeRawBufferPointer?, _ stamp: Stamp) {}
    mutating func done(_ value: Bool, _ stamp: Stamp) { isDone = value }
    mutating func priority(_ value: UInt8?, _ stamp: Stamp) { facts.priority = value }
    mutating func due(_ value: Due?, _ stamp: Stamp) { facts.due = value }
    mutating func list(_ value: UnsafeRawBufferPointer?, _ stamp: Stamp) {}
    mutating func tags(_ added: [(UnsafeRawBufferPointer, [OperationID])], removed: [OperationID]) {}

    /// The planning registers, read as ``SavedTask/savedDue(meta:)`` reads them.
    mutating func meta(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, _ stamp: Stamp) {
        guard let value, (5...9).contains(key.count) else { return }
        func due() -> Due? { Due(parsing: String(decoding: value, as: UTF8.self)) }
        if key.elementsEqual(PlanningKey.scheduled.utf8) {
            facts.scheduled = due()
        } else if key.elementsEqual(PlanningKey.start.utf8) {
            facts.inProgress = due() != nil
        }
    }
}

extension StateCodec {
    /// Hands on, in the order stored, each live task of an encoded state that is not done:
    /// the offset at which it starts and what the urgency plan keeps of it.
    /// - Throws: when the state does not decode.
    public static func forEachOpenTask(in bytes: SharedBytes, _ body: (_ offset: Int, _ facts: PlanFacts) -> Void) throws(DecodeError) {
        try bytes.withDecoding { (buf) throws(DecodeError) in
            var r = ByteReader(buf)
            let (reader, h) = try BodyReader.start(&r, byteCount: buf.count)
            for _ in 0..<h.taskCount {
                let offset = r.offset
                let (_, live) = try reader.taskHead(&r)
                var task = PlanFactsReader()
                try reader.fields(&r, into: &task)
                if live != nil, !task.isDone { body(offset, task.facts) }
            }
            guard r.isAtEnd else { throw r.error("trailing bytes after the state") }
        }
    }
}

/// Reads the tasks of an encoded state at given offsets, one at a time, in place.
@_spi(Engine) public struct SavedTaskReader {
    private let bytes: SharedBytes
    private let reader: StateCodec.BodyReader
    private let tasksStart: Int
    /// Checks the bytes at a range of `bytes` before a task read there is handed on.
    private let check: (Range<Int>) throws(DecodeError) -> Void

    /// A reader of `bytes` (an encoded state whose start `head` describes); `check` is given
    /// the bytes of each task read, to check before the task is handed on.
    public init(_ bytes: SharedBytes, head: StateCodec.LookupHead, check: @escaping (Range<Int>) throws(DecodeError) -> Void) {
        (self.bytes, reader, tasksStart, self.check) = (bytes, head.reader, head.end, check)
    }

    /// Hands `body` the tasks stored at `offsets`, in their order, each read in place with
    /// its position in `offsets` and its live dots, until it returns false.
    /// - Throws: when an offset lies outside the tasks, the task there does not decode, or
    ///   its bytes do not check out.
    public func read(at offsets: [Int], _ body: (Int, borrowing SavedTask, LiveDots?) -> Bool) throws(DecodeError) {
        try bytes.withDecoding { (buf) throws(DecodeError) in
            for (i, offset) in offsets.enumerated() {
                guard offset >= tasksStart, offset < buf.count else {
                    throw DecodeError(offset: offset, reason: "the urgency plan points outside the tasks")
                }
                var r = ByteReader(buf, offset: offset)
                let (id, live) = try reader.taskHead(&r)
                var task = SavedTask(reading: id)
                try reader.fields(&r, into: &task)
                try check(offset..<r.offset)
                guard body(i, task, live) else { return }
            }
        }
    }

    /// Hands `body` the task stored at `offset`, read in place, with its live dots.
    /// - Throws: when `offset` lies outside the tasks, or the task there does not decode.
    public func read(at offset: Int, _ body: (borrowing SavedTask, LiveDots?) -> Void) throws(DecodeError) {
        try read(at: [offset]) { _, task, live in
            body(task, live)
            return false
        }
    }
}

extension TaskState {
    /// Whether a saved task, given its id and saved live dots, is as saved once this state
    /// (built by ``init(continuing:)``) is merged in: no operation here touched it, and a
    /// remove here left it a live dot.
    public func leavesAsSaved(_ id: TaskID, live: LiveDots?) -> Bool {
        guard records.isEmpty || records.position(of: id) == nil, let live else { return false }
        return membershipTombstones.isEmpty || live.contains { !membershipTombstones.contains($0) }
    }

    /// The ids of the tasks some operation of this state touched.
    public var touchedIDs: [TaskID] { records.indices.map { records.id(at: $0) } }
}
