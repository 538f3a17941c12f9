@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// Two replicas with a shared base of `--tasks` tasks, then `--diverge` operations on each
/// (1% deletes, 10% on a contested tenth of the tasks, field mix as W1), as the peer
/// harness's W3. With a passphrase, the seed folder is encrypted and both stores remember its key.
func divergedPair(_ a: Arguments, base: String, passphrase: [UInt8]? = nil) throws -> (TaskStore, TaskStore, Int) {
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
    if let passphrase {
        let keyringA = try FolderKeyring.encrypt(folder: folder, store: storeA, passphrase: passphrase)
        _ = try FolderSync(store: storeA, folder: folder, keyring: keyringA).sync()
        let keyringB = try FolderKeyring.unlock(folder: folder, store: storeB, passphrase: passphrase)
        _ = try FolderSync(store: storeB, folder: folder, keyring: keyringB).sync()
    } else {
        _ = try FolderSync(store: storeA, folder: folder).sync()
        _ = try FolderSync(store: storeB, folder: folder).sync()
    }
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
    // As two running apps would be by the time they meet: their background seals done.
    storeA.waitForMaintenance()
    storeB.waitForMaintenance()
    return (storeA, storeB, d)
}

/// The segments (the format replicas exchange) holding what `have` lacks of `from`, as a
/// sync sends them: the commit at the peer's horizon, then sealed files verbatim, then the rest.
func delta(from store: TaskStore, for have: VersionVector) throws -> [[UInt8]] {
    var segments: [[UInt8]] = []
    for (replica, held) in try store.version.sortedEntries where held > have[replica] {
        segments += try store.segmentsToSend(of: replica, after: have[replica])
    }
    return segments
}

@discardableResult
func merge(_ segments: [[UInt8]], into store: TaskStore) throws -> UInt64 {
    var added: UInt64 = 0
    for s in segments { added += try store.integrate(segment: s).operations }
    return added
}

/// W3 through the library: exchange version vectors, export each side's delta as segments
/// (bytes in memory), decode and integrate them on the other side. The stores live on tmpfs
/// by default so that the disk is not what is measured (`--dir` to choose).
func runW3(_ a: Arguments) throws -> [String: Any] {
    var out = try repeated(a, "w3") { _ in
        let base = temporaryBase(a, "w3", memory: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let (storeA, storeB, d) = try divergedPair(a, base: base)
        _ = try storeA.tasks(TaskQuery(status: .all))  // both states loaded, as in a running app
        _ = try storeB.tasks(TaskQuery(status: .all))
        let clock = ContinuousClock()
        var va = VersionVector(), vb = VersionVector()
        let versions = try clock.measure {
            va = try storeA.version
            vb = try storeB.version
        }
        var ab: [[UInt8]] = [], ba: [[UInt8]] = []
        let exportAB = try clock.measure { ab = try delta(from: storeA, for: vb) }
        let exportBA = try clock.measure { ba = try delta(from: storeB, for: va) }
        var inB: UInt64 = 0, inA: UInt64 = 0
        let mergeB = try clock.measure { inB = try merge(ab, into: storeB) }
        let mergeA = try clock.measure { inA = try merge(ba, into: storeA) }
        var stateA: [TaskItem] = []
        let readA = try clock.measure { stateA = try storeA.tasks(TaskQuery(status: .all)) }
        let stateB = try storeB.tasks(TaskQuery(status: .all))
        let sameVersion = try storeA.version == storeB.version
        let bytesAB = ab.reduce(0) { $0 + $1.count }
        let bytesBA = ba.reduce(0) { $0 + $1.count }
        let exchange = versions + exportAB + exportBA + mergeB + mergeA
        return [
            "diverging_ops_per_side": d,
            "version_vectors_ms": milliseconds(versions),
            "export_a_to_b_ms": milliseconds(exportAB),
            "export_b_to_a_ms": milliseconds(exportBA),
            "merge_into_b_ms": milliseconds(mergeB),
            "merge_into_a_ms": milliseconds(mergeA),
            "exchange_and_merge_ms": milliseconds(exchange),
            "read_all_after_merge_ms": milliseconds(readA),
            "delta_a_to_b_bytes": bytesAB,
            "delta_b_to_a_bytes": bytesBA,
            "delta_bytes_per_op": Double(bytesAB + bytesBA) / Double(2 * d),
            "ops_into_b": inB, "ops_into_a": inA,
            "converged": stateA == stateB && sameVersion,
            "live_tasks": stateA.count,
        ]
    }
    out["stores_on"] = a.values["dir"] != nil ? "--dir"
        : FileManager.default.fileExists(atPath: "/dev/shm") ? "tmpfs (/dev/shm)" : "the temporary folder"
    return out
}

/// W3 through a shared folder: the syncs that make both converge (A publishes, B exchanges,
/// A imports), timed end to end.
func runW3Folder(_ a: Arguments) throws -> [String: Any] {
    try repeated(a, "w3-folder") { _ in
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
            "converge_ms": milliseconds(took),
            "sync_runs": reports.map { ["ops_in": $0.operationsIn, "bytes_in": $0.bytesIn, "ops_out": $0.operationsOut, "bytes_out": $0.bytesOut] },
            "bytes_written_to_folder": written,
            "bytes_per_op_in_folder": Double(written) / Double(2 * d),
            "folder_growth_bytes": directorySize(folder).bytes - before,
            "converged": stateA == stateB,
            "live_tasks": stateA.count,
        ]
    }
}

/// W3 over HTTP: B runs one `sync` against A's server (pull what it lacks, push what A
/// lacks), timed end to end on loopback.
func runW3HTTP(_ a: Arguments) throws -> [String: Any] {
    try repeated(a, "w3-http") { _ in
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
            "converge_ms": milliseconds(took),
            "ops_in": r.operationsIn, "bytes_in": r.bytesIn, "ops_out": r.operationsOut, "bytes_out": r.bytesOut,
            "bytes_per_op_on_the_wire": Double(r.bytesIn + r.bytesOut) / Double(2 * d),
            "converged": stateA == stateB,
            "live_tasks": stateA.count,
        ]
    }
}
