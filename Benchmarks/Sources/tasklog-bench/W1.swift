@_spi(Engine) import CRDTCore
import Foundation
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// The wall clock the stores see: pinned to each operation's own time, so that runs are
/// reproducible and the log holds the stream's timestamps.
let wall = Atomic<UInt64>(0)

/// Turns a stream of logical operations into the operations a fresh store commits, in order.
/// A delete observes its task's add, as `remove` does: a fresh store numbers its operations
/// from 1 in the order they are committed, however they are grouped into commits, so the
/// add's operation id is known before it is committed.
struct StreamPreparer {
    let replica: ReplicaID
    private var nextSeq: UInt64 = 1
    private var addSeq: [TaskID: UInt64] = [:]

    /// - Parameter tasks: how many creates to expect (room is made for them up front).
    init(replica: ReplicaID, tasks: Int = 0) {
        self.replica = replica
        addSeq.reserveCapacity(tasks)
    }

    mutating func operations(for op: LogicalOp) -> [TaskOperation] {
        let ops: [TaskOperation]
        switch op {
        case .create(let id, let title, let priority, _):
            addSeq[id] = nextSeq
            ops = NewTask(title: title, priority: priority).operations(id: id)
        case .set(let id, let write, _):
            ops = [.set(id, write)]
        case .delete(let id, _):
            ops = [.remove(id, observed: addSeq[id].map { [OperationID(replica: replica, seq: $0)] } ?? [])]
        }
        nextSeq += UInt64(ops.count)
        return ops
    }
}

