@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// Commands that name tasks read only those tasks through the snapshot's task index, and write
/// exactly what they write with the state loaded: the same commits, stamps and observed dots,
/// the same errors, and the same undo.
@Suite("commands read only the tasks they name")
struct NamedReadTests {
    let dir = TemporaryDirectory()
    static let replica = ReplicaID(bytes: Array(repeating: 7, count: 16))
    static let later: UInt64 = 1_900_000_000_000
    static let today: Int64 = 21_000

    /// The tasks of ``scenario()``, by role.
    struct Names {
        var plain: [TaskID] = []
        var tagged, gone, goneLater, doneTask, daily, weekly, monthly, shared, addedLater, started: TaskID
        var chain: [TaskID] = []
        var needs: [TaskID] = []
    }

    static func options(at step: Int) -> TaskStore.Options {
        var o = TaskStore.Options()
        o.wallClock = { UInt64(Int64(later) + Int64(step) * 1000) }
        o.newReplicaID = replica
        o.sealsInBackground = false
        return o
    }

    static func id(_ n: UInt64) -> TaskID { TaskID(uuidHigh: n &* 0x9E37_79B9_7F4A_7C15, low: n) }

    /// A store with a snapshot and a log after it: plain, tagged, deleted and done tasks,
    /// recurring tasks (one whose next occurrence another app made under its own id, saved or
    /// written later, and one of a series whose text is short and occurs often), a parent
    /// chain and a dependency chain.
    func scenario() throws -> (path: String, names: Names) {
        let path = dir.sub("scenario")
        var step = -500
        func store() throws -> TaskStore {
            step += 1
            return try TaskStore.open(at: path, options: Self.options(at: step))
        }
        var n: UInt64 = 0
        func add(_ title: String, _ task: NewTask? = nil) throws -> TaskID {
            n += 1
            var t = task ?? NewTask(title: title)
            t.title = title
            return try store().add(t, id: Self.id(n)).id
        }
        let weeklyDue = Due.date(days: Self.today)
        let recurWeekly = [PlanningKey.recur: "weekly"]
        var names = Names(
            tagged: try add("tagged", NewTask(title: "", tags: ["home", "work"])), gone: try add("gone"),
            goneLater: try add("gone later", NewTask(title: "", tags: ["x"])), doneTask: try add("done"),
            daily: try add("daily", NewTask(title: "", meta: [PlanningKey.recur: "daily"])),
            weekly: try add("weekly", NewTask(title: "", due: weeklyDue, meta: recurWeekly)),
            monthly: try add("monthly", NewTask(title: "", due: weeklyDue, meta: [PlanningKey.recur: "monthly"])),
            shared: try add("abab", NewTask(title: "", due: weeklyDue, meta: recurWeekly.merging([PlanningKey.series: "ab"]) { a, _ in a })),
            addedLater: Self.id(999), started: try add("started"))
        for i in 0..<12 { names.plain.append(try add("task \(i) ab")) }
        for i in 0..<4 { names.chain.append(try add("level \(i)", NewTask(title: "", parent: names.chain.last))) }
        for i in 0..<3 { names.needs.append(try add("needs \(i)", NewTask(title: "", dependencies: names.needs.suffix(1)))) }
        let weeklyNext = Due.date(days: Self.today + 7)
        _ = try add("weekly elsewhere", NewTask(title: "", due: weeklyNext, meta: [PlanningKey.series: names.weekly.rawValue]))
        _ = try add("ab elsewhere", NewTask(title: "", due: weeklyNext, meta: [PlanningKey.series: "ab"]))
        try store().remove([names.gone])
        try store().complete([names.doneTask])
        try store().start([names.started], now: 1_800_000_000_000)
        _ = try store().compact()
        // The log after the snapshot.
        try store().remove([names.goneLater])
        try store().tag(names.tagged, add: ["later"], remove: ["work"])
        try store().edit(names.plain[0], [.title("edited later")])
        _ = try store().add(NewTask(title: "added later", tags: ["new"]), id: names.addedLater)
        n = 1000
        _ = try add("monthly elsewhere", NewTask(title: "", due: .date(days: Self.today + 31), meta: [PlanningKey.series: names.monthly.rawValue]))
        return (path, names)
    }

