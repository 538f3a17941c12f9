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

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-snippets-\(UUID().uuidString)").path
defer { try? FileManager.default.removeItem(atPath: folder) }
try taskStoreExample(folder: folder)
