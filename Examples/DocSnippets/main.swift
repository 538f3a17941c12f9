import Foundation
import TaskLog

// The examples of the doc comments, as programs: each function's body is quoted verbatim by a
// doc comment, which the tests check.

/// Quoted by ``TaskStore``'s doc comment.
func taskStoreExample(folder: String) throws {
    let store = try TaskStore.open(at: folder)
    let milk = try store.add(NewTask(title: "Buy milk", tags: ["home"]))
    try store.complete([milk.id])
    for task in try store.tasks(TaskQuery(status: .all)) {
        print(task.title, task.isDone ? "done" : "open")
    }
}

/// Quoted by ``FolderKeyring``'s doc comment.
func encryptedFolderExample(phonePath: String, laptopPath: String, shared: String) throws {
    let passphrase = Array("correct horse battery staple".utf8)
    let phone = try TaskStore.open(at: phonePath)
    _ = try phone.add(NewTask(title: "Call Mum"))
    let keyring = try FolderKeyring.encrypt(folder: shared, store: phone, passphrase: passphrase)
    _ = try FolderSync(store: phone, folder: shared, keyring: keyring).sync()

    let laptop = try TaskStore.open(at: laptopPath)
    let joined = try FolderKeyring.unlock(folder: shared, store: laptop, passphrase: passphrase)
    _ = try FolderSync(store: laptop, folder: shared, keyring: joined).sync()
    print(try laptop.tasks(TaskQuery(status: .all)).map(\.title))
}

/// Quoted by ``TaskStore/undoable(_:_:)``'s doc comment.
func undoExample(folder: String) throws {
    let store = try TaskStore.open(at: folder)
    let milk = try store.undoable("add") { try store.add(NewTask(title: "Buy milk")) }
    try store.undoable("done") { try store.complete([milk.id]) }
    if let undone = try store.undo() {  // reopens the task
        print(undone.name, undone.tasks.map(\.isDone))  // done [false]
    }
}

/// Quoted by ``QuickAdd``'s doc comment.
func quickAddExample(folder: String) throws {
    let store = try TaskStore.open(at: folder)
    let parsed = try QuickAdd.parse("Buy milk tomorrow #shop +groceries !2 every week")
    let milk = try store.add(parsed.task)
    print(milk.title, milk.tags, milk.list ?? "", milk.recurrence?.phrase ?? "")  // Buy milk ["shop"] groceries every week
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-snippets-\(UUID().uuidString)").path
defer { try? FileManager.default.removeItem(atPath: folder) }
try taskStoreExample(folder: folder)
try FileManager.default.createDirectory(atPath: folder + "-shared", withIntermediateDirectories: true)
defer { for suffix in ["-phone", "-laptop", "-shared"] { try? FileManager.default.removeItem(atPath: folder + suffix) } }
try encryptedFolderExample(phonePath: folder + "-phone", laptopPath: folder + "-laptop", shared: folder + "-shared")
defer { try? FileManager.default.removeItem(atPath: folder + "-undo") }
try undoExample(folder: folder + "-undo")
defer { try? FileManager.default.removeItem(atPath: folder + "-quick") }
try quickAddExample(folder: folder + "-quick")
