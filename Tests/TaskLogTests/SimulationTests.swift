import Dispatch
import Foundation
import TaskSim
import Testing

/// The deterministic simulator (Sources/TaskSim): replicas with their own stores, clocks and
/// processes, shared folders and HTTP links with faults, crashes, restored backups. Each seed
/// is one run; a failing run prints its seed and writes its logs as a case folder.
///
/// `scripts/simulate.sh SEEDS [START]` runs many more seeds on demand (release build).
@Suite("simulation")
struct SimulationTests {
    /// The seeds CI runs (the suite stays well under a minute in a debug build on 2 cores).
    static let ciSeeds: Range<UInt64> = 0..<300
    /// Seeds past that range that once lost or broke something, each with what it found.
    static let foundBugs: [UInt64] = [
        100632,  // a restored replica's fork: folder sync removed a file continuing the kept branch
        120742,  // the same, removing the moved branch's later file before its operations were moved
    ]

    /// Scratch space: tmpfs when there is one (the stores fsync every commit), else the temporary folder.
    static let workDirectory: String = {
        if let dir = ProcessInfo.processInfo.environment["TASKLOG_SIM_DIR"] { return dir }
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return (base as NSString).appendingPathComponent("tasklog-sim-\(getpid())")
    }()

    /// Where failing runs write their case folders (`seed-<n>/`).
    static let casesDirectory: String = ProcessInfo.processInfo.environment["TASKLOG_SIM_CASES"]
        ?? (NSTemporaryDirectory() as NSString).appendingPathComponent("tasklog-sim-cases")

    /// Case folders committed with fixes: Tests/SimCases/seed-<n>/.
    static let committedCases = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SimCases").path

    @Test("a seeded run converges, loses no acknowledged write and replays to its live state", arguments: ciSeeds)
    func seed(_ seed: UInt64) {
        let result = Simulation(seed: seed, workDirectory: Self.workDirectory, casesDirectory: Self.casesDirectory).run()
        #expect(result.passed, "\(result)")
        Self.tidy()
    }

    @Test("seeds that once found a bug now pass every check", arguments: foundBugs)
    func seedThatFoundABug(_ found: UInt64) {
        seed(found)
    }

    @Test("the same seed gives the same run")
    func deterministic() {
        for seed: UInt64 in [7, 1234] {
            let a = Simulation(seed: seed, workDirectory: Self.workDirectory).run()
            let b = Simulation(seed: seed, workDirectory: Self.workDirectory).run()
            #expect(a.passed && b.passed, "\(a)\n\(b)")
            #expect(a.fingerprint == b.fingerprint && a.trace == b.trace && a.stats == b.stats, "seed \(seed)")
        }
        Self.tidy()
    }

    @Test("runs without faults, with one replica and with many replicas pass too")
    func shapes() {
        for (seed, replicas, faults) in [(1, 2, FaultSet.none), (2, 1, .all), (3, 5, .all), (4, 4, .folders), (5, 3, .links)] {
            let result = Simulation(seed: UInt64(seed), replicas: replicas, steps: 80, faults: faults, workDirectory: Self.workDirectory).run()
            #expect(result.passed, "\(result)")
        }
        Self.tidy()
    }

    @Test("a restored backup that writes before syncing forks; folder syncs resolve it, converge and lose nothing", arguments: 0..<UInt64(5))
    func forkIsResolvedThroughFolders(_ seed: UInt64) {
        let failures = ForkScenario(seed: seed, transport: .folder, workDirectory: Self.workDirectory).run()
        #expect(failures.isEmpty, "fork scenario (folder) seed \(seed): \(failures)")
        Self.tidy()
    }

    /// Forks where the two branches do not otherwise overlap: an HTTP exchange (probes and the
    /// commit at the receiver's horizon), and folder files aligned with the new branch (each
    /// namespace's furthest file within what is held is checked before importing).
    @Test(
        "a fork is resolved even when nothing overlaps (HTTP, folder files aligned with the new branch)",
        arguments: [ForkScenario.Transport.http, .folderAligned], 0..<UInt64(20))
    func forkWithoutOverlapIsResolved(_ transport: ForkScenario.Transport, _ seed: UInt64) {
        let failures = ForkScenario(seed: seed, transport: transport, workDirectory: Self.workDirectory).run()
        #expect(failures.isEmpty, "fork scenario (\(transport)) seed \(seed): \(failures)")
        Self.tidy()
    }

