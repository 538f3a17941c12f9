@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// The records of a state, by task id: a dense array of records in the order their tasks were
/// first seen, a hash index from id to position, and beside each record the task's live
/// membership dots (nil when the task is not on the list).
///
/// A dictionary of records would leave a quarter or more of its (large) slots empty and
/// scatter the rest; here every record sits next to the previous one, so reading every task
/// walks memory once, and whether a task is live is read beside its record instead of in a
/// second hash table. Records are never removed (a deleted task keeps its registers, see
/// ``TaskState``).
///
/// Invariants (``invariantViolations()`` checks them, with the index's): ids, records and
/// live dots are arrays of one length; no id is at two positions; the index holds every
/// position; `liveCount` counts the tasks with live dots; `lastFound` names an id at its position.
@_spi(Engine) public struct TaskTable: Sendable, Equatable, RandomAccessCollection {
    public typealias Element = (id: TaskID, record: TaskRecord)

    @usableFromInline var positions = PositionIndex()
    @usableFromInline var taskIDs: [TaskID] = []
    @usableFromInline var values: [TaskRecord] = []
    /// The live membership dots of each record's task (the OR-set of ``TaskState/membership``).
    @usableFromInline var live: [LiveDots?] = []
    /// How many tasks have live dots.
    @usableFromInline var liveCount = 0
    /// The id ``positionCreating(_:)`` found last, and its position (positions never change).
    @usableFromInline var lastFound: (id: TaskID, position: Int32)?

    public init() {}

    /// Every task id, in the order the tasks were first seen.
    public var ids: [TaskID] { taskIDs }

    public var startIndex: Int { 0 }
    public var endIndex: Int { values.count }
    public subscript(position: Int) -> Element { (taskIDs[position], values[position]) }

    /// The record of `id`, nil if the state has seen no operation on it.
    public subscript(id: TaskID) -> TaskRecord? {
        guard let p = position(of: id) else { return nil }
        return values[p]
    }

    /// The id at `position` (no record copied).
    @inlinable public func id(at position: Int) -> TaskID { taskIDs[position] }

    /// The live membership dots of the task at `position`, nil when it is not on the list.
    @inlinable public func liveDots(at position: Int) -> LiveDots? { live[position] }

    /// The position of `id`, if it has a record.
    @inlinable public func position(of id: TaskID) -> Int? {
        positions.position(of: id, ids: taskIDs).map(Int.init)
    }

    /// Reads the records in place, in position order (no record is copied).
    @inlinable public func withRecords<R>(_ body: (UnsafeBufferPointer<TaskRecord>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }

    /// Makes room for `count` records.
    /// - Parameter filling: how many records are about to be added at once (a snapshot being
    ///   decoded): the memory for them is mapped in now, in one step per array, rather than
    ///   a page fault at a time as they are written, and a large table is asked for 2 MiB
    ///   pages first (``grow()`` says why).
    public mutating func reserveCapacity(_ count: Int, filling: Int = 0) {
        positions.reserveCapacity(count, ids: taskIDs)
        taskIDs.reserveCapacity(count)
        values.reserveCapacity(count)
        live.reserveCapacity(count)
        let filled = Swift.min(filling, count)
        Self.mapIn(&taskIDs, filled)
        Self.mapIn(&values, filled)
        Self.mapIn(&live, filled)
    }

    /// From this many records on, the table grows itself (``grow()``).
    @usableFromInline static var largeTable: Int { 1 << 14 }

    /// Doubles the room for records. Each array moves into fresh storage that is asked for
    /// large pages before anything is written to it (``MemoryHint/preferLargePages(_:bytes:)``):
    /// updates land at random among the records of a big state, and with 4 KiB pages nearly
    /// every one of them missed the TLB.
    @usableFromInline mutating func grow() {
        let capacity = values.count * 2
        Self.move(&taskIDs, toCapacity: capacity)
        Self.move(&values, toCapacity: capacity)
        Self.move(&live, toCapacity: capacity)
    }

    private static func move<T>(_ array: inout [T], toCapacity capacity: Int) {
        var fresh: [T] = []
        fresh.reserveCapacity(capacity)
        let bytes = fresh.capacity * MemoryLayout<T>.stride
        fresh.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { MemoryHint.preferLargePages(base, bytes: bytes) }
        }
        fresh.append(contentsOf: array)
        array = fresh
    }

