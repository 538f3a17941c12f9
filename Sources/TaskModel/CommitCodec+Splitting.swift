@_spi(Engine) import OpLogFormat

extension CommitCodec {
    /// Bytes a commit takes in a payload besides its operations and task table: the table's
    /// length, the time step, an explicit logical value and the operation count, at their widest.
    static let commitOverheadBound = 10 + 10 + 5 + 10

    /// Cuts `operations` into consecutive runs whose commits, each in a payload of its own,
    /// take at most `limit` bytes, so that each fits a record. A run is cut before the
    /// operation that would pass the limit; a single operation larger than it is a run alone,
    /// which the caller checks. The sizes counted are bounds: the payloads written are at most
    /// as large.
    public static func split(_ operations: [TaskOperation], payloadLimit limit: Int) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = 0
        var size = commitOverheadBound
        var previousTask: TaskID?
        for (i, op) in operations.enumerated() {
            var added = sizeBound(of: op, indexBound: UInt64(i - start))
            // The task's table entry, counted once per stretch of its operations (a task
            // mentioned again after another counts again: still a bound).
            if let t = op.task, t != previousTask || i == start { added += entrySize(t) }
            if size + added > limit && i > start {
                runs.append(start..<i)
                start = i
                size = commitOverheadBound
                added = sizeBound(of: op, indexBound: 0) + (op.task.map(entrySize) ?? 0)
            }
            size += added
            previousTask = op.task
        }
        if start < operations.count { runs.append(start..<operations.count) }
        return runs
    }

    /// The bytes `op` takes with a task index of at most `indexBound`.
    private static func sizeBound(of op: TaskOperation, indexBound: UInt64) -> Int {
        var counter = ByteCounter()
        encode(op, taskIndex: 0, into: &counter)
        return counter.count + (op.task == nil ? 0 : ByteCounter.uvarintSize(indexBound) - 1)
    }

    /// The bytes of `task`'s entry in the task table.
    private static func entrySize(_ task: TaskID) -> Int {
        var counter = ByteCounter()
        StateCodec.taskID(task, &counter)
        return counter.count
    }
}