    /// What `operation` does through the index on one copy of `scenario` and with the state
    /// loaded on another, then what undo does on each: both must write the same.
    /// `throughIndex`: the operation is expected to read through the index (its undo always
    /// is); `beforeUndo` runs on both copies between the operation and the undo.
    func expectSame(
        _ name: String, in scenario: String, throughIndex: Bool = true, beforeUndo: (TaskStore) throws -> Void = { _ in },
        _ operation: (TaskStore) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let copies = (indexed: dir.sub("indexed-\(name)"), loaded: dir.sub("loaded-\(name)"))
        for copy in [copies.indexed, copies.loaded] { try FileManager.default.copyItem(atPath: scenario, toPath: copy) }
        func run<R: Equatable>(_ step: Int, throughIndex: Bool, _ body: (TaskStore) throws -> R) throws -> (indexed: Outcome<R>, loaded: Outcome<R>) {
            let indexed = try TaskStore.open(at: copies.indexed, options: Self.options(at: step))
            let loaded = try TaskStore.open(at: copies.loaded, options: Self.options(at: step))
            _ = try loaded.state()
            let outcomes = (Self.outcome { try body(indexed) }, Self.outcome { try body(loaded) })
            #expect(indexed.holdsState == !throughIndex, "\(name) (step \(step)): the index answers", sourceLocation: sourceLocation)
            return outcomes
        }
        let done = try run(1, throughIndex: throughIndex) { store in
            try store.undoable(name) { try operation(store) }
            return true
        }
        #expect(done.indexed == done.loaded, "\(name)", sourceLocation: sourceLocation)
        try expectSameLogs(copies, name, sourceLocation)
        for copy in [copies.indexed, copies.loaded] { try beforeUndo(try TaskStore.open(at: copy, options: Self.options(at: 2))) }
        let undone = try run(3, throughIndex: true) { store in try store.undo() }
        #expect(undone.indexed == undone.loaded, "undo of \(name)", sourceLocation: sourceLocation)
        try expectSameLogs(copies, "undo of \(name)", sourceLocation)
    }

    private func expectSameLogs(_ copies: (indexed: String, loaded: String), _ name: String, _ location: SourceLocation) throws {
        let (a, b) = (try TaskStore.open(at: copies.indexed, create: false), try TaskStore.open(at: copies.loaded, create: false))
        #expect(try a.commits(of: Self.replica, after: 0) == b.commits(of: Self.replica, after: 0), "\(name): commits", sourceLocation: location)
        #expect(try a.state() == b.state(), "\(name): state", sourceLocation: location)
    }

    /// What a call returned, or the error it threw.
    enum Outcome<R: Equatable>: Equatable {
        case value(R)
        case error(String)
    }

    static func outcome<R: Equatable>(_ body: () throws -> R) -> Outcome<R> {
        do { return .value(try body()) } catch { return .error("\(error)") }
    }

    @Test("tag, restore, reopen, done, rm and start read only the tasks they name and write what they write on the loaded state, undo included")
    func writesThroughTheIndexMatchTheLoadedState() throws {
        let (path, t) = try scenario()
        try expectSame("tag", in: path) { try $0.tag(t.tagged, add: ["x", "home"], remove: ["home", "later", "absent"]) }
        try expectSame("tag-deleted", in: path) { try $0.tag(t.goneLater, add: ["y"], remove: ["x"]) }
        try expectSame("tag-later", in: path) { try $0.tag(t.addedLater, remove: ["new"]) }
        try expectSame("tag-unknown", in: path, throughIndex: false) { try $0.tag(Self.id(4242), add: ["y"]) }
        try expectSame("restore", in: path) { try $0.restore(t.gone) }
        try expectSame("restore-later", in: path) { try $0.restore(t.goneLater) }
        try expectSame("restore-live", in: path) { try $0.restore(t.plain[1]) }
        try expectSame("restore-unknown", in: path, throughIndex: false) { try $0.restore(Self.id(4242)) }
        try expectSame("reopen", in: path) { try $0.reopen([t.doneTask, t.plain[2]]) }
        try expectSame("done-deleted", in: path) { try $0.complete([t.gone, t.plain[3]]) }
        try expectSame("rm-deleted", in: path) { try $0.remove([t.plain[4], t.goneLater]) }
        // A snapshot saved after the change holds it: undo reads every log, as it always did.
        try expectSame("edit-compacted", in: path, beforeUndo: { _ = try $0.compact() }) {
            try $0.edit(t.plain[6], [.title("edited"), .priority(2)])
            try $0.tag(t.plain[6], add: ["t"])
        }
        try expectSame("start-stop", in: path) {
            try $0.start([t.plain[5]], now: 1_850_000_000_000)
            try $0.stop([t.started])
        }
    }

