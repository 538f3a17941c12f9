@_spi(Engine) import CRDTCore

/// The live tasks as a forest of subtasks, with each task's effective parent (Spec/crdt.md,
/// "Subtasks, dependencies and dates"). A parent that is not live, or missing, counts as none.
/// Concurrent moves can make parent registers form a cycle; in each cycle the link written
/// with the lowest stamp is cut, so every replica with the same state sees the same forest.
///
/// Built in time linear in the number of tasks, without recursion (a chain 10,000 deep is fine).
public struct TaskTree: Sendable {
    /// The live tasks, in the order given.
    public let tasks: [TaskItem]
    private let position: [TaskID: Int]
    /// Each task's effective parent, as a position (-1 for none).
    private let parentAt: [Int]
    private let childrenAt: [[Int]]
    /// The tasks whose parent link was cut to break a cycle.
    public let cutLinks: Set<TaskID>

    /// The tree of the live tasks of `state`.
    public init(state: borrowing TaskState) {
        let records = state.records
        self.init(state.liveTasks) { ids in
            var stamps: [TaskID: Stamp] = [:]
            for id in ids { stamps[id] = records[id]?.meta[PlanningKey.parent]?.stamp }
            return stamps
        }
    }

    /// The tree of `tasks` (the live ones of a state). `parentStamps` gives the stamps of the
    /// parent registers of the tasks named; it is called only when some cycle must be cut.
    package init<E: Error>(_ tasks: [TaskItem], parentStamps: (Set<TaskID>) throws(E) -> [TaskID: Stamp]) throws(E) {
        let live = tasks.filter { !$0.isDeleted }
        var position: [TaskID: Int] = [:]
        position.reserveCapacity(live.count)
        for (i, t) in live.enumerated() { position[t.id] = i }
        var parentAt = live.map { t in t.parent.flatMap { position[$0] } ?? -1 }
        let cycles = Self.cycles(parentAt)
        var cut = Set<TaskID>()
        if !cycles.isEmpty {
            let stamps = try parentStamps(Set(cycles.joined().map { live[$0].id }))
            for cycle in cycles {
                let loser = cycle.min { a, b in Self.linkPrecedes(live[a].id, live[b].id, stamps) }!
                parentAt[loser] = -1
                cut.insert(live[loser].id)
            }
        }
        var childrenAt = Array(repeating: [Int](), count: live.count)
        for (i, p) in parentAt.enumerated() where p >= 0 { childrenAt[p].append(i) }
        self.tasks = live
        self.position = position
        self.parentAt = parentAt
        self.childrenAt = childrenAt
        self.cutLinks = cut
    }

    /// Whether the link of `a` is older than that of `b`: by stamp, a missing stamp first, then by id.
    private static func linkPrecedes(_ a: TaskID, _ b: TaskID, _ stamps: [TaskID: Stamp]) -> Bool {
        switch (stamps[a], stamps[b]) {
        case let (x?, y?) where x != y: x < y
        case (nil, _?): true
        case (_?, nil): false
        default: a.rawValue.utf8.lexicographicallyPrecedes(b.rawValue.utf8)
        }
    }

    /// The cycles of the graph where each node has at most one outgoing edge (`next`, -1 for
    /// none), each as its positions. Every node is walked once.
    static func cycles(_ next: [Int]) -> [[Int]] {
        var walk = Array(repeating: 0, count: next.count)  // 0: not yet walked, else the walk's number
        var found: [[Int]] = []
        for start in next.indices where walk[start] == 0 {
            var path: [Int] = []
            var node = start
            while node >= 0 && walk[node] == 0 {
                walk[node] = start + 1
                path.append(node)
                node = next[node]
            }
            if node >= 0 && walk[node] == start + 1, let from = path.firstIndex(of: node) {
                found.append(Array(path[from...]))
            }
        }
        return found
    }

    // MARK: Reading

    /// The task with this id, if it is live.
    public func task(_ id: TaskID) -> TaskItem? { position[id].map { tasks[$0] } }

    /// The effective parent of `id`: none for a top-level task.
    public func parent(of id: TaskID) -> TaskID? {
        guard let i = position[id], parentAt[i] >= 0 else { return nil }
        return tasks[parentAt[i]].id
    }

    /// The live tasks whose effective parent is `id`, in the order given.
    public func children(of id: TaskID) -> [TaskItem] {
        guard let i = position[id] else { return [] }
        return childrenAt[i].map { tasks[$0] }
    }

    /// How many of the task's children are done, of how many.
    public func progress(of id: TaskID) -> (done: Int, total: Int) {
        let children = children(of: id)
        return (children.count { $0.isDone }, children.count)
    }

    /// The dependencies of `id` that are live and open: while there is one, the task is blocked.
    /// A dependency on a task this replica does not know, or a deleted one, does not block.
    public func openDependencies(of id: TaskID) -> [TaskID] {
        guard let t = task(id) else { return [] }
        return t.dependencies.filter { task($0).map { !$0.isDone } ?? false }
    }

    /// Whether some dependency of `id` is still open.
    public func isBlocked(_ id: TaskID) -> Bool { !openDependencies(of: id).isEmpty }

    /// `shown` in outline order: each task followed by its children among `shown` (in the order
    /// of `shown`), with its depth. A task whose effective parent is not in `shown` is at depth 0.
    public func outline(_ shown: [TaskItem]) -> [(task: TaskItem, depth: Int)] {
        var index: [TaskID: Int] = [:]
        for (i, t) in shown.enumerated() { index[t.id] = i }
        var kids = Array(repeating: [Int](), count: shown.count)
        var roots: [Int] = []
        for (i, t) in shown.enumerated() {
            if let p = parent(of: t.id), let pi = index[p], pi != i { kids[pi].append(i) } else { roots.append(i) }
        }
        var out: [(task: TaskItem, depth: Int)] = []
        out.reserveCapacity(shown.count)
        var stack = roots.reversed().map { ($0, 0) }
        while let (i, depth) = stack.popLast() {
            out.append((shown[i], depth))
            stack += kids[i].reversed().map { ($0, depth + 1) }
        }
        return out
    }
}
