@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import TaskSync
import TestSupport
import Testing

/// The library calls for subtasks, dependencies and dates (``TaskStore/setParent(_:_:)``,
/// ``TaskStore/depend(_:on:removing:)``, ``TaskStore/start(_:now:)``, ``TaskStore/tree()``).
@Suite("planning in the store")
struct PlanningStoreTests {
    let dir = TemporaryDirectory()

    func open(_ name: String) throws -> TaskStore { try TaskStore.open(at: dir.sub(name)) }

    @Test("NewTask's parent, dependencies, wait and scheduled are stored and read back; bad links are refused")
    func newTaskFields() throws {
        let s = try open("s")
        let parent = try s.add(NewTask(title: "Parent"))
        let dep = try s.add(NewTask(title: "First"))
        let child = try s.add(NewTask(
            title: "Child", parent: parent.id, dependencies: [dep.id], wait: .date(days: 20_000), scheduled: .date(days: 20_001)))
        #expect(child.parent == parent.id && child.dependencies == [dep.id] && child.tags.isEmpty)
        #expect(child.waitUntil == .date(days: 20_000) && child.scheduled == .date(days: 20_001) && child.userMeta.isEmpty)
        let unknown = TaskID("unknown-task")!
        #expect(throws: StoreError.taskNotFound(unknown.rawValue)) { try s.add(NewTask(title: "x", parent: unknown)) }
        #expect(throws: StoreError.taskNotFound(unknown.rawValue)) { try s.add(NewTask(title: "x", dependencies: [unknown])) }
        #expect(throws: StoreError.circularLink(task: parent.id.rawValue, other: parent.id.rawValue, dependency: false)) {
            try s.setParent(parent.id, parent.id)
        }
        #expect(throws: StoreError.circularLink(task: parent.id.rawValue, other: child.id.rawValue, dependency: false)) {
            try s.setParent(parent.id, child.id)
        }
        #expect(throws: StoreError.circularLink(task: dep.id.rawValue, other: child.id.rawValue, dependency: true)) {
            try s.depend(dep.id, on: [child.id])
        }
        let tree = try s.tree()
        #expect(tree.children(of: parent.id).map(\.id) == [child.id] && tree.isBlocked(child.id))
        try s.complete([dep.id])
        #expect(try !s.tree().isBlocked(child.id))
    }

    @Test("start keeps the first start, stop clears it; wait and scheduled are plain writes")
    func startStopAndDates() throws {
        let s = try open("s")
        let t = try s.add(NewTask(title: "Work"))
        try s.start([t.id], now: 1_000)
        try s.start([t.id], now: 2_000)
        #expect(try s.task(t.id)?.startedAt == .instant(milliseconds: 1_000))
        try s.stop([t.id])
        #expect(try s.task(t.id)?.startedAt == nil)
        try s.edit(t.id, [.wait(.date(days: 5)), .scheduled(.instant(milliseconds: 9))])
        let item = try #require(try s.task(t.id))
        #expect(item.isWaiting(now: 0, today: 4) && !item.isWaiting(now: 0, today: 5) && item.scheduled == .instant(milliseconds: 9))
    }

    @Test("removing a dependency keeps one added concurrently on another device (add wins)")
    func dependencyAddWins() throws {
        let (a, b) = (try open("a"), try open("b"))
        let folder = try dir.folder("shared")
        let dep = try a.add(NewTask(title: "First"))
        let t = try a.add(NewTask(title: "Then", dependencies: [dep.id]))
        _ = try FolderSync(store: a, folder: folder).sync()
        _ = try FolderSync(store: b, folder: folder).sync()
        try a.depend(t.id, removing: [dep.id])
        try b.depend(t.id, on: [dep.id])
        for s in [a, b, a] { _ = try FolderSync(store: s, folder: folder).sync() }
        #expect(try a.task(t.id)?.dependencies == [dep.id] && b.task(t.id)?.dependencies == [dep.id])
    }

    @Test("the tree around a task says what the whole tree says of it: parent, subtasks, blocked, cut links", arguments: [false, true])
    func treeAroundMatchesWholeTree(compacted: Bool) throws {
        var random = SplitMix64(seed: compacted ? 7 : 11)
        let s = try open("s")
        var ids: [TaskID] = []
        for i in 0..<60 { ids.append(try s.add(NewTask(title: "T\(i)")).id) }
        // Parent registers written straight into the log, cycles and self-links included.
        var ops: [TaskOperation] = []
        for id in ids where random.next() % 3 != 0 {
            ops.append(.set(id, .parent(ids[Int(random.next() % UInt64(ids.count))])))
            if random.next() % 4 == 0 { ops.append(.addTag(id, PlanningKey.dependencyElement(ids[Int(random.next() % 60)]))) }
        }
        try s.commitWhole(ops)
        try s.complete(Array(ids.prefix(10)))
        try s.remove([ids[20]])
        if compacted { _ = try s.compact() }
        // Links written after the snapshot: found through the log, not the saved tasks.
        let fresh = try (0..<5).map { i in try s.add(NewTask(title: "Late \(i)")).id }
        try s.commitWhole(fresh.map { .set($0, .parent(ids[30 + Int(random.next() % 30)])) } + [.set(ids[0], .parent(fresh[0]))])
        ids += fresh
        let whole = try TaskStore.open(at: dir.sub("s")).tree()
        for id in ids where id != ids[20] {
            let part = try TaskStore.open(at: dir.sub("s")).tree(around: [id])
            #expect(part.parent(of: id) == whole.parent(of: id), "\(id)")
            #expect(part.children(of: id).map(\.id) == whole.children(of: id).map(\.id), "\(id)")
            #expect(part.isBlocked(id) == whole.isBlocked(id) && part.cutLinks.contains(id) == whole.cutLinks.contains(id), "\(id)")
        }
    }
}