    /// Maps in the memory the first `count` elements of `array`'s reserved storage will take
    /// (``MemoryHint``).
    private static func mapIn<T>(_ array: inout [T], _ count: Int) {
        guard array.isEmpty else { return }
        let capacity = array.capacity * MemoryLayout<T>.stride
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            MemoryHint.preferLargePages(base, bytes: capacity)
            MemoryHint.mapIn(base, bytes: count * MemoryLayout<T>.stride)
        }
    }

    /// A table of `count` tasks whose records are filled in `parts` (which cover `0..<count`)
    /// side by side (``SideBySide``), with room for `capacity`. `fill` gets a part's number,
    /// its positions and where to initialize each position's id, record and live dots; it
    /// initializes every one of them and returns true, or initializes none (undoing what it
    /// did) and returns false.
    /// - Returns: nil, with nothing left initialized, when a part returned false or two
    ///   positions hold the same id.
    init?(count: Int, capacity: Int, parts: [Range<Int>], fill: @Sendable (Int, Range<Int>, TaskSlots) -> Bool) {
        let capacity = Swift.max(capacity, count, 1)  // so that every buffer has an address
        var failed = false
        var ids: [TaskID] = []
        var records: [TaskRecord] = []
        let live = [LiveDots?](unsafeUninitializedCapacity: capacity) { liveBuffer, liveCount in
            records = [TaskRecord](unsafeUninitializedCapacity: capacity) { recordBuffer, recordCount in
                ids = [TaskID](unsafeUninitializedCapacity: capacity) { idBuffer, idCount in
                    let slots = TaskSlots(
                        ids: idBuffer.baseAddress!, records: recordBuffer.baseAddress!, live: liveBuffer.baseAddress!)
                    MemoryHint.preferLargePages(slots.records, bytes: capacity * MemoryLayout<TaskRecord>.stride)
                    let done = UnsafeMutableBufferPointer<Bool>.allocate(capacity: parts.count)
                    defer { done.deallocate() }
                    done.initialize(repeating: false)
                    let flags = Shared(done.baseAddress)
                    SideBySide.forEach(parts) { part, positions in
                        slots.mapIn(positions)
                        flags.pointer![part] = fill(part, positions, slots)
                    }
                    if done.allSatisfy({ $0 }) {
                        (idCount, recordCount, liveCount) = (count, count, count)
                        return
                    }
                    failed = true
                    for (part, positions) in parts.enumerated() where done[part] { slots.deinitialize(positions) }
                }
            }
        }
        guard !failed else { return nil }
        self.init()
        taskIDs = ids
        values = records
        self.live = live
        positions.reserveCapacity(capacity, ids: [])
        for p in 0..<count {
            let (slot, found) = positions.probe(taskIDs[p], ids: taskIDs)
            guard found == nil else { return nil }
            positions.fill(slot, with: Int32(p), ids: taskIDs)
            if live[p] != nil { liveCount += 1 }
        }
    }

    /// The position of `id`'s record, created empty (and not live) if there is none.
    /// - Parameter hash: `PositionIndex.hash(id)`, when the caller has it already.
    @inlinable @inline(__always)
    mutating func positionCreating(_ id: TaskID, hash: Int? = nil) -> Int {
        // The operations of one commit mostly name one task (a create is three of them).
        if let last = lastFound, last.id == id { return Int(last.position) }
        assert(hash == nil || hash == PositionIndex.hash(id), "a hash given for another id")
        // One probe finds the id, or the slot its new position goes in.
        let (slot, found) = positions.probe(id, hash: hash, ids: taskIDs)
        let p: Int32
        if let found {
            p = found
        } else {
            p = Int32(values.count)
            if values.count == values.capacity && values.count >= Self.largeTable { grow() }
            taskIDs.append(id)
            values.append(TaskRecord())
            live.append(nil)
            positions.fill(slot, with: p, ids: taskIDs)
        }
        lastFound = (id, p)
        return Int(p)
    }

    /// Changes the record of `id` in place, starting from an empty record if there is none.
    @inlinable @inline(__always)
    public mutating func update<R>(_ id: TaskID, _ body: (inout TaskRecord) -> R) -> R {
        update(id, hash: nil, body)
    }

    /// ``update(_:_:)`` given the id's hash, `PositionIndex.hash(id)`.
    @inlinable @inline(__always)
    mutating func update<R>(_ id: TaskID, hash: Int?, _ body: (inout TaskRecord) -> R) -> R {
        let p = positionCreating(id, hash: hash)
        return body(&values[p])
    }

    /// Adds a record for `id`, filled in place by `body`, with the task's live dots.
    /// - Returns: false, changing nothing, if `id` already has a record.
    public mutating func add<E: Error>(
        _ id: TaskID, live dots: LiveDots?, _ body: (inout TaskRecord) throws(E) -> Void
    ) throws(E) -> Bool {
        // One probe finds the id, or the slot its position goes in once `body` has filled
        // the record.
        let (slot, found) = positions.probe(id, ids: taskIDs)
        guard found == nil else { return false }
        let next = Int32(values.count)
        values.append(TaskRecord())
        do {
            try body(&values[values.count - 1])
        } catch {
            values.removeLast()
            throw error
        }
        taskIDs.append(id)
        live.append(dots)
        positions.fill(slot, with: next, ids: taskIDs)
        if dots != nil { liveCount += 1 }
        return true
    }

    // MARK: Membership (an add-wins OR-set over the records; Spec/crdt.md, "OR-set")

    /// Adds `dot` to the live dots at `position`.
    @inlinable mutating func addLive(_ dot: OperationID, at position: Int) {
        if live[position] == nil {
            live[position] = LiveDots(dot)
            liveCount += 1
        } else {
            live[position]!.insert(dot)
        }
    }

    /// Adds every dot of `dots` to the live dots at `position`.
    mutating func addLive(_ dots: LiveDots, at position: Int) {
        if live[position] == nil {
            live[position] = dots
            liveCount += 1
        } else {
            live[position]!.formUnion(dots)
        }
    }

    /// Removes `dot` from the live dots at `position`; false if it was not there.
    @discardableResult
    mutating func removeLive(_ dot: OperationID, at position: Int) -> Bool {
        guard let dots = live[position], dots.contains(dot) else { return false }
        live[position] = dots.removing(dot)
        if live[position] == nil { liveCount -= 1 }
        return true
    }

    /// Removes `dot` wherever it is live (a dot named under another task by a malformed remove).
    mutating func removeLiveAnywhere(_ dot: OperationID) {
        if let p = live.firstIndex(where: { $0?.contains(dot) ?? false }) { removeLive(dot, at: p) }
    }

    /// Removes every dot of `removed` from every task's live dots.
    mutating func subtractLive(_ removed: Set<OperationID>) {
        guard !removed.isEmpty else { return }
        for p in live.indices {
            guard let dots = live[p] else { continue }
            let kept = dots.subtracting(removed)
            if kept?.count != dots.count {
                live[p] = kept
                if kept == nil { liveCount -= 1 }
            }
        }
    }

    /// Equal when both hold the same record and live dots for every id, in whatever order.
    public static func == (a: TaskTable, b: TaskTable) -> Bool {
        guard a.count == b.count, a.liveCount == b.liveCount else { return false }
        for p in a.indices {
            guard let q = b.position(of: a.taskIDs[p]), b.values[q] == a.values[p], b.live[q] == a.live[p] else {
                return false
            }
        }
        return true
    }
}