func w1Operations(_ a: Arguments) throws -> [LogicalOp] {
    if let path = a.values["ops"] {
        return try OpsFile.load(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }
    var g = W1Generator(rng: SplitMix64(seed: UInt64(a.int("seed", 42))))
    return g.make(tasks: a.int("tasks", 10_000), updates: a.int("updates", 100_000))
}

/// W1 build, the sizes it leaves on disk, then W2: open the store and read every task, and
/// rebuild from the logs. Each logical operation is its own commit; by default each is
/// committed alone (`commit(_:)`); `--batch K` hands them to `commit(batch:)` K at a time
/// (0: all in one call), still one commit each; `--commit-every K` puts K logical operations
/// into one commit instead.
func runW1(_ a: Arguments) throws -> [String: Any] {
    let ops = try w1Operations(a)
    let every = max(1, a.int("commit-every", 1))
    let batch = a.values["batch"].map { _ in a.int("batch", 0) }
    let creates = ops.count { if case .create = $0 { true } else { false } }
    var out = try repeated(a, "w1") { rep in
        let dir = temporaryBase(a, "w1-\(rep)")
        defer { if !a.flags.contains("keep") { try? FileManager.default.removeItem(atPath: dir) } }
        var options = TaskStore.Options()
        options.durable = a.flags.contains("durable")
        if let t = a.values["seal-threshold"].flatMap(Int.init) { options.sealThreshold = t }
        if let ms = a.values["lock-lease-ms"].flatMap(Double.init) { options.lockLease = .microseconds(Int(ms * 1000)) }
        if a.flags.contains("seal-in-commit") { options.sealsInBackground = false }
        options.wallClock = { wall.load(ordering: .relaxed) }
        let store = try TaskStore.open(at: dir, options: options)
        let prepared = {
            var preparer = StreamPreparer(replica: store.replica, tasks: creates)
            return ops.map { ($0.time, preparer.operations(for: $0)) }
        }()
        let clock = ContinuousClock()
        var commits = 0
        let built = try clock.measure {
            if let batch {
                let k = batch <= 0 ? prepared.count : batch
                var i = 0
                while i < prepared.count {
                    let end = min(prepared.count, i + k)
                    wall.store(prepared[end - 1].0, ordering: .relaxed)
                    try store.commit(batch: prepared[i..<end].map(\.1))
                    i = end
                }
                commits = prepared.count
            } else if every == 1 {
                for (time, o) in prepared {
                    wall.store(time, ordering: .relaxed)
                    try store.commit(o)
                }
                commits = prepared.count
            } else {
                var i = 0
                while i < prepared.count {
                    let end = min(prepared.count, i + every)
                    wall.store(prepared[end - 1].0, ordering: .relaxed)
                    try store.commit(prepared[i..<end].flatMap(\.1))
                    commits += 1
                    i = end
                }
            }
        }
        // The background work the burst left (seals, merges, the snapshot, and the seal of
        // the tail once the burst is over), until the store is at rest.
        let settled = clock.measure { store.waitForMaintenance() }
        return try measureStore(
            store, dir: dir, options: options, logicalOps: ops.count, built: built, settled: settled, commits: commits)
    }
    out["durable"] = a.flags.contains("durable")
    out["commit_every_logical_ops"] = every
    out["commit_mode"] = batch.map { "commit(batch:), \($0 <= 0 ? ops.count : $0) commits per call" }
        ?? (every == 1 ? "commit(_:), one call per logical op" : "commit(_:), \(every) logical ops per commit")
    out["source"] = a.values["ops"] != nil ? "the peers' exact stream (ops.jsonl from peer_baseline.py --dump)" : "built-in generator (seed \(a.int("seed", 42)))"
    return out
}

/// Sizes after a W1 build, then compact, W2 open + read all, and the cold rebuild.
func measureStore(
    _ store: TaskStore, dir: String, options: TaskStore.Options, logicalOps: Int, built: Duration, settled: Duration,
    commits: Int
) throws -> [String: Any] {
    let logs = dir + "/logs"
    let n = Double(logicalOps)
    let atRest = directorySize(logs)
    let sealedBefore = directorySize(logs) { !$0.hasSuffix("tail.tlog") }
    let lowLevel = try store.version.operationCount
    // The log once its tail is sealed (what a sync publishes), before any compaction.
    try store.seal()
    let tailSealed = directorySize(logs)
    let clock = ContinuousClock()
    let compacted = try clock.measure { try store.compact() }
    let sealed = directorySize(logs)
    let snapshot = directorySize(dir) { $0 == "snapshot" }
    // W2: open the store and read every task (snapshot + the log after it).
    var count = 0
    var opened: TaskStore?
    let open = try clock.measure { opened = try TaskStore.open(at: dir, create: false, options: options) }
    let load = try clock.measure { _ = try opened!.catchUp() }
    let read = try clock.measure { count = try opened!.tasks(TaskQuery(status: .all)).count }
    // W2 read once: what a process that reads every task once does, listing them straight
    // from the snapshot (merged with the log after it) without loading the state.
    var listed = 0
    let once = try clock.measure {
        try TaskStore.open(at: dir, create: false, options: options).scanTasks(TaskQuery(status: .all)) { _ in listed += 1 }
    }
    guard listed == count else { throw BenchError("scanTasks listed \(listed) tasks, the loaded state \(count)") }
    // W2 cold: rebuild the state from the logs alone (the state is released after the clock
    // stops, as the W2 store above is).
    var rebuilt: TaskState?
    let replay = try clock.measure { rebuilt = try store.replay().state }
    withExtendedLifetime(rebuilt) {}
    return [
        "logical_ops": logicalOps,
        "low_level_ops": lowLevel,
        "commits": commits,
        "tasks_read": count,
        "build_s": seconds(built),
        "ops_per_s": n / seconds(built),
        "build_us_per_commit": seconds(built) * 1e6 / Double(commits),
        "settle_ms": milliseconds(settled),
        "ops_per_s_until_at_rest": n / seconds(built + settled),
        "log_bytes_at_rest": atRest.bytes,
        "log_bytes_per_op_at_rest": Double(atRest.bytes) / n,
        "sealed_segments_at_rest": sealedBefore.files,
        "tail_bytes_at_rest": atRest.bytes - sealedBefore.bytes,
        "log_bytes_per_op_tail_sealed": Double(tailSealed.bytes) / n,
        "log_bytes_after_compact": sealed.bytes,
        "log_bytes_per_op_after_compact": Double(sealed.bytes) / n,
        "segment_files_after_compact": sealed.files,
        "snapshot_bytes": snapshot.bytes,
        "compact_ms": milliseconds(compacted),
        "w2_open_ms": milliseconds(open),
        "w2_load_state_ms": milliseconds(load),
        "w2_read_all_ms": milliseconds(read),
        "open_and_read_all_ms": milliseconds(open + load + read),
        "open_and_read_once_ms": milliseconds(once),
        "cold_replay_ms": milliseconds(replay),
    ]
}
