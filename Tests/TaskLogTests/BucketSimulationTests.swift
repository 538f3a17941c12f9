import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
import TaskSim
import Testing

/// Replicas syncing through one in-memory bucket (Sources/TaskSim/MemoryFolderStorage.swift)
/// that loses publishes and answers, fails and slows calls, and lists stale and reordered.
@Suite("bucket simulation")
struct BucketSimulationTests {
    static let seeds: Range<UInt64> = 0..<16

    @Test("replicas converge through a faulty bucket: no acknowledged write lost, none held twice", arguments: seeds)
    func faultyBucketConverges(_ seed: UInt64) {
        let result = BucketSimulation(seed: seed, replicas: 4, steps: 80, workDirectory: SimulationTests.workDirectory).run()
        #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.joined(separator: "\n"))")
        #expect(result.idleRequestsPerSync == 1, "seed \(seed)")
        SimulationTests.tidy()
    }

    @Test("with listings that are never stale, syncs trust the change marker throughout and still converge", arguments: seeds)
    func markerAloneSuffices(_ seed: UInt64) {
        var faults = BucketFaults.all
        faults.staleListings = 0
        let result = BucketSimulation(seed: seed, replicas: 4, steps: 80, faults: faults, workDirectory: SimulationTests.workDirectory).run()
        #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.joined(separator: "\n"))")
        SimulationTests.tidy()
    }

    @Test("every kind of bucket fault is injected across the seeds, and syncs fail on them and recover")
    func faultsAreInjected() {
        var injected: [String: Int] = [:]
        var failedSyncs = 0
        for seed in 100..<UInt64(104) {
            let result = BucketSimulation(seed: seed, replicas: 3, steps: 80, workDirectory: SimulationTests.workDirectory).run()
            #expect(result.failures.isEmpty, "seed \(seed): \(result.failures.joined(separator: "\n"))")
            injected.merge(result.injected, uniquingKeysWith: +)
            failedSyncs += result.failedSyncs
        }
        for kind in ["lost publish", "lost answer", "failed read", "slow call", "stale listing", "lost marker change"] {
            #expect(injected[kind, default: 0] > 0, "\(kind): \(injected)")
        }
        #expect(failedSyncs > 0)
        SimulationTests.tidy()
    }

    @Test("20 replicas through one bucket converge in two rounds, and then each idle sync costs one request")
    func twentyReplicas() {
        var simulation = BucketSimulation(seed: 7, replicas: 20, steps: 60, faults: .none, workDirectory: SimulationTests.workDirectory)
        simulation.fullChecks = false
        let result = simulation.run()
        #expect(result.failures.isEmpty, "\(result.failures.joined(separator: "\n"))")
        #expect(result.roundsToConverge <= 2, "\(result.roundsToConverge) rounds")
        #expect(result.idleRequestsPerSync == 1)
        SimulationTests.tidy()
    }

    @Test("a sync whose marker change was lost changes the marker at its next sync, so an idle replica sees its publish")
    func lostMarkerChangeIsRetried() throws {
        let dir = TemporaryDirectory()
        let bucket = MemoryFolderStorage(seed: 1)
        let (a, b) = (try TaskStore.open(at: dir.sub("a")), try TaskStore.open(at: dir.sub("b")))
        let (syncA, syncB) = (FolderSync(store: a, storage: bucket), FolderSync(store: b, storage: bucket))
        _ = try a.add(NewTask(title: "first"))
        _ = try syncA.sync()
        for _ in 0..<2 { _ = try syncB.sync() }
        let before = bucket.requests
        _ = try syncB.sync()
        #expect(bucket.requests - before == 1, "an idle sync reads the marker only")
        _ = try a.add(NewTask(title: "second"))
        var faults = BucketFaults()
        faults.lostMarkerChanges = 1
        bucket.faults = faults
        #expect(throws: SyncError.self) { try syncA.sync() }
        bucket.faults = .none
        _ = try syncB.sync()
        #expect(try b.tasks(TaskQuery(status: .all)).count == 1, "the marker did not change: b trusts its last listing")
        _ = try syncA.sync()
        _ = try syncB.sync()
        #expect(try b.tasks(TaskQuery(status: .all)).map(\.title).sorted() == ["first", "second"])
    }
}
