@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// Which tasks to read and in what order: the one argument of ``TaskStore/tasks(_:)``.
///
/// ```swift
/// let urgent = TaskQuery(status: .open, tag: "work", sort: .priority, limit: 2)
/// ```
public struct TaskQuery: Sendable, Equatable {
    public enum Status: Sendable, Equatable { case open, done, all }
    public enum SortKey: String, Sendable, CaseIterable { case created, priority, due, title }

    public var status: Status
    public var tag: String?
    public var list: String?
    public var sort: SortKey
    public var limit: Int?
    /// Only these tasks (nil: every task). A store reads a few named tasks through its
    /// snapshot's task index, without loading the others.
    public var ids: Set<TaskID>?

    public init(
        status: Status = .open, tag: String? = nil, list: String? = nil, sort: SortKey = .created, limit: Int? = nil,
        ids: Set<TaskID>? = nil
    ) {
        self.status = status
        self.tag = tag
        self.list = list
        self.sort = sort
        self.limit = limit
        self.ids = ids
    }

    public func matches(_ t: TaskItem) -> Bool {
        if let ids, !ids.contains(t.id) { return false }
        return matches(isDone: t.isDone) { t.tags.contains($0) } isOnList: { t.list == $0 }
    }

    /// The same test on the state's record of a task (no ``TaskItem`` needed), read in place.
    func matches(recordAt r: UnsafePointer<TaskRecord>) -> Bool {
        matches(isDone: r.pointee.done?.value ?? false) { r.pointee.tags.contains($0) } isOnList: {
            (r.pointee.list?.value ?? nil) == $0
        }
    }

    /// The same test on a saved task read in place.
    func matches(_ t: borrowing SavedTask) -> Bool {
        if let ids, !ids.contains(t.id) { return false }
        guard tag != nil || list != nil else { return matches(isDone: t.isDone) { _ in true } isOnList: { _ in true } }
        let (tags, itsList) = (t.tags, t.list)
        return matches(isDone: t.isDone) { tag in tag.withUTF8Bytes { b in tags.contains { $0.elementsEqual(b) } } } isOnList: {
            name in name.withUTF8Bytes { b in itsList?.elementsEqual(b) ?? false }
        }
    }

    private func matches(isDone: Bool, hasTag: (String) -> Bool, isOnList: (String) -> Bool) -> Bool {
        switch status {
        case .open where isDone, .done where !isDone: return false
        default: break
        }
        if let tag, !hasTag(tag) { return false }
        if let list, !isOnList(list) { return false }
        return true
    }

    /// Filters, sorts (by the key, then `createdAt`, then id) and limits `tasks`.
    public func apply(to tasks: [TaskItem]) -> [TaskItem] {
        let keys = tasks.indices.filter { matches(tasks[$0]) }.map { i in
            let t = tasks[i]
            return Key(sort, position: i, id: t.id, created: t.createdAt, priority: t.priority, due: t.due, title: t.title)
        }
        return ordered(keys).prefix(kept(of: keys.count)).map { tasks[keys[$0].position] }
    }

    /// What tasks are sorted by, taken out once: comparing the (large) items themselves
    /// would copy them on every comparison.
    struct Key {
        var position: Int
        var id: TaskID
        var created: Timestamp
        /// Priority (higher first) or due time (sooner first), by the sort.
        var rank: Int64
        /// No priority or no due date: after every task that has one.
        var unranked: Bool
        var title: String?

        init(_ sort: SortKey, position: Int, id: TaskID, created: Timestamp, priority: UInt8?, due: Due?, title: @autoclosure () -> String) {
            self.position = position
            self.id = id
            self.created = created
            (rank, unranked) = TaskQuery.rank(sort, priority: priority, due: due)
            self.title = sort == .title ? title() : nil
        }
    }

    /// What a sort by priority (higher first) or due time (sooner first) compares, and whether
    /// the task has no such value (it then comes after every task that has one).
    static func rank(_ sort: SortKey, priority: UInt8?, due: Due?) -> (rank: Int64, unranked: Bool) {
        switch sort {
        case .created, .title: (0, false)
        case .priority: (-Int64(priority ?? 0), priority == nil)
        case .due: (due?.sortKey ?? 0, due == nil)
        }
    }

    /// The positions of `keys` in the query's order (the limit is for the caller to apply).
    /// Positions are sorted, not keys: moving an Int costs nothing, while copying a key
    /// retains its id and title.
    func ordered(_ keys: [Key]) -> [Int] {
        if let order = Self.orderedAsWords(keys) { return order }
        var order = Array(keys.indices)
        keys.withUnsafeBufferPointer { k in
            order.sort { TaskQuery.precedes(k[$0], k[$1]) }
        }
        return order
    }

    /// A key of plain integers: what ``Key`` compares when there is no title and the id is a
    /// UUID, so a comparison copies no string or enum.
    struct WordKey {
        var unranked: Bool
        /// Where the task is in what is being sorted.
        var position: Int32 = 0
        var rank: Int64
        var created: Timestamp
        var idHigh: UInt64
        var idLow: UInt64

        @inline(__always)
        static func precedes(_ a: WordKey, _ b: WordKey) -> Bool {
            if a.unranked != b.unranked { return b.unranked }
            if a.rank != b.rank { return a.rank < b.rank }
            if a.created != b.created { return a.created < b.created }
            return a.idHigh != b.idHigh ? a.idHigh < b.idHigh : a.idLow < b.idLow
        }
    }

