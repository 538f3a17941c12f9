@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
import Testing

/// Undo in the library (`undoable`, `undo()`), with no command line, on real files.
@Suite("undo in the library")
struct LibraryUndoTests {
    let dir = TemporaryDirectory()

    func undoFile(_ store: TaskStore) -> String { (store.path as NSString).appendingPathComponent("undo") }

    @Test("undo() reverts each recorded change newest first, several commits as one change, and then has nothing left")
    func undoWalksBackThroughRecordedChanges() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let milk = try store.undoable("add") { try store.add(NewTask(title: "Buy milk", tags: ["shop"])) }
        try store.undoable("edit") {
            try store.edit(milk.id, [.title("Buy oat milk"), .priority(2)])
            try store.tag(milk.id, add: ["dairy"], remove: ["shop"])
        }
        try store.add(NewTask(title: "not recorded"))  // outside undoable: not on the stack
        let next = try #require(TaskID("next-occurrence"))
        try store.undoable("done") {
            try store.complete([milk.id])
            try store.add(NewTask(title: "Buy milk"), id: next)  // a second commit of the same change
        }
        try store.undoable("done again") { try store.complete([milk.id]) }  // commits nothing: not recorded

        var undone = try #require(try store.undo())
        #expect(undone.name == "done" && undone.tasks.map(\.id) == [milk.id, next] && undone.keptFields.isEmpty)
        #expect(try store.task(milk.id)?.isDone == false && store.task(next)?.isDeleted == true)
        undone = try #require(try store.undo())
        let t = try #require(try store.task(milk.id))
        #expect(undone.name == "edit" && t.title == "Buy milk" && t.priority == nil && t.tags == ["shop"])
        undone = try #require(try store.undo())
        #expect(undone.name == "add" && undone.tasks.first?.isDeleted == true)
        #expect(try store.undo() == nil)
        #expect(try store.tasks().map(\.title) == ["not recorded"])
    }

    @Test("after compaction undo still finds the values before in the logs, and leaves another device's later edit, naming it")
    func undoAfterCompactionLeavesAnotherDevicesEdit() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (try TaskStore.open(at: dir.sub("a")), try TaskStore.open(at: dir.sub("b")))
        let id = try a.undoable("add") { try a.add(NewTask(title: "Plan trip")) }.id
        try a.undoable("edit") { try a.edit(id, [.title("Plan trip to Rome"), .priority(2)]) }
        for s in [a, b] { _ = try FolderSync(store: s, folder: shared).sync() }
        try b.edit(id, [.title("Plan trip to Lisbon")])  // later: b has seen a's edit
        for s in [b, a] { _ = try FolderSync(store: s, folder: shared).sync() }
        try a.compact()
        try b.compact()

        let undone = try #require(try a.undo())
        #expect(undone.name == "edit" && undone.keptFields == [id: ["title"]])
        let t = try #require(try a.task(id))
        #expect(t.title == "Plan trip to Lisbon" && t.priority == nil)
        for s in [a, b] { _ = try FolderSync(store: s, folder: shared).sync() }
        #expect(try b.task(id)?.priority == nil)
        #expect(try a.undo()?.name == "add" && a.task(id)?.isDeleted == true)
    }

    @Test("the stack holds a few bytes per change, cut to the newest changes past 4 KiB, and each still undoes")
    func stackStaysSmallAndBounded() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        for i in 0..<400 { try store.undoable("add") { try store.add(NewTask(title: "task \(i)")) } }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: undoFile(store)))
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.first == "tasklog-undo 1 \(store.replica.hex)" && lines.last == "799-800 add")
        #expect(bytes.count <= 4096 + 16 && lines.count > 50, "\(bytes.count) bytes, \(lines.count) lines")
        for _ in 0..<(lines.count - 1) { #expect(try store.undo()?.name == "add") }
        #expect(try store.undo() == nil)
        #expect(try store.tasks().count == 400 - (lines.count - 1))
    }

    @Test("a damaged or hand-made stack never crashes: bad lines are skipped, a change the logs lack is dropped with an error")
    func damagedStackIsSurvived() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        let task = try store.undoable("add") { try store.add(NewTask(title: "kept")) }
        let header = "tasklog-undo 1 \(store.replica.hex)\n"
        let lines = ["1-2 add", "garbage", "\u{1}\u{0}", "5-1 backwards", "1-18446744073709551615 huge", "-3 none", "900-901 ghost"]
        try Data((header + lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: undoFile(store)))
        #expect(throws: StoreError.undoUnavailable(name: "ghost", reason: "the logs no longer hold its operations (replica \(store.replica.hex))")) {
            try store.undo()
        }
        #expect(try store.undo()?.name == "add" && store.task(task.id)?.isDeleted == true)
        #expect(try store.undo() == nil)

        // A stack of another replica id (a fork resolution moved this device's operations) is not used.
        let other = try #require(ReplicaID(hex: String(repeating: "ab", count: 16)))
        try Data("tasklog-undo 1 \(other.hex)\n3-3 rm\n".utf8).write(to: URL(fileURLWithPath: undoFile(store)))
        #expect(try store.undo() == nil && store.task(task.id)?.isDeleted == true)

        try Data((0..<3000).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: undoFile(store)))
        #expect(try store.undo() == nil)
        try store.undoable("add") { try store.add(NewTask(title: "after")) }
        let text = try String(contentsOfFile: undoFile(store), encoding: .utf8)
        #expect(text == header + "4-5 add\n")
    }
}

/// `tasklog undo` through the real binary: the stack's size, compaction and an earlier version's file.
@Suite("undo stack on disk")
struct UndoStackOnDiskTests {
    let dir = TemporaryDirectory()

    @Test("after 300 adds and compact, the store on disk is smaller than the JSON export of its tasks, and undo still works")
    func compactedStoreIsSmallerThanItsExport() throws {
        let s = CLIStore(path: dir.sub("s"))
        for i in 1...300 { try s.ok("add", "Task number \(i)") }
        let stack = try #require(s.files()["undo"])
        #expect(stack < 300 * 16, "\(stack) bytes of undo stack for 300 adds")
        try s.ok("compact")
        let stored = s.files().values.reduce(0, +)
        let export = try s.ok("export").utf8.count
        #expect(stored < export, "store \(stored) bytes, export \(export): \(s.files())")
        #expect(try s.ok("undo").hasPrefix("Undid add of"))
        #expect(try s.tasks().count == 299)
    }

    @Test("an undo file of an earlier version is ignored, then replaced by the next command's")
    func earlierVersionsFileIsReplaced() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try s.ok("add", "Buy milk").trimmingCharacters(in: .whitespacesAndNewlines)
        let old = "{\"command\":\"add\",\"tasks\":[{\"before\":null,\"after\":{\"id\":\"\(id)\",\"title\":\"Buy milk\"},\"deletedBefore\":false,\"deletedAfter\":false}]}\n"
        try Data(old.utf8).write(to: URL(fileURLWithPath: dir.sub("s/undo")))
        let none = try s.run("undo")
        #expect(none.status == 1 && none.stderr.contains("nothing to undo"), "\(none)")
        try s.ok("done", id)
        let text = try String(contentsOfFile: dir.sub("s/undo"), encoding: .utf8)
        #expect(text.hasPrefix("tasklog-undo 1 ") && text.hasSuffix(" done\n") && !text.contains("{"), "\(text)")
        #expect(try s.ok("undo").hasPrefix("Undid done of \(id.prefix(8)) Buy milk"))
        #expect(try s.tasks().first?["done"] as? Bool == false)
    }
}
