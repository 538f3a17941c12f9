@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import TestSupport
import Testing

/// `TaskStore.tasks(_:)` is the one read: however the store chooses to answer it (the task
/// index, a scan of the snapshot, the loaded state), the answer is what the state gives.
@Suite("reading a store")
struct StoreReadingTests {
    let dir = TemporaryDirectory()

    /// A store with a snapshot and some operations after it, and ids of its tasks.
    func populatedStore(_ rng: inout SplitMix64, name: String) throws -> (path: String, ids: [TaskID]) {
        let path = dir.sub(name)
        let store = try TaskStore.open(at: path)
        var ids: [TaskID] = []
        for i in 0..<rng.int(5...40) {
            let tags = rng.chance(0.5) ? [rng.pick(Gen.tags)] : []
            let task = NewTask(title: "task \(i)", priority: rng.chance(0.5) ? UInt8(rng.int(0...3)) : nil, list: rng.pick(Gen.lists), tags: tags)
            ids.append(try store.add(task).id)
        }
        _ = try store.compact()
        for _ in 0..<rng.int(0...10) {
            let id = rng.pick(ids)
            switch rng.int(0...3) {
            case 0: try store.complete([id])
            case 1: try store.remove([id])
            case 2: try store.edit(id, [.title("renamed")])
            default: ids.append(try store.add(NewTask(title: "late")).id)
            }
        }
        return (path, ids)
    }

    func randomQuery(_ rng: inout SplitMix64, ids: [TaskID]) -> TaskQuery {
        TaskQuery(
            status: rng.pick([.open, .done, .all] as [TaskQuery.Status]),
            tag: rng.chance(0.3) ? rng.pick(Gen.tags) : nil,
            list: rng.chance(0.2) ? rng.pick(Gen.lists.compactMap { $0 }) : nil,
            sort: rng.pick(TaskQuery.SortKey.allCases),
            limit: rng.chance(0.3) ? rng.int(0...5) : nil,
            ids: rng.chance(0.4) ? Set((0..<rng.int(0...4)).map { _ in rng.pick(ids) } + [TaskID.random()]) : nil)
    }

    @Test("a first read, a named-tasks read and a read of the loaded state all give what the state gives")
    func everyReadPathAgreesWithTheState() throws {
        try forEachSeed(40) { seed, rng in
            let (path, ids) = try populatedStore(&rng, name: "store-\(seed)")
            let state = try TaskStore.open(at: path, create: false).state()
            for _ in 0..<3 {
                let query = randomQuery(&rng, ids: ids)
                let fresh = try TaskStore.open(at: path, create: false)
                #expect(try fresh.tasks(query) == state.tasks(query), "seed \(seed), first read of \(query)")
                #expect(try fresh.tasks(query) == state.tasks(query), "seed \(seed), second read of \(query)")
                let one = rng.pick(ids)
                #expect(try TaskStore.open(at: path, create: false).task(one) == state.task(one), "seed \(seed), task \(one)")
            }
        }
    }

    @Test("a query naming tasks gives only those that are live and match, in its order")
    func namedTasksAreFilteredAndSorted() throws {
        let store = try TaskStore.open(at: dir.sub("named"))
        let a = try store.add(NewTask(title: "a", priority: 1))
        let b = try store.add(NewTask(title: "b", priority: 3))
        let c = try store.add(NewTask(title: "c"))
        try store.complete([c.id])
        let gone = try store.add(NewTask(title: "gone"))
        try store.remove([gone.id])
        let query = TaskQuery(status: .all, sort: .priority, ids: [a.id, b.id, c.id, gone.id, TaskID.random()])
        #expect(try store.tasks(query).map(\.title) == ["b", "a", "c"])
        #expect(try store.tasks(TaskQuery(ids: [a.id, c.id])).map(\.title) == ["a"])
        #expect(try store.task(gone.id)?.isDeleted == true)
    }

    @Test("changes() yields another process's commit with no read in between")
    func changesSeeAnotherProcessWithoutAnyRead() async throws {
        let app = try TaskStore.open(at: dir.sub("shared"))
        let stream = app.changes(pollInterval: 0.05)
        let widget = try TaskStore.open(at: dir.sub("shared"))
        let task = try widget.add(NewTask(title: "from the widget"))
        var it = stream.makeAsyncIterator()
        let change = await it.next()
        #expect(change?.taskIDs == [task.id] && change?.isLocal == false)
    }

    @Test("a store object that read tasks from the snapshot sees what another store object wrote and compacted since")
    func lookupsAfterAnotherWriterCompactedSeeItsWrites() throws {
        let path = dir.sub("shared")
        let writer = try TaskStore.open(at: path)
        let milk = try writer.add(NewTask(title: "Buy milk"))
        _ = try writer.compact()
        let reader = try TaskStore.open(at: path)
        #expect(try reader.task(milk.id)?.title == "Buy milk")  // from the snapshot, which it keeps
        try writer.edit(milk.id, [.title("Buy oat milk")])
        let bread = try writer.add(NewTask(title: "Bake bread"))
        #expect(try reader.task(milk.id)?.title == "Buy oat milk")  // the same snapshot, the log after it
        _ = try writer.compact()
        #expect(try reader.task(milk.id)?.title == "Buy oat milk" && reader.task(bread.id)?.title == "Bake bread")
        try writer.remove([bread.id])
        _ = try writer.compact()
        #expect(try reader.task(bread.id)?.isDeleted == true)
    }
}