    /// The order of ``ordered(_:)`` compared as words, or nil when some key has a title or an id
    /// that is not a UUID (the common sorts of UUID tasks take this path).
    private static func orderedAsWords(_ keys: [Key]) -> [Int]? {
        var words: [WordKey] = []
        words.reserveCapacity(keys.count)
        for k in keys {
            guard k.title == nil, let (high, low) = k.id.uuid else { return nil }
            words.append(WordKey(unranked: k.unranked, rank: k.rank, created: k.created, idHigh: high, idLow: low))
        }
        var order = Array(words.indices)
        words.withUnsafeBufferPointer { w in
            order.sort { WordKey.precedes(w[$0], w[$1]) }
        }
        return order
    }

    private static func precedes(_ a: borrowing Key, _ b: borrowing Key) -> Bool {
        if a.unranked != b.unranked { return b.unranked }
        if a.rank != b.rank { return a.rank < b.rank }
        if let ta = a.title, let tb = b.title, ta != tb { return ta.utf8.lexicographicallyPrecedes(tb.utf8) }
        return createdOrder(a.created, a.id, b.created, b.id)
    }

    /// How many of `count` matching tasks the limit keeps.
    func kept(of count: Int) -> Int { min(count, max(0, limit ?? count)) }

    static func createdOrder(_ ca: Timestamp, _ a: TaskID, _ cb: Timestamp, _ b: TaskID) -> Bool {
        ca != cb ? ca < cb : a < b
    }
}

extension TaskState {
    // Both walk the records in storage order through a pointer (one pass through memory, no
    // record copied), keep small sort keys, and build each task only when its turn comes.

    /// The live tasks matching `query`, sorted and limited as it asks.
    public func tasks(_ query: TaskQuery) -> [TaskItem] {
        let order = orderedPositions(query)
        // Made side by side on a large state: the items are mostly fresh memory (SideBySide).
        return records.withRecords { recs in
            [TaskItem](unsafeUninitializedCapacity: order.count) { items, made in
                let (items, recs) = (Shared(items.baseAddress), Shared(recs.baseAddress))
                SideBySide.forEach(SideBySide.parts(of: order.count)) { _, part in
                    guard let base = items.pointer else { return }  // no item to make
                    MemoryHint.mapIn(base + part.lowerBound, bytes: part.count * MemoryLayout<TaskItem>.stride)
                    for i in part {
                        let p = order[i]
                        (base + i).initialize(
                            to: TaskItem(id: records.id(at: p), recordAt: recs.pointer! + p, isDeleted: false))
                    }
                }
                made = order.count
            }
        }
    }

    /// Hands the live tasks matching `query` to `body` one at a time, in the query's order
    /// (no array of every task).
    public func forEachTask(_ query: TaskQuery, _ body: (TaskItem) throws -> Void) rethrows {
        for p in orderedPositions(query) { try body(liveItem(at: p)) }
    }

    /// The positions in ``records`` of the live tasks matching `query`, in its order and limit.
    private func orderedPositions(_ query: TaskQuery) -> [Int] {
        if query.sort != .title, let order = orderedPositionsAsWords(query) { return order }
        var keys: [TaskQuery.Key] = []
        keys.reserveCapacity(records.liveCount)
        forEachMatch(query) { p, id, r in
            keys.append(TaskQuery.Key(
                query.sort, position: p, id: id, created: r.pointee.createdAt ?? .zero,
                priority: r.pointee.priority?.value ?? nil, due: r.pointee.due?.value ?? nil,
                title: r.pointee.title?.value ?? ""))
            return true
        }
        return query.ordered(keys).prefix(query.kept(of: keys.count)).map { keys[$0].position }
    }

    /// The same, gathering only keys of plain words: for every sort but by title, when each
    /// matching task's id is a UUID (nil otherwise).
    private func orderedPositionsAsWords(_ query: TaskQuery) -> [Int]? {
        var words: [TaskQuery.WordKey] = []
        words.reserveCapacity(records.liveCount)
        let allUUIDs = forEachMatch(query) { p, id, r in
            guard let (high, low) = id.uuid else { return false }
            let (rank, unranked) = TaskQuery.rank(
                query.sort, priority: r.pointee.priority?.value ?? nil, due: r.pointee.due?.value ?? nil)
            words.append(TaskQuery.WordKey(
                unranked: unranked, position: Int32(p), rank: rank, created: r.pointee.createdAt ?? .zero,
                idHigh: high, idLow: low))
            return true
        }
        guard allUUIDs else { return nil }
        var order = Array(words.indices)
        words.withUnsafeBufferPointer { w in order.sort { TaskQuery.WordKey.precedes(w[$0], w[$1]) } }
        return order.prefix(query.kept(of: words.count)).map { Int(words[$0].position) }
    }

    /// Visits the live tasks matching `query` in storage order, each record read in place
    /// (position, id, record); `body` returns false to stop.
    /// - Returns: false if `body` stopped the walk.
    @discardableResult
    private func forEachMatch(
        _ query: TaskQuery, _ body: (Int, TaskID, UnsafePointer<TaskRecord>) -> Bool
    ) -> Bool {
        records.withRecords { buf in
            @inline(__always) func visit(_ p: Int) -> Bool {
                guard records.liveDots(at: p) != nil else { return true }
                let r = buf.baseAddress! + p
                return !query.matches(recordAt: r) || body(p, records.id(at: p), r)
            }
            guard let ids = query.ids else {
                for p in buf.indices where !visit(p) { return false }
                return true
            }
            for p in ids.compactMap({ records.position(of: $0) }).sorted() where !visit(p) { return false }
            return true
        }
    }

    private func liveItem(at position: Int) -> TaskItem {
        records.withRecords { TaskItem(id: records.id(at: position), recordAt: $0.baseAddress! + position, isDeleted: false) }
    }
}