    @Test("committed case folders (Tests/SimCases/seed-<n>/) replay and pass every check")
    func committedCasesReplay() throws {
        let fm = FileManager.default
        guard fm.fileExists(atPath: Self.committedCases) else { return }
        let cases = try fm.contentsOfDirectory(atPath: Self.committedCases).filter { $0.hasPrefix("seed-") }.sorted()
        for name in cases {
            let failures = SimCase.replay(at: (Self.committedCases as NSString).appendingPathComponent(name), workDirectory: Self.workDirectory)
            #expect(failures.isEmpty, "Tests/SimCases/\(name): \(failures)")
        }
        let others = try fm.contentsOfDirectory(atPath: Self.committedCases).filter { !$0.hasPrefix("seed-") && !$0.hasPrefix(".") }
        #expect(others.isEmpty, "Tests/SimCases holds only seed-<n> folders: \(others)")
    }

    /// Many seeds on demand: TASKLOG_SIM_SEEDS=N [TASKLOG_SIM_START=S] [TASKLOG_SIM_STEPS=…]
    /// [TASKLOG_SIM_REPLICAS=…] [TASKLOG_SIM_FAULTS=all|none|name,…] (scripts/simulate.sh).
    @Test("many seeds (TASKLOG_SIM_SEEDS)", .enabled(if: ProcessInfo.processInfo.environment["TASKLOG_SIM_SEEDS"] != nil))
    func manySeeds() throws {
        let env = ProcessInfo.processInfo.environment
        let count = UInt64(env["TASKLOG_SIM_SEEDS"] ?? "") ?? 0
        let start = UInt64(env["TASKLOG_SIM_START"] ?? "") ?? 0
        let steps = Int(env["TASKLOG_SIM_STEPS"] ?? "") ?? 60
        let replicas = Int(env["TASKLOG_SIM_REPLICAS"] ?? "") ?? 3
        let faults = try #require(FaultSet(names: env["TASKLOG_SIM_FAULTS"] ?? "all"), "unknown fault name in TASKLOG_SIM_FAULTS")
        let results = SimResults()
        let began = DispatchTime.now().uptimeNanoseconds
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        try FileManager.default.createDirectory(atPath: Self.casesDirectory, withIntermediateDirectories: true)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var seed = start + UInt64(worker)
            // The seed in flight, for scripts/simulate.sh to name if a trap ends the process
            // (the run's folder, with its trace.txt so far, then stays behind).
            let inFlight = (Self.casesDirectory as NSString).appendingPathComponent("in-flight-\(worker).txt")
            defer { try? FileManager.default.removeItem(atPath: inFlight) }
            while seed < start + count {
                try? "\(seed) (\(Self.workDirectory)/run-\(seed)-*/trace.txt)\n".write(toFile: inFlight, atomically: false, encoding: .utf8)
                let r = Simulation(
                    seed: seed, replicas: replicas, steps: steps, faults: faults, workDirectory: Self.workDirectory,
                    casesDirectory: Self.casesDirectory
                ).run()
                results.add(r)
                if count == 1 && env["TASKLOG_SIM_VERBOSE"] != nil { Self.report(r.trace.joined(separator: "\n")) }
                seed += UInt64(workers)
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        Self.tidy()
        let failed = results.failed
        Self.report("simulation: \(count) seeds from \(start) in \(String(format: "%.1f", seconds)) s (\(String(format: "%.1f", Double(count) / seconds)) seeds/s), \(failed.count) failed\(failed.isEmpty ? "" : ": " + failed.map { "\($0.seed)" }.joined(separator: " "))")
        if env["TASKLOG_SIM_VERBOSE"] != nil { Self.report("\(results.stats)") }
        for r in failed.prefix(20) { Issue.record("\(r)") }
    }

    /// A line on standard error, where the test library reports too (so they stay in order).
    static func report(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    /// Removes the scratch folder once no run is using it (each run removes its own files).
    static func tidy() { rmdir(workDirectory) }
}

/// Results gathered from several threads.
final class SimResults: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [SimulationResult] = []
    private var total = SimStats()

    func add(_ r: SimulationResult) {
        lock.lock()
        defer { lock.unlock() }
        total.add(r.stats)
        if !r.passed { failures.append(r) }
    }

    var stats: SimStats {
        lock.lock()
        defer { lock.unlock() }
        return total
    }

    var failed: [SimulationResult] {
        lock.lock()
        defer { lock.unlock() }
        return failures.sorted { $0.seed < $1.seed }
    }
}
