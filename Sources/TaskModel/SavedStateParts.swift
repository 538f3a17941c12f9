@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

// Listing a saved state merged with the operations after it in parts side by side, one per
// core: what a search of a large store needs, where most of the time goes to stepping over
// the tasks that do not match (Spec/log-format.md, "Listing without loading").

extension TaskState {
    /// ``forEachTask(_:mergingSaved:head:into:)`` in parts side by side, each part handing its
    /// tasks to its own sink: `sinks[k]` gets those of the part that starts at `splits[k - 1]`
    /// (the first part at the first task), and the last sink also the tasks added after the
    /// saved state. The sinks take their turns in order (``TaskPartSink``). Sinks beyond the
    /// parts read are dropped from `sinks`.
    /// - Parameters:
    ///   - splits: where the parts after the first start (a snapshot's task index knows);
    ///     none, or a limit in `query`, reads in one part.
    ///   - words: a saved task whose title and notes do not hold these words is stepped over,
    ///     the rest of it unread; for sinks that refuse such a task anyway.
    /// - Precondition: as for ``forEachTask(_:mergingSaved:head:into:)``; `sinks` not empty.
    /// - Returns: whether a live task read may name a parent or a dependency (when the
    ///   limit stopped the reading, not every task was read).
    /// - Throws: when `saved` is damaged; the sinks whose turn came may have had tasks already.
    @discardableResult
    package func forEachTask<Sink: TaskPartSink>(
        _ query: TaskQuery, mergingSaved saved: SharedBytes, head: StateCodec.Head, splits: [StateCodec.Split],
        words: WordSearch?, into sinks: inout [Sink]
    ) throws(DecodeError) -> Bool {
        precondition(query.sort == .created, "a saved state lists in creation order only")
        precondition(!sinks.isEmpty, "a listing needs a sink")
        let remaining = query.limit ?? .max
        guard remaining > 0 else { return false }
        var parts = sinks.map { ListingPart(state: self, query: query, head: head, words: words, sink: $0, remaining: remaining) }
        sinks.removeAll()  // each sink now held once, by its part
        defer { sinks = parts.map { $0.sink as! Sink } }
        try StateCodec.forEachTask(in: saved, splits: query.limit == nil ? splits : [], visitors: &parts)
        guard !parts.contains(where: \.stopped) else { return parts.contains(where: \.sawLink) }
        var merged = [Bool](repeating: false, count: records.count)
        var addedLater: [(id: TaskID, record: TaskRecord)] = []
        for part in parts {
            for p in part.merged { merged[p] = true }
            addedLater += part.addedLater
        }
        let last = parts.count - 1
        handAddedAfterSaved(&addedLater, merged: merged, head: head, only: query.ids) { parts[last].hand($0, $1) }
        return parts.contains(where: \.sawLink)
    }
}

/// One part of a saved state merged with the state after it (`state`), read as
/// ``TaskState/forEachTask(_:mergingSaved:head:splits:words:into:)`` lists it: a saved task
/// the later operations touch is read whole and merged, any other as shown, or not at all
/// when it is not on the list or not asked for.
///
/// The sink is held as any sink, so that reading the tasks, which calls on it only for the
/// tasks it gets, is compiled once for this type rather than left generic.
struct ListingPart: SavedTaskVisitor {
    let state: TaskState
    let query: TaskQuery
    let head: StateCodec.Head
    let words: WordSearch?
    var sink: any TaskPartSink
    /// How many more tasks the query's limit lets through.
    var remaining: Int
    /// The positions of the state's records merged with saved tasks.
    var merged: [Int] = []
    /// Saved tasks that the later operations added (a write arrived before the add): they now
    /// count as created after every saved task.
    var addedLater: [(id: TaskID, record: TaskRecord)] = []
    /// Whether the limit was reached.
    var stopped = false
    /// Whether a live task read, or a task stepped over, may name a parent or a dependency.
    var sawLink = false
    /// Whether every saved task is read in place or not at all: no id asked for, and no later
    /// operation to merge.
    let everyTaskPlain: Bool

    init(state: TaskState, query: TaskQuery, head: StateCodec.Head, words: WordSearch?, sink: any TaskPartSink, remaining: Int) {
        (self.state, self.query, self.head, self.words, self.sink, self.remaining) = (state, query, head, words, sink, remaining)
        everyTaskPlain = query.ids == nil && state.records.isEmpty
    }

    func reading(_ id: TaskID, _ savedLive: LiveDots?) -> StateCodec.TaskReading {
        if let ids = query.ids, !ids.contains(id) { return .skip }
        if !state.records.isEmpty, state.records.position(of: id) != nil { return .record }
        return state.surviving(savedLive) == nil ? .skip : .item
    }

    func isPlain(_ id: TaskID) -> Bool { everyTaskPlain || (query.ids == nil && state.records.position(of: id) == nil) }

    mutating func record(_ id: TaskID, _ record: inout TaskRecord, _ savedLive: LiveDots?) -> Bool {
        var live = state.surviving(savedLive)
        let savedCreation = record.createdAt
        if let p = state.records.position(of: id) {
            record.merge(state.records.values[p])
            if let added = state.addedDots(at: p, head) {
                if live == nil { live = added } else { live!.formUnion(added) }
            }
            merged.append(p)
        }
        guard live != nil else { return true }
        if record.holdsLink { sawLink = true }
        guard record.createdAt == savedCreation else {
            addedLater.append((id, record))
            return true
        }
        return withUnsafePointer(to: &record) { hand(id, $0) }
    }

    mutating func item(_ task: borrowing SavedTask) -> Bool {
        if task.holdsLink { sawLink = true }
        guard query.matches(task) else { return true }
        sink.take(task)
        return counted()
    }

    /// Hands on a task read whole (merged, or added after the saved state) if it matches.
    mutating func hand(_ id: TaskID, _ record: UnsafePointer<TaskRecord>) -> Bool {
        if record.pointee.holdsLink { sawLink = true }
        guard query.matches(recordAt: record) else { return true }
        sink.take(TaskItem(id: id, recordAt: record, isDeleted: false))
        return counted()
    }

    private mutating func counted() -> Bool {
        remaining -= 1
        stopped = remaining == 0
        return !stopped
    }

    mutating func noteLink() { sawLink = true }
    var wantsPause: Bool { sink.wantsPause }
    mutating func takeTurn() { sink.takeTurn() }
}

/// A plain sink as the one part of a listing read in one part, through a pointer.
struct InTurn<Sink: TaskSink>: TaskPartSink {
    let sink: UnsafeMutablePointer<Sink>

    mutating func take(_ task: TaskItem) { sink.pointee.take(task) }
    mutating func take(_ task: borrowing SavedTask) { sink.pointee.take(task) }
    var wantsPause: Bool { false }
    func takeTurn() {}
}
