import Foundation
import TaskLog

// Two devices, a phone and a laptop, each with its own store, syncing through a shared folder.
let base = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-example-\(UUID().uuidString)").path
let phone = try TaskStore.open(at: base + "/phone")  // created on first use
let laptop = try TaskStore.open(at: base + "/laptop")
let shared = base + "/shared"
try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)

let milk = try phone.add(NewTask(title: "Buy milk", priority: 2, tags: ["shop"]))
try phone.edit(milk.id, [.due(Due(parsing: "2026-12-24")), .notes("semi-skimmed")])
_ = try FolderSync(store: phone, folder: shared).sync()  // publish the phone's log

_ = try FolderSync(store: laptop, folder: shared).sync()  // the laptop imports it
try laptop.complete([milk.id])
_ = try FolderSync(store: laptop, folder: shared).sync()
_ = try FolderSync(store: phone, folder: shared).sync()  // and the phone sees it done

for task in try phone.tasks(TaskQuery(status: .all, sort: .priority)) {
    print(task.title, task.isDone ? "done" : "open", task.tags)  // Buy milk done ["shop"]
}

// Any folder of logs replays to the state it describes: a test's, or one attached to a bug report.
let replayed = try LogReplay.load(from: base + "/laptop").state()
print(replayed.liveTasks.count, "task")  // 1 task
try FileManager.default.removeItem(atPath: base)
