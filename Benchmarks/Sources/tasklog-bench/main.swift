@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// tasklog-bench: runs the peer harness's workloads (shared/peers: W1 build, W2 load, W3
/// merge) and a scale run through the TaskStore library, and prints one JSON object (or, with
/// `--table`, a readable table; `--json FILE` also writes the JSON there). Every workload
/// takes `--repeat R`: each number is then `{median, min, max, n, runs}` over the repetitions,
/// unless it was the same in all of them.
let usage = """
    usage: tasklog-bench WORKLOAD [options] [--repeat R] [--table] [--json FILE] [--dir DIR]
      w1             [--ops ops.jsonl | --tasks N --updates U] [--commit-every K] [--durable] [--lock-lease-ms L]
                     W1 build (one commit per logical op), sizes, W2 open + read all, cold rebuild
      w3             [--tasks N --diverge D]  W3 exchange + merge through the library (tmpfs)
      w3-folder      [--tasks N --diverge D]  W3 end to end through a shared folder
      w3-http        [--tasks N --diverge D]  W3 end to end over HTTP on loopback
      w3-encrypted   [--tasks N --diverge D]  W3 through an encrypted and a plaintext folder, and a join
      bucket         [--replicas N --tasks-each T]  N replicas through one in-memory bucket: rounds to
                     converge, requests per device per full and idle sync
      watch-latency  --tasklog PATH [--edits E]  edit-to-visible latency of `sync --watch`
      scale          [--tasks N --updates U --sizes 0.1,0.3,1] [--tasklog PATH] [--cli-runs R]
                     bytes/op, replay and open + add at growing sizes (--keep leaves the stores)
      replay         --store PATH [--warm | --once]  the cold rebuild of an existing store from its
                     logs (--warm: W2 open + read all instead; --once: W2 read once)
      w4-json        --tasks N --out FILE   writes N generated tasks for `tasklog import`
    """

/// Edit-to-visible latency of `tasklog sync --watch`: A runs `tasklog serve`, B runs
/// `tasklog sync URL --watch`; each of N edits is committed to A's store and timed until B's
/// store shows it.
func runWatchLatency(_ a: Arguments) throws -> [String: Any] {
    guard let tasklog = a.values["tasklog"] else { throw BenchError("--tasklog PATH (the release binary) is required") }
    return try repeated(a, "watch-latency") { _ in try watchLatencyOnce(a, tasklog: tasklog) }
}

func watchLatencyOnce(_ a: Arguments, tasklog: String) throws -> [String: Any] {
    let base = temporaryBase(a, "watch-latency")
    defer { try? FileManager.default.removeItem(atPath: base) }
    let storeA = try TaskStore.open(at: base + "/a")
    let storeB = try TaskStore.open(at: base + "/b")
    let task = try storeA.add(NewTask(title: "edit me"))
    func launch(_ args: [String], output: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tasklog)
        p.arguments = args
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        p.standardError = FileHandle.standardError
        try p.run()
        return p
    }
    let server = try launch(["--store", base + "/a", "serve", "--port", "0", "--token", "bench"], output: base + "/serve.out")
    defer { server.terminate(); server.waitUntilExit() }
    var port = ""
    for _ in 0..<500 where port.isEmpty {
        usleep(10_000)
        let text = (try? String(contentsOfFile: base + "/serve.out", encoding: .utf8)) ?? ""
        if let r = text.range(of: "127.0.0.1:") { port = String(text[r.upperBound...].prefix { $0.isNumber }) }
    }
    let watcher = try launch(["--store", base + "/b", "sync", "http://127.0.0.1:\(port)", "--watch", "--token", "bench"], output: base + "/watch.out")
    defer { watcher.terminate(); watcher.waitUntilExit() }
    while try storeB.task(task.id) == nil { usleep(1_000) }
    var latencies: [Double] = []
    let clock = ContinuousClock()
    for i in 0..<a.int("edits", 100) {
        let title = "edit \(i)"
        let start = clock.now
        try storeA.edit(task.id, [.title(title)])
        while try storeB.task(task.id)?.title != title {
            usleep(500)
            if clock.now - start > .seconds(10) { throw BenchError("edit \(i) never arrived") }
        }
        latencies.append(seconds(clock.now - start) * 1000)
        usleep(20_000)
    }
    let sorted = latencies.sorted()
    return [
        "edits": latencies.count,
        "median_ms": median(latencies),
        "p99_ms": sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)],
        "min_ms": sorted.first!, "max_ms": sorted.last!,
    ]
}

func quoted(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

/// The W4 store's contents: N tasks of the W1 shape in the JSON form `tasklog import` reads
/// (a due date on every third task, as the peers' W4 stores have).
func writeW4JSON(_ a: Arguments) throws -> [String: Any] {
    guard let path = a.values["out"] else { throw BenchError("--out FILE is required") }
    let n = a.int("tasks", 10_000)
    var g = W1Generator(rng: SplitMix64(seed: UInt64(a.int("seed", 42))))
    var items: [String] = []
    var ids: [String] = []
    var i = 0
    for case .create(let id, let title, let priority, let time) in g.make(tasks: n, updates: 0) {
        var fields = ["\"id\":\(quoted(id.rawValue))", "\"title\":\(quoted(title))", "\"priority\":\(priority)"]
        if i % 3 == 0 {
            fields.append("\"due\":\"\(Due.date(days: Int64(time / 86_400_000) + 30).description)\"")
        }
        items.append("{" + fields.joined(separator: ",") + "}")
        ids.append(id.rawValue)
        i += 1
    }
    try Data(("[\n" + items.joined(separator: ",\n") + "\n]\n").utf8).write(to: URL(fileURLWithPath: path))
    return ["tasks": n, "file": path, "middle_id": ids[n / 2], "first_id": ids[0]]
}

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first, command != "--help", command != "-h" else {
    print(usage)
    exit(args.isEmpty ? 2 : 0)
}
do {
    let a = Arguments(args.dropFirst())
    let out: [String: Any]
    switch command {
    case "w1": out = try runW1(a)
    case "w3": out = try runW3(a)
    case "w3-folder": out = try runW3Folder(a)
    case "w3-http": out = try runW3HTTP(a)
    case "w3-encrypted": out = try runW3Encrypted(a)
    case "bucket": out = try runBucket(a)
    case "watch-latency": out = try runWatchLatency(a)
    case "scale": out = try runScale(a)
    case "replay": out = try runReplay(a)
    case "w4-json": out = try writeW4JSON(a)
    default:
        print("unknown workload \(command)\n" + usage)
        exit(2)
    }
    let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys])
    if let file = a.values["json"] {
        try data.write(to: URL(fileURLWithPath: file))
    }
    if a.flags.contains("table") {
        print(table(command, out))
    } else {
        print(String(decoding: data, as: UTF8.self))
    }
} catch {
    FileHandle.standardError.write(Data("tasklog-bench: \(error)\n".utf8))
    exit(1)
}