/// Where the parts of a table filled side by side initialize their tasks
/// (``TaskTable/init(count:capacity:parts:fill:)``), each only at its own positions.
struct TaskSlots: @unchecked Sendable {
    let ids: UnsafeMutablePointer<TaskID>
    let records: UnsafeMutablePointer<TaskRecord>
    let live: UnsafeMutablePointer<LiveDots?>

    /// Maps in the memory the tasks at `positions` will take, in one step per array rather
    /// than a page fault at a time (``MemoryHint``).
    func mapIn(_ positions: Range<Int>) {
        MemoryHint.mapIn(ids + positions.lowerBound, bytes: positions.count * MemoryLayout<TaskID>.stride)
        MemoryHint.mapIn(records + positions.lowerBound, bytes: positions.count * MemoryLayout<TaskRecord>.stride)
        MemoryHint.mapIn(live + positions.lowerBound, bytes: positions.count * MemoryLayout<LiveDots?>.stride)
    }

    /// Deinitializes the tasks at `positions`.
    func deinitialize(_ positions: Range<Int>) {
        guard !positions.isEmpty else { return }
        (ids + positions.lowerBound).deinitialize(count: positions.count)
        (records + positions.lowerBound).deinitialize(count: positions.count)
        (live + positions.lowerBound).deinitialize(count: positions.count)
    }
}

/// The value of a dictionary slot read through the defaulted subscript as inout, which
/// inserts the default when the key is new: one hash lookup to find or add a key.
@usableFromInline @inline(__always) func valueInserting<T>(_ slot: inout T) -> T { slot }
