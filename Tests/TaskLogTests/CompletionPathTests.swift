import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// The one completion step every path shares: done, imports, CalDAV and the REST API.
@Suite("completing recurring tasks in the library")
struct CompletionPathTests {
    let dir = TemporaryDirectory()

    func weekly(_ store: TaskStore, due: Due? = .date(days: 20_788)) throws -> TaskItem {
        try store.add(NewTask(title: "Water plants", due: due, tags: ["home"], meta: [PlanningKey.recur: "every 1 weeks"]))
    }

    func open(_ store: TaskStore) throws -> [TaskItem] { try store.tasks(TaskQuery(status: .open)) }

    @Test("completeAndRecur marks done and makes the next occurrence in one commit; again, nothing more")
    func completeAndRecurMakesOneOccurrence() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let task = try weekly(store)
        let plain = try store.add(title: "Plain")
        let before = try store.version
        let made = try store.completeAndRecur([task.id, plain.id])
        #expect(try store.version != before)
        let next = try #require(try open(store).first)
        #expect(made == [next.id] && next.due == .date(days: 20_795) && next.tags == ["home"])
        #expect(next.meta[PlanningKey.series] == task.id.rawValue && next.recurrence?.text == "every 1 weeks")
        #expect(try store.completeAndRecur([task.id]) == [])
        #expect(try store.tasks(TaskQuery(status: .all)).count == 3)
    }

    @Test("apply with done true makes the next occurrence once, also when the same patch arrives twice")
    func applyMakesTheNextOccurrenceOnce() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let task = try weekly(store, due: nil)
        var done = TaskPatch(id: task.id)
        done.done = true
        let first = try store.apply([done], today: 20_000)
        #expect(first.next == [RecurrenceRule.occurrenceID(series: task.id.rawValue, due: .date(days: 20_007))])
        #expect(try store.apply([done], today: 20_000).next.isEmpty)
        try store.reopen([task.id])
        #expect(try store.apply([done], today: 20_000).next.isEmpty, "the occurrence exists: it is not made again")
        #expect(try open(store).map(\.due) == [.date(days: 20_007)])
    }

    @Test("a file that holds the next occurrence itself is applied as it states it, with no second one")
    func aStatedOccurrenceIsNotMadeAgain() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let task = try weekly(store)
        var done = TaskPatch(id: task.id)
        done.done = true
        var stated = TaskPatch(id: RecurrenceRule.occurrenceID(series: task.id.rawValue, due: .date(days: 20_795)))
        stated.title = "Water the plants"
        let result = try store.apply([done, stated])
        #expect(result.next.isEmpty && result.created == 1)
        #expect(try open(store).map(\.title) == ["Water the plants"])
    }

    @Test("a deleted recurring task is marked done without coming back or making an occurrence")
    func aDeletedTaskStaysDeleted() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let task = try weekly(store)
        try store.remove([task.id])
        #expect(try store.completeAndRecur([task.id]).isEmpty)
        let t = try #require(try store.task(task.id))
        #expect(t.isDeleted && t.isDone)
        #expect(throws: StoreError.self) { try store.completeAndRecur([TaskID("missing")!]) }
    }
}
