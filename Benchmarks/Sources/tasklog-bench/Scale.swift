@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Scale: the W1 shape grown to `--tasks` tasks and `--updates` updates (default 1,000,000 and
/// 9,000,000: 10,000,000 operations), built at each fraction of `--sizes` (default 0.1,0.3,1)
/// to show how size and replay time grow. At each size: log bytes per op, the cold rebuild
/// from the logs, open + read every task through the library and, with `--tasklog PATH`,
/// `tasklog add` as a whole process (`--cli-warmup`, `--cli-runs`). `--repeat` repeats the
/// measurements on each built store, not the build. The build hands the commits (one per
/// logical operation) to `commit(batch:)` `--batch` at a time (default 1,000; 1 = one by one).
/// `--keep` leaves the built stores under `--dir` (for `replay --store`).
func runScale(_ a: Arguments) throws -> [String: Any] {
    let tasks = a.int("tasks", 1_000_000)
    let updates = a.int("updates", 9_000_000)
    let fractions = (a.values["sizes"] ?? "0.1,0.3,1").split(separator: ",").compactMap { Double($0) }
    let every = max(1, a.int("batch", 1000))
    let tasklog = a.values["tasklog"]
    let clock = ContinuousClock()
    var points: [[String: Any]] = []
    for f in fractions {
        let n = max(1, Int((Double(tasks) * f).rounded()))
        let u = Int((Double(updates) * f).rounded())
        progress("scale: building \(n) tasks + \(u) updates")
        let dir = temporaryBase(a, "scale-\(n)")
        defer { if !a.flags.contains("keep") { try? FileManager.default.removeItem(atPath: dir) } }
        var options = TaskStore.Options()
        options.durable = a.flags.contains("durable")
        if let t = a.values["seal-threshold"].flatMap(Int.init) { options.sealThreshold = t }
        if let t = a.values["merge-target"].flatMap(Int.init) { options.mergeTarget = t }
        if a.flags.contains("seal-in-commit") { options.sealsInBackground = false }
        options.wallClock = { wall.load(ordering: .relaxed) }
        var point: [String: Any] = [:]
        do {
            let store = try TaskStore.open(at: dir, options: options)
            var g = W1Generator(rng: SplitMix64(seed: UInt64(a.int("seed", 42))))
            var preparer = StreamPreparer(replica: store.replica, tasks: n)
            var commits = 0
            var pending: [[TaskOperation]] = []
            var inBatch = 0
            let built = try clock.measure {
                try g.forEach(tasks: n, updates: u) { op in
                    wall.store(op.time, ordering: .relaxed)
                    if every == 1 {
                        try store.commit(preparer.operations(for: op))
                        commits += 1
                    } else {
                        pending.append(preparer.operations(for: op))
                        inBatch += 1
                        if inBatch == every {
                            try store.commit(batch: pending)
                            commits += every
                            pending.removeAll(keepingCapacity: true)
                            inBatch = 0
                        }
                    }
                }
                if !pending.isEmpty {
                    try store.commit(batch: pending)
                    commits += pending.count
                }
            }
            let ops = n + u
            // The log at rest, as W1 measures it: the seals and merges the build left queued
            // done, and the tail the burst left sealed.
            let settled = clock.measure { store.waitForMaintenance() }
            let logs = directorySize(dir + "/logs")
            let tables = try taskTableBytes(logs: dir + "/logs")
            point = [
                "tasks": n, "updates": u, "logical_ops": ops, "commits": commits,
                "low_level_ops": try store.version.operationCount,
                "build_s": seconds(built),
                "build_ops_per_s": Double(ops) / seconds(built),
                "settle_ms": milliseconds(settled),
                "log_bytes": logs.bytes,
                "log_files": logs.files,
                "log_bytes_per_op": Double(logs.bytes) / Double(ops),
                "task_table_bytes": tables,
                "task_table_bytes_per_op": Double(tables) / Double(ops),
                "log_bytes_per_op_without_task_tables": Double(logs.bytes - tables) / Double(ops),
            ]
            progress("scale: \(n) tasks built in \(String(format: "%.1f", seconds(built))) s; measuring")
            var replays: [Double] = []
            for _ in 0..<a.repeats {
                var rebuilt: TaskState?  // released after the clock stops
                replays.append(milliseconds(try clock.measure { rebuilt = try store.replay().state }))
                withExtendedLifetime(rebuilt) {}
            }
            point["replay_ms"] = summary(replays)
            point["replay_ns_per_op"] = median(replays) * 1e6 / Double(ops)
        }
        // Whole-process `tasklog add` on the store as the build left it (the first warm-up
        // run also catches up with the tail and saves a snapshot, as a first use would).
        if let tasklog {
            var times: [Double] = []
            var rss: [Double] = []
            for i in 0..<(a.int("cli-warmup", 2) + a.int("cli-runs", 10)) {
                let r = try spawnAndWait(tasklog, ["--store", dir, "add", "Call the dentist about the invoice"])
                guard r.status == 0 else { throw BenchError("tasklog add exited with \(r.status)") }
                if i == 0 { point["cli_add_first_run_ms"] = r.ms }
                if i >= a.int("cli-warmup", 2) {
                    times.append(r.ms)
                    rss.append(Double(r.maxRSSKiB) / 1024)
                }
            }
            point["cli_open_and_add_ms"] = summary(times)
            // Under /usr/bin/time when there is one: a child spawned straight from this
            // process (which holds the whole state) reports this process's resident set as
            // its own peak, since the child shares its memory until it execs.
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/time") {
                let out = dir + "/rss.txt"
                rss = []
                for _ in 0..<3 {
                    let r = try spawnAndWait("/usr/bin/time", ["-f", "%M", "-o", out, tasklog, "--store", dir, "add", "Call the dentist about the invoice"])
                    guard r.status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8),
                        let kib = Double(text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").last ?? "")
                    else { throw BenchError("tasklog add under /usr/bin/time failed") }
                    rss.append(kib / 1024)
                }
            }
            point["cli_add_peak_rss_mib"] = summary(rss)
        }
        var opens: [Double] = []
        for _ in 0..<a.repeats {
            opens.append(milliseconds(try clock.measure {
                let s = try TaskStore.open(at: dir, create: false, options: options)
                _ = try s.tasks(TaskQuery(status: .all)).count
            }))
        }
        point["open_and_read_all_ms"] = summary(opens)
        point["snapshot_bytes"] = directorySize(dir) { $0 == "snapshot" }.bytes
        points.append(point)
    }
    var out: [String: Any] = [
        "sizes": points,
        "commits_per_batch_call": every,
        "durable": a.flags.contains("durable"),
        "tasklog": tasklog != nil ? "given" : "not given (no whole-process figures)",
    ]
    if let first = points.first, let last = points.last, points.count > 1 {
        func ratio(_ k: String) -> Double? {
            guard let x = first[k].flatMap(number), let y = last[k].flatMap(number), x > 0 else { return nil }
            return y / x
        }
        out["ops_ratio_largest_to_smallest"] = ratio("logical_ops")
        out["bytes_per_op_ratio_largest_to_smallest"] = ratio("log_bytes_per_op")
        out["bytes_per_op_without_task_tables_ratio_largest_to_smallest"] = ratio("log_bytes_per_op_without_task_tables")
        out["replay_ns_per_op_ratio_largest_to_smallest"] = ratio("replay_ns_per_op")
    }
    return out
}

