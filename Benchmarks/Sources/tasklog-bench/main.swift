import CRDTCore
import Foundation
import Synchronization
import TaskModel
import TaskStore
import TaskSync

/// tasklog-bench: runs the peer harness's workloads through the TaskStore library.
///
///     tasklog-bench w1 [--ops ops.jsonl | --tasks N --updates U] [--repeat R] [--dir DIR] [--durable]
///
/// Prints one JSON object.
struct Arguments {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ args: ArraySlice<String>) {
        var i = args.startIndex
        while i < args.endIndex {
            let a = args[i]
            if a.hasPrefix("--"), i + 1 < args.endIndex, !args[i + 1].hasPrefix("--") {
                values[String(a.dropFirst(2))] = args[i + 1]
                i += 2
            } else {
                flags.insert(String(a.dropFirst(2)))
                i += 1
            }
        }
    }

    func int(_ k: String, _ d: Int) -> Int { values[k].flatMap(Int.init) ?? d }
}

let wall = Atomic<UInt64>(0)

func directorySize(_ path: String, matching: (String) -> Bool = { _ in true }) -> (bytes: Int, files: Int) {
    var bytes = 0
    var files = 0
    let e = FileManager.default.enumerator(atPath: path)!
    while let f = e.nextObject() as? String {
        guard matching(f) else { continue }
        let attrs = try? FileManager.default.attributesOfItem(atPath: path + "/" + f)
        if attrs?[.type] as? FileAttributeType == .typeRegular {
            bytes += attrs?[.size] as? Int ?? 0
            files += 1
        }
    }
    return (bytes, files)
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func operations(for op: LogicalOp) -> [TaskOperation] {
    switch op {
    case .create(let id, let title, let priority, _):
        return NewTask(title: title, priority: priority).operations(id: id)
    case .set(let id, let write, _):
        return [.set(id, write)]
    case .delete(let id, _):
        return [.remove(id, observed: [])]
    }
}

func runW1(_ a: Arguments) throws -> [String: Any] {
    let ops: [LogicalOp]
    if let path = a.values["ops"] {
        ops = try OpsFile.load(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    } else {
        var g = W1Generator(rng: SplitMix64(seed: UInt64(a.int("seed", 42))))
        ops = g.make(tasks: a.int("tasks", 10_000), updates: a.int("updates", 100_000))
    }
    let base = a.values["dir"] ?? NSTemporaryDirectory()
    var buildTimes: [Double] = []
    var loadTimes: [Double] = []
    var replayTimes: [Double] = []
    var result: [String: Any] = [:]
    for rep in 0..<a.int("repeat", 3) {
        let dir = base + "/tasklog-bench-w1-\(getpid())-\(rep)"
        try? FileManager.default.removeItem(atPath: dir)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = TaskStore.Options()
        options.durable = a.flags.contains("durable")
        options.wallClock = { wall.load(ordering: .relaxed) }
        let store = try TaskStore.open(at: dir, options: options)
        let prepared = ops.map { ($0.time, operations(for: $0)) }
        let clock = ContinuousClock()
        let built = try clock.measure {
            for (time, o) in prepared {
                wall.store(time, ordering: .relaxed)
                try store.commit(o)
            }
        }
        buildTimes.append(seconds(built))
        let logs = dir + "/logs"
        let beforeCompact = directorySize(logs)
        let sealedBefore = directorySize(logs) { !$0.hasSuffix("tail.tlog") }
        try store.compact()
        let sealed = directorySize(logs)
        let snapshot = directorySize(dir) { $0 == "snapshot" }
        // W2: open the store and read every task (snapshot + the log after it).
        var count = 0
        let load = try clock.measure {
            let s = try TaskStore.open(at: dir, create: false, options: options)
            count = try s.tasks(TaskQuery(status: .all)).count
        }
        loadTimes.append(seconds(load))
        // W2 cold: rebuild the state from the logs alone.
        let replay = try clock.measure { _ = try store.replay() }
        replayTimes.append(seconds(replay))
        let n = Double(ops.count)
        result = [
            "logical_ops": ops.count,
            "low_level_ops": try store.version.operationCount,
            "tasks_read": count,
            "log_bytes_as_sealed_during_build": beforeCompact.bytes,
            "log_bytes_per_op_as_sealed_during_build": Double(beforeCompact.bytes) / n,
            "sealed_segments_during_build": sealedBefore.files,
            "log_bytes_after_compact": sealed.bytes,
            "log_bytes_per_op_after_compact": Double(sealed.bytes) / n,
            "segment_files_after_compact": sealed.files,
            "snapshot_bytes": snapshot.bytes,
        ]
    }
    result["build_s"] = median(buildTimes)
    result["build_s_all"] = buildTimes
    result["ops_per_s"] = Double(ops.count) / median(buildTimes)
    result["open_and_read_all_ms"] = median(loadTimes) * 1000
    result["cold_replay_ms"] = median(replayTimes) * 1000
    result["durable"] = a.flags.contains("durable")
    result["source"] = a.values["ops"] != nil ? "ops.jsonl" : "built-in generator"
    return result
}

/// Two replicas with a shared 10,000-task base, then 50,000 diverging operations on each
/// (1% deletes, 10% on a contested tenth of the tasks), as the peer harness's W3.
func divergedPair(_ a: Arguments, base: String) throws -> (TaskStore, TaskStore, Int) {
    let n = a.int("tasks", 10_000)
    let d = a.int("diverge", 50_000)
    let folder = base + "/seed-folder"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var options = TaskStore.Options()
    options.durable = a.flags.contains("durable")
    let storeA = try TaskStore.open(at: base + "/a", options: options)
    let storeB = try TaskStore.open(at: base + "/b", options: options)
    var g = W1Generator(rng: SplitMix64(seed: UInt64(a.int("seed", 42))))
    var ids: [TaskID] = []
    for case .create(let id, let title, let priority, _) in g.make(tasks: n, updates: 0) {
        try storeA.commit(NewTask(title: title, priority: priority).operations(id: id))
        ids.append(id)
    }
    _ = try FolderSync(store: storeA, folder: folder).sync()
    _ = try FolderSync(store: storeB, folder: folder).sync()
    let contested = Array(ids.prefix(n / 10))
    let rest = Array(ids.dropFirst(n / 10))
    for (side, store) in [(0, storeA), (1, storeB)] {
        let own = stride(from: side, to: rest.count, by: 2).map { rest[$0] }
        var deleted = Set<TaskID>()
        var rng = SplitMix64(seed: UInt64(1009 + side))
        for _ in 0..<d {
            let pool = rng.next() % 10 == 0 ? contested : own
            var id = pool[Int(rng.next() % UInt64(pool.count))]
            while deleted.contains(id) { id = pool[Int(rng.next() % UInt64(pool.count))] }
            if rng.next() % 100 == 0 {
                deleted.insert(id)
                try store.remove([id])
            } else {
                let w: FieldWrite = switch rng.next() % 10 {
                case 0, 1, 2: .title(g.phrase(22 + Int(rng.next() % 11), W1Generator.verbs, W1Generator.nouns, W1Generator.links))
                case 3, 4, 5: .done(rng.next() % 2 == 0)
                case 6, 7: .priority(UInt8(rng.next() % 4))
                case 8: .due(.date(days: 20_454 + Int64(rng.next() % 366)))
                default: .notes(g.phrase(72 + Int(rng.next() % 15), W1Generator.noteWords, W1Generator.noteWords, W1Generator.noteWords))
                }
                try store.commit([.set(id, w)])
            }
        }
    }
    return (storeA, storeB, d)
}

func temporaryBase(_ a: Arguments, _ name: String) -> String {
    let base = (a.values["dir"] ?? NSTemporaryDirectory()) + "/tasklog-bench-\(name)-\(getpid())"
    try? FileManager.default.removeItem(atPath: base)
    return base
}

/// W3 through a shared folder: the syncs that make both converge (A publishes, B exchanges,
/// A imports), timed end to end.
func runW3Folder(_ a: Arguments) throws -> [String: Any] {
    let base = temporaryBase(a, "w3-folder")
    defer { try? FileManager.default.removeItem(atPath: base) }
    let (storeA, storeB, d) = try divergedPair(a, base: base)
    let folder = base + "/seed-folder"  // holds the shared base already
    let before = directorySize(folder).bytes
    let clock = ContinuousClock()
    var reports: [SyncReport] = []
    let took = try clock.measure {
        reports.append(try FolderSync(store: storeA, folder: folder).sync())
        reports.append(try FolderSync(store: storeB, folder: folder).sync())
        reports.append(try FolderSync(store: storeA, folder: folder).sync())
    }
    let written = reports.reduce(0) { $0 + $1.bytesOut }
    let stateA = try storeA.tasks(TaskQuery(status: .all))
    let stateB = try storeB.tasks(TaskQuery(status: .all))
    return [
        "diverging_ops_per_side": d,
        "converge_ms": seconds(took) * 1000,
        "sync_runs": reports.map { ["ops_in": $0.operationsIn, "bytes_in": $0.bytesIn, "ops_out": $0.operationsOut, "bytes_out": $0.bytesOut] },
        "bytes_written_to_folder": written,
        "bytes_per_op_in_folder": Double(written) / Double(2 * d),
        "folder_growth_bytes": directorySize(folder).bytes - before,
        "converged": stateA == stateB,
        "live_tasks": stateA.count,
    ]
}

/// W3 over HTTP: B runs one `sync` against A's server (pull what it lacks, push what A
/// lacks), timed end to end on loopback.
func runW3HTTP(_ a: Arguments) throws -> [String: Any] {
    let base = temporaryBase(a, "w3-http")
    defer { try? FileManager.default.removeItem(atPath: base) }
    let (storeA, storeB, d) = try divergedPair(a, base: base)
    let service = HTTPService(store: storeA, token: "bench")
    let server = try HTTPServer(address: "127.0.0.1", port: 0, limits: service.limits) { service.handle($0) }
    defer { server.stop() }
    let clock = ContinuousClock()
    var result: (report: SyncReport, cursor: String?)?
    let took = try clock.measure {
        result = try HTTPSync(store: storeB, peer: "http://127.0.0.1:\(server.port)", token: "bench").sync()
    }
    let r = result!.report
    let stateA = try storeA.tasks(TaskQuery(status: .all))
    let stateB = try storeB.tasks(TaskQuery(status: .all))
    return [
        "diverging_ops_per_side": d,
        "converge_ms": seconds(took) * 1000,
        "ops_in": r.operationsIn, "bytes_in": r.bytesIn, "ops_out": r.operationsOut, "bytes_out": r.bytesOut,
        "bytes_per_op_on_the_wire": Double(r.bytesIn + r.bytesOut) / Double(2 * d),
        "converged": stateA == stateB,
        "live_tasks": stateA.count,
    ]
}

/// Edit-to-visible latency of `tasklog sync --watch`: A runs `tasklog serve`, B runs
/// `tasklog sync URL --watch`; each of N edits is committed to A's store and timed until B's
/// store shows it.
func runWatchLatency(_ a: Arguments) throws -> [String: Any] {
    guard let tasklog = a.values["tasklog"] else { throw BenchError("--tasklog PATH (the release binary) is required") }
    let base = temporaryBase(a, "watch-latency")
    defer { try? FileManager.default.removeItem(atPath: base) }
    let storeA = try TaskStore.open(at: base + "/a")
    let storeB = try TaskStore.open(at: base + "/b")
    let task = try storeA.add(title: "edit me")
    func launch(_ args: [String], output: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tasklog)
        p.arguments = args
        FileManager.default.createFile(atPath: output, contents: nil)
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

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else {
    print("usage: tasklog-bench w1 [--ops ops.jsonl | --tasks N --updates U] [--repeat R] [--dir DIR] [--durable]")
    exit(2)
}
do {
    let a = Arguments(args.dropFirst())
    let out: [String: Any]
    switch command {
    case "w1": out = try runW1(a)
    case "w3-folder": out = try runW3Folder(a)
    case "w3-http": out = try runW3HTTP(a)
    case "watch-latency": out = try runWatchLatency(a)
    default:
        print("unknown workload \(command)")
        exit(2)
    }
    let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys])
    print(String(decoding: data, as: UTF8.self))
} catch {
    FileHandle.standardError.write(Data("tasklog-bench: \(error)\n".utf8))
    exit(1)
}
