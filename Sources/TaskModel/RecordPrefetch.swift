import CPrefetch

/// Brings into the cache, a few operations ahead, what applying an operation reads: the slot
/// of its task in the position index, the task's id and its record. Applying a log to a
/// state larger than the cache is otherwise bound by waiting for memory, three or four
/// misses an operation, one after another; fetched ahead, they overlap applying the
/// operations before.
///
/// It works in two steps. ``distance`` operations ahead it hashes the task id and fetches
/// the slot; half as far ahead, the slot (in the cache by then) gives the position whose id
/// and record it fetches. Nothing it reads is trusted: a slot that names another task, or a
/// table that grew in between, only makes a hint useless.
///
/// Invariants: ``distance`` is a power of two (the ring of hashes is indexed by a mask) and
/// the size of `hashes`; ``advance(_:)`` returns exactly the hash of the operation about to
/// be applied, which the table trusts to place its id.
struct RecordPrefetch {
    /// How many operations ahead the slots are fetched (records half as far).
    static let distance = 16

    private var commit: UnsafePointer<Commit>
    private let end: UnsafePointer<Commit>
    private var operation = 0
    /// The operations looked at so far (the next one is `distance` ahead of the one applied).
    private var looked = 0
    /// The hash of the task of each of the last `distance` operations looked at, by count mod
    /// `distance` (nil: the operation names no task, or the commits ran out).
    private var hashes = InlineArray<16, Int?>(repeating: nil)

    /// Starts ahead of the first operation of `commits`, fetching for the first few.
    init(_ commits: UnsafeBufferPointer<Commit>, table: borrowing TaskTable) {
        commit = commits.baseAddress!
        end = commit + commits.count
        for _ in 0..<Self.distance { lookAtNext(table) }
        for i in 0..<Self.distance / 2 { fetchRecord(hashes[i], table) }
    }

    /// Called before each operation is applied, in order.
    /// - Returns: the hash of the operation's task, `PositionIndex.hash(id)` (nil if it names none).
    @inline(__always)
    mutating func advance(_ table: borrowing TaskTable) -> Int? {
        let current = hashes[looked & (Self.distance - 1)]
        fetchRecord(hashes[(looked - Self.distance / 2) & (Self.distance - 1)], table)
        lookAtNext(table)
        return current
    }

    /// Hashes the next operation's task and fetches its slot.
    @inline(__always)
    private mutating func lookAtNext(_ table: borrowing TaskTable) {
        var hash: Int?
        while commit < end {
            if operation == commit.pointee.operations.count {
                commit += 1
                operation = 0
                continue
            }
            let id = commit.pointee.operations.withUnsafeBufferPointer { [operation] in ($0.baseAddress! + operation).pointee.task }
            operation += 1
            if let id {
                hash = PositionIndex.hash(id)
                table.positions.prefetchSlot(hash!)
            }
            break
        }
        hashes[looked & (Self.distance - 1)] = hash
        looked += 1
    }

    @inline(__always)
    private func fetchRecord(_ hash: Int?, _ table: borrowing TaskTable) {
        guard let hash else { return }
        let p = Int(table.positions.slots[hash & (table.positions.slots.count - 1)])
        guard p != Int(PositionIndex.empty), p < table.values.count else { return }
        table.taskIDs.withUnsafeBufferPointer { tasklog_prefetch_for_write($0.baseAddress! + p) }
        table.values.withUnsafeBufferPointer { values in
            let record = UnsafeRawPointer(values.baseAddress! + p)
            for line in stride(from: 0, to: MemoryLayout<TaskRecord>.stride, by: 64) {
                tasklog_prefetch_for_write(record + line)
            }
            tasklog_prefetch_for_write(record + MemoryLayout<TaskRecord>.stride - 1)
        }
    }
}

extension PositionIndex {
    /// Fetches into the cache the slot where a probe for an id of this hash starts.
    @inline(__always)
    func prefetchSlot(_ hash: Int) {
        slots.withUnsafeBufferPointer { tasklog_prefetch_for_write($0.baseAddress! + (hash & (slots.count - 1))) }
    }
}