/// The bytes of the task tables in every commits record under `logs` (Spec/log-format.md,
/// "Commit payload"): each record names each task it touches once, 17 bytes for a UUID id,
/// so this is the part of the log that depends on how many distinct tasks a record touches.
func taskTableBytes(logs: String) throws -> Int {
    var total = 0
    guard let e = FileManager.default.enumerator(atPath: logs) else { return 0 }
    while let name = e.nextObject() as? String {
        guard name.hasSuffix(".tlog"), let data = FileManager.default.contents(atPath: logs + "/" + name) else { continue }
        total += try [UInt8](data).withUnsafeBytes { file in
            var bytes = 0
            for record in try SegmentScanner.scan(file).records where record.type == .commits {
                let payload = try RecordFraming.payload(of: record, in: file)
                bytes += try payload.withUnsafeBytes { (p) throws(DecodeError) -> Int in
                    var r = ByteReader(p)
                    for _ in 0..<(try r.uvarint()) {
                        _ = try r.u8() == 0 ? r.bytes(16) : r.bytes(try r.count(limit: r.remaining))
                    }
                    return r.offset
                }
            }
            return bytes
        }
    }
    return total
}

/// The cold rebuild of an existing store from its logs alone (`--store PATH`), `--repeat`
/// times: to profile the replay on a store `scale --keep` (or `w1 --keep`) built. With
/// `--warm`, W2 instead: open the store and read every task through the snapshot; with
/// `--once`, W2 read once: open the store and list every task without loading the state.
func runReplay(_ a: Arguments) throws -> [String: Any] {
    guard let path = a.values["store"] else { throw BenchError("--store PATH is required") }
    let store = try TaskStore.open(at: path)
    let ops = try store.version.operationCount
    var times: [Double] = []
    if a.flags.contains("warm") {
        // W2 instead: open the store, load the state (snapshot + the log after it), read every task.
        var stores: [TaskStore] = []  // kept, so that tearing one down is not timed
        for _ in 0..<a.repeats {
            times.append(milliseconds(try ContinuousClock().measure {
                let opened = try TaskStore.open(at: path, create: false)
                _ = try opened.tasks(TaskQuery(status: .all)).count
                stores.append(opened)
            }))
        }
        return ["operations": ops, "open_and_read_all_ms": summary(times)]
    }
    if a.flags.contains("once") {
        // W2 read once instead: open the store and list every task straight from the snapshot.
        for _ in 0..<a.repeats {
            var listed = 0
            times.append(milliseconds(try ContinuousClock().measure {
                try TaskStore.open(at: path, create: false).scanTasks(TaskQuery(status: .all)) { _ in listed += 1 }
            }))
        }
        return ["operations": ops, "open_and_read_once_ms": summary(times)]
    }
    for _ in 0..<a.repeats {
        var rebuilt: TaskState?  // released after the clock stops
        times.append(milliseconds(try ContinuousClock().measure { rebuilt = try store.replay().state }))
        withExtendedLifetime(rebuilt) {}
    }
    return ["operations": ops, "replay_ms": summary(times), "replay_ns_per_op": median(times) * 1e6 / Double(ops)]
}
