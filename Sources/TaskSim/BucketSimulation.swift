@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// Replicas that sync only through one shared in-memory bucket (``MemoryFolderStorage``) that
/// loses publishes and answers, fails and slows calls, and gives stale and reordered listings.
/// For `steps` steps each step picks a replica that edits or syncs (a failed sync is retried
/// later, as an app does). Then the faults end and every replica syncs in turn, round after
/// round, until all hold the same operations and a round moves nothing. The checks: the
/// replicas converge, no acknowledged commit is lost, none is held twice, and an idle sync
/// costs one request.
package struct BucketSimulation: Sendable {
    package var seed: UInt64
    package var replicas: Int
    package var steps: Int
    package var faults: BucketFaults
    /// Scratch space: the run uses (and afterwards removes) `workDirectory/bucket-<seed>-<n>/`.
    package var workDirectory: String
    /// Run the full checks of ``SimChecks`` (replays and compactions: slow with many replicas).
    package var fullChecks = true

    package init(seed: UInt64, replicas: Int = 4, steps: Int = 60, faults: BucketFaults = .all, workDirectory: String) {
        self.seed = seed
        self.replicas = replicas
        self.steps = steps
        self.faults = faults
        self.workDirectory = workDirectory
    }

    /// What a run found.
    package struct Result: Sendable {
        /// The failed checks; empty when the run passed.
        package var failures: [String]
        /// Rounds (every replica syncing once) after the faults ended until every replica held
        /// every operation.
        package var roundsToConverge = 0
        /// Requests per replica of one sync round once nothing changes.
        package var idleRequestsPerSync = 0.0
        /// Syncs that failed on an injected fault, and the faults injected, by kind.
        package var failedSyncs = 0
        package var injected: [String: Int] = [:]
    }

    /// Runs the simulation. Never throws: anything unexpected is a failure in the result.
    package func run() -> Result {
        let dir = SimFiles.join(workDirectory, "bucket-\(seed)-\(Self.runs.add(1, ordering: .relaxed).newValue)")
        SimFiles.removeTree(dir)
        defer { SimFiles.removeTree(dir) }
        var rng = SimRandom(seed: seed)
        let bucket = MemoryFolderStorage(seed: rng.next(), faults: faults)
        var result = Result(failures: [])
        do {
            var world = try World(self, dir: dir, bucket: bucket, &rng)
            try world.act(steps: steps, &rng, &result)
            bucket.faults = .none
            try world.heal(faults.staleListings > 0, &result)
            result.failures += try world.check(fullChecks)
        } catch {
            result.failures.append("unexpected error: \(error)")
        }
        result.injected = bucket.injected
        return result
    }

    private static let runs = Atomic<Int>(0)
}

/// The stores, their sync engines and what was acknowledged, in one run of a ``BucketSimulation``.
private struct World {
    let bucket: MemoryFolderStorage
    var stores: [TaskStore] = []
    var engines: [FolderSync] = []
    var acknowledged: [SimChecks.Acknowledged] = []

    init(_ config: BucketSimulation, dir: String, bucket: MemoryFolderStorage, _ rng: inout SimRandom) throws {
        self.bucket = bucket
        for i in 0..<max(1, config.replicas) {
            var options = TaskStore.Options()
            options.durable = false
            options.newReplicaID = ReplicaID.random(using: &rng)
            options.lockLease = .zero
            options.sealsInBackground = false
            options.maintenanceOnCallingThread = true
            options.sealThreshold = rng.pick([256, 1024, 8192])
            let store = try TaskStore.open(at: SimFiles.join(dir, "replica-\(i)"), options: options)
            var engine = FolderSync(store: store, storage: bucket)
            engine.mergeThreshold = rng.pick([2, 4, 8])
            // Long enough that no listing is repeated for its age during the steps.
            engine.relistAfter = .seconds(3600)
            stores.append(store)
            engines.append(engine)
        }
    }

    mutating func act(steps: Int, _ rng: inout SimRandom, _ result: inout BucketSimulation.Result) throws {
        for _ in 0..<steps {
            let i = rng.int(0..<stores.count)
            if rng.chance(0.55) {
                let outcome = try SimWorkload.perform(on: stores[i], &rng)
                if let problem = outcome.problem { result.failures.append("replica-\(i) \(outcome.action): \(problem)") }
            } else if !sync(i) {
                result.failedSyncs += 1
            }
        }
        // No store forks here: every commit a store wrote was acknowledged to its user.
        for store in stores {
            for c in try store.commits(of: store.replica, after: 0) {
                acknowledged.append(SimChecks.Acknowledged(replica: store.replica, commit: c))
            }
        }
    }

    /// One sync of replica `i`; false when it failed (an injected fault: tried again later).
    func sync(_ i: Int) -> Bool { (try? engines[i].sync()) != nil }

    /// Every replica syncs in turn until all hold the same operations, then until a round moves
    /// nothing; then one more round, counted, is the idle one. After stale listings, the first
    /// round lists whatever the markers say, as the listings the steps trusted have aged past
    /// `relistAfter` by then; later rounds trust the markers.
    mutating func heal(_ staleListings: Bool, _ result: inout BucketSimulation.Result) throws {
        let limit = 4 + 2 * stores.count
        var converged = false
        for round in 1...limit {
            for e in engines.indices { engines[e].relistAfter = round == 1 && staleListings ? .zero : .seconds(3600) }
            var moved: UInt64 = 0
            for e in engines {
                let report = try e.sync()
                moved += report.operationsIn + report.operationsOut
            }
            if !converged, try Set(stores.map { try $0.version }).count == 1 {
                converged = true
                result.roundsToConverge = round
            }
            if converged && moved == 0 { break }
            if round == limit { result.failures.append("the replicas still exchanged operations after \(limit) rounds") }
        }
        let before = bucket.requests
        for e in engines { _ = try e.sync() }
        result.idleRequestsPerSync = Double(bucket.requests - before) / Double(engines.count)
    }

    /// Convergence and no loss (``SimChecks``), and no operation held twice: each store holds
    /// exactly the operations acknowledged, as many as were written.
    func check(_ full: Bool) throws -> [String] {
        var failures: [String] = []
        var written = VersionVector()
        var count: UInt64 = 0
        for a in acknowledged {
            written[a.replica] = max(written[a.replica], a.commit.endSeq - 1)
            count += UInt64(a.commit.operations.count)
        }
        for (i, store) in stores.enumerated() {
            let held = try store.version
            if held != written { failures.append("replica-\(i) holds \(held), not the operations written \(written)") }
            let ops = try held.sortedEntries.reduce(UInt64(0)) { sum, e in
                sum + (try store.commits(of: e.0, after: 0)).reduce(0) { $0 + UInt64($1.operations.count) }
            }
            if ops != count { failures.append("replica-\(i) holds \(ops) operations, \(count) were written") }
        }
        let named = stores.enumerated().map { (name: "replica-\($0.offset)", store: $0.element) }
        if full { failures += SimChecks.run(named, acknowledged: acknowledged) }
        return failures
    }
}