    @Test("done of a recurring task reads its series through the index, and makes the occurrence the loaded state makes")
    func recurringCompletionThroughTheIndex() throws {
        let (path, t) = try scenario()
        for (name, ids) in [("daily", [t.daily]), ("weekly", [t.weekly]), ("monthly", [t.monthly]), ("shared", [t.shared]),
                            ("several", [t.daily, t.plain[6], t.weekly]), ("with-deleted", [t.gone, t.daily]), ("done", [t.doneTask, t.daily])] {
            try expectSame("recur-\(name)", in: path) { _ = try $0.completeAndRecur(ids, today: Self.today) }
        }
        try expectSame("recur-unknown", in: path, throughIndex: false) { _ = try $0.completeAndRecur([t.daily, Self.id(4242)], today: Self.today) }
        // Patches as imports and the REST API apply them: updates, a new task, a deletion, a completion.
        var update = TaskPatch(id: t.plain[7])
        (update.title, update.tags, update.dependencies) = ("patched", ["p"], [t.plain[8]])
        var created = TaskPatch(id: Self.id(777))
        created.title = "made by a patch"
        var deleted = TaskPatch(id: t.plain[9])
        deleted.deleted = true
        var completed = TaskPatch(id: t.weekly)
        completed.done = true
        try expectSame("apply", in: path) { _ = try $0.apply([update, created, deleted, completed], today: Self.today) }
    }

    @Test("edit of a parent and depend walk their chains through the index, and refuse a cycle as the loaded state does")
    func linkChecksThroughTheIndex() throws {
        let (path, t) = try scenario()
        try expectSame("parent-cycle", in: path) { try $0.setParent(t.chain[0], t.chain[3]) }
        try expectSame("parent", in: path) { try $0.setParent(t.plain[10], t.chain[3]) }
        try expectSame("parent-none", in: path) { try $0.edit(t.chain[2], [.parent(nil), .title("top")]) }
        try expectSame("depend-cycle", in: path) { try $0.depend(t.needs[0], on: [t.needs[2]]) }
        try expectSame("depend", in: path) { try $0.depend(t.plain[11], on: [t.needs[2], t.chain[1]]) }
        try expectSame("depend-remove", in: path) { try $0.depend(t.needs[2], removing: [t.needs[1]]) }
    }

    @Test("a chain of parents longer than the lookups allow is checked on the state, with the same answer")
    func longChainFallsBackToTheState() throws {
        let path = dir.sub("long")
        let store = try TaskStore.open(at: path, options: Self.options(at: -10))
        var chain: [TaskID] = []
        for i in 0..<(TaskStore.deepestAncestry + 6) {
            chain.append(try store.add(NewTask(title: "level \(i)", parent: chain.last), id: Self.id(UInt64(i + 1))).id)
        }
        _ = try store.compact()
        let loose = try store.add(NewTask(title: "loose"), id: Self.id(500)).id
        try expectSame("long-cycle", in: path, throughIndex: false) { try $0.setParent(chain[0], chain.last!) }
        try expectSame("long", in: path, throughIndex: false) { try $0.setParent(loose, chain.last!) }
        try expectSame("short", in: path) { try $0.setParent(loose, chain[3]) }
    }

    @Test("restore by a prefix of a deleted task, and the library's reads by id, answer through the index as the loaded state does")
    func resolvingAndReadingThroughTheIndex() throws {
        let (path, t) = try scenario()
        let indexed = try TaskStore.open(at: path, create: false)
        let loaded = try TaskStore.open(at: path, create: false)
        _ = try loaded.state()
        func expectSameResolved(_ texts: [String]) {
            for text in texts {
                #expect(Self.outcome { try indexed.resolve(text, includeDeleted: true) } == Self.outcome { try loaded.resolve(text, includeDeleted: true) }, "\(text)")
            }
        }
        expectSameResolved([t.gone.rawValue, String(t.gone.rawValue.prefix(12)), t.goneLater.rawValue, String(t.goneLater.rawValue.prefix(6)), t.addedLater.rawValue])
        let ids: Set<TaskID> = [t.gone, t.goneLater, t.daily, t.addedLater, t.plain[0]]
        #expect(try indexed.tasks(TaskQuery(status: .all, ids: ids)) == loaded.tasks(TaskQuery(status: .all, ids: ids)))
        for id in ids { #expect(try indexed.task(id) == loaded.task(id), "\(id)") }
        #expect(!indexed.holdsState)
        // What matches nothing, or too much, is told as the loaded state tells it.
        expectSameResolved(["zzzz", "zz", "", String(t.gone.rawValue.prefix(1)), Self.id(4242).rawValue])
    }
}
