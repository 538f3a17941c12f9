/// The records of a state, by task id: a dense array of records in the order their tasks were
/// first seen, and a hash index from id to position.
///
/// A dictionary of records would leave a quarter or more of its (large) slots empty and
/// scatter the rest; here every record sits next to the previous one, so reading every task
/// walks memory once and a store of 10,000 tasks touches about 2.5 MB fewer pages. Records
/// are never removed (a deleted task keeps its registers, see ``TaskState``).
public struct TaskTable: Sendable, Equatable, RandomAccessCollection {
    public typealias Element = (id: TaskID, record: TaskRecord)

    @usableFromInline var positions: [TaskID: Int32] = [:]
    @usableFromInline var taskIDs: [TaskID] = []
    @usableFromInline var values: [TaskRecord] = []

    public init() {}

    /// Every task id, in the order the tasks were first seen.
    public var ids: [TaskID] { taskIDs }

    public var startIndex: Int { 0 }
    public var endIndex: Int { values.count }
    public subscript(position: Int) -> Element { (taskIDs[position], values[position]) }

    /// The record of `id`, nil if the state has seen no operation on it.
    public subscript(id: TaskID) -> TaskRecord? {
        guard let p = positions[id] else { return nil }
        return values[Int(p)]
    }

    /// The id at `position` (no record copied).
    @inlinable public func id(at position: Int) -> TaskID { taskIDs[position] }

    /// Reads the records in place, in position order (no record is copied).
    @inlinable public func withRecords<R>(_ body: (UnsafeBufferPointer<TaskRecord>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }

    /// Makes room for `count` records.
    public mutating func reserveCapacity(_ count: Int) {
        positions.reserveCapacity(count)
        taskIDs.reserveCapacity(count)
        values.reserveCapacity(count)
    }

    /// Changes the record of `id` in place, starting from an empty record if there is none.
    @inlinable @inline(__always)
    public mutating func update<R>(_ id: TaskID, _ body: (inout TaskRecord) -> R) -> R {
        if let p = positions[id] { return body(&values[Int(p)]) }
        positions[id] = Int32(values.count)
        taskIDs.append(id)
        values.append(TaskRecord())
        return body(&values[values.count - 1])
    }

    /// Adds a record for `id`, filled in place by `body` (no record is copied).
    /// - Returns: false, changing nothing, if `id` already has a record.
    public mutating func add<E: Error>(_ id: TaskID, _ body: (inout TaskRecord) throws(E) -> Void) throws(E) -> Bool {
        guard positions[id] == nil else { return false }
        values.append(TaskRecord())
        do {
            try body(&values[values.count - 1])
        } catch {
            values.removeLast()
            throw error
        }
        positions[id] = Int32(values.count - 1)
        taskIDs.append(id)
        return true
    }

    /// Equal when both hold the same record for every id, in whatever order.
    public static func == (a: TaskTable, b: TaskTable) -> Bool {
        guard a.count == b.count else { return false }
        for (id, record) in a where b[id] != record { return false }
        return true
    }
}
