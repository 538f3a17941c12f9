/// Which tasks to list and in what order.
public struct TaskQuery: Sendable, Equatable {
    public enum Status: Sendable, Equatable { case open, done, all }
    public enum SortKey: String, Sendable, CaseIterable { case created, priority, due, title }

    public var status: Status
    public var tag: String?
    public var list: String?
    public var sort: SortKey
    public var limit: Int?

    public init(status: Status = .open, tag: String? = nil, list: String? = nil, sort: SortKey = .created, limit: Int? = nil) {
        self.status = status
        self.tag = tag
        self.list = list
        self.sort = sort
        self.limit = limit
    }

    public func matches(_ t: TaskItem) -> Bool {
        switch status {
        case .open where t.isDone, .done where !t.isDone: return false
        default: break
        }
        if let tag, !t.tags.contains(tag) { return false }
        if let list, t.list != list { return false }
        return true
    }

    /// Filters, sorts (by the key, then `createdAt`, then id) and limits `tasks`.
    public func apply(to tasks: [TaskItem]) -> [TaskItem] {
        let filtered = tasks.filter(matches)
        // Sort positions, not the (large) items themselves.
        var order = Array(filtered.indices)
        order.sort { i, j in
            let a = filtered[i]
            let b = filtered[j]
            switch sort {
            case .created: break
            case .priority:
                // Most urgent first; no priority last.
                let pa = a.priority.map(Int.init) ?? -1
                let pb = b.priority.map(Int.init) ?? -1
                if pa != pb { return pa > pb }
            case .due:
                if a.due != b.due {
                    guard let da = a.due else { return false }
                    guard let db = b.due else { return true }
                    if da.sortKey != db.sortKey { return da.sortKey < db.sortKey }
                }
            case .title:
                if a.title != b.title { return a.title.utf8.lexicographicallyPrecedes(b.title.utf8) }
            }
            return TaskQuery.createdOrder(a, b)
        }
        if let limit, order.count > limit { order.removeSubrange(limit...) }
        return order.map { filtered[$0] }
    }

    static func createdOrder(_ a: TaskItem, _ b: TaskItem) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.id < b.id
    }

    /// The widget view: the `n` most urgent open tasks: priority high to low (none last),
    /// then due soonest (none last), then oldest.
    public static func top(_ n: Int, of tasks: [TaskItem]) -> [TaskItem] {
        let open = tasks.filter { !$0.isDone }
        return Array(
            open.sorted { a, b in
                let pa = a.priority.map(Int.init) ?? -1
                let pb = b.priority.map(Int.init) ?? -1
                if pa != pb { return pa > pb }
                let da = a.due?.sortKey ?? .max
                let db = b.due?.sortKey ?? .max
                if da != db { return da < db }
                return createdOrder(a, b)
            }.prefix(max(0, n)))
    }
}
