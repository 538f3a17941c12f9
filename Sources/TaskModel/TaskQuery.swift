import CRDTCore

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
        var t = tasks
        apply(to: &t)
        return t
    }

    /// Filters, sorts and limits `tasks` in place, moving each item once (no second array).
    public func apply(to tasks: inout [TaskItem]) {
        tasks.removeAll { !matches($0) }
        let order = sortedPositions(tasks)
        // Move the item of position order[k] to k, one cycle of the permutation at a time.
        var placed = [Bool](repeating: false, count: tasks.count)
        for start in order.indices where !placed[start] {
            var k = start
            while true {
                placed[k] = true
                let from = order[k]
                guard from != start else { break }
                tasks.swapAt(k, from)
                k = from
            }
        }
        if let limit, tasks.count > limit { tasks.removeSubrange(max(0, limit)...) }
    }

    /// The positions of `tasks` in sorted order. Sorting positions by keys taken out once
    /// avoids copying two (large) items on every comparison.
    private func sortedPositions(_ tasks: [TaskItem]) -> [Int] {
        let order = Array(tasks.indices)
        let created = tasks.map(\.createdAt)
        let ids = tasks.map(\.id)
        switch sort {
        case .created:
            return order.sorted { TaskQuery.createdOrder(created[$0], ids[$0], created[$1], ids[$1]) }
        case .priority:
            // Most urgent first; no priority last.
            let rank = tasks.map { $0.priority.map(Int.init) ?? -1 }
            return order.sorted { i, j in
                rank[i] != rank[j] ? rank[i] > rank[j] : TaskQuery.createdOrder(created[i], ids[i], created[j], ids[j])
            }
        case .due:
            // Soonest first; no due date last.
            let due = tasks.map { $0.due?.sortKey }
            return order.sorted { i, j in
                if due[i] != due[j] {
                    guard let di = due[i] else { return false }
                    guard let dj = due[j] else { return true }
                    return di < dj
                }
                return TaskQuery.createdOrder(created[i], ids[i], created[j], ids[j])
            }
        case .title:
            let titles = tasks.map(\.title)
            return order.sorted { i, j in
                titles[i] != titles[j] ? titles[i].utf8.lexicographicallyPrecedes(titles[j].utf8)
                    : TaskQuery.createdOrder(created[i], ids[i], created[j], ids[j])
            }
        }
    }

    static func createdOrder(_ ca: Timestamp, _ a: TaskID, _ cb: Timestamp, _ b: TaskID) -> Bool {
        ca != cb ? ca < cb : a < b
    }

    static func createdOrder(_ a: TaskItem, _ b: TaskItem) -> Bool {
        createdOrder(a.createdAt, a.id, b.createdAt, b.id)
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
