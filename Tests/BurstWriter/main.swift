// A test helper: commits tasks through the library without fsync, as a burst under the lock
// lease, until it is killed, printing each task's id once its commit has returned. The
// durability tests kill it mid-burst and check that every printed id survives.
#if canImport(Glibc)
import Glibc
#endif
@_spi(Engine) import TaskStore

func fail(_ message: String, status: Int32) -> Never {
    let bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

guard CommandLine.arguments.count == 2 else { fail("usage: tasklog-burst STORE", status: 2) }
var options = TaskStore.Options()
options.durable = false
options.lockLease = .milliseconds(5)
do {
    let store = try TaskStore.open(at: CommandLine.arguments[1], options: options)
    var n = 0
    while true {
        let task = try store.add(title: "burst \(n)", notes: n % 7 == 0 ? String(repeating: "n", count: 300) : nil)
        let line = Array((task.id.rawValue + "\n").utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        n += 1
    }
} catch {
    fail("tasklog-burst: \(error)", status: 1)
}
