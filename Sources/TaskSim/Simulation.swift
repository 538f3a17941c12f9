/// A deterministic simulation of TaskLog replicas, driven by a seed.
///
/// `replicas` devices, each with its own store (real files in a folder of its own under
/// `workDirectory`), its own clock and sometimes a second process, are connected through
/// simulated shared folders and HTTP links. For `steps` steps each step picks a replica and
/// an action: a user edit, a REST write through a link, a sync (folder or link), the sync
/// client delivering files, a crash, a backup or a restore from one, a clock jump, a
/// compaction, a restart. Faults (``FaultSet``) are injected along the way. Then the faults
/// end, everything is delivered and the replicas sync until nothing moves, and the
/// invariants of ``SimChecks`` are checked.
///
/// The same seed gives the same run. A failing run's result names the seed and the failed
/// check, and (when `casesDirectory` is set) its logs are written to
/// `casesDirectory/seed-<seed>/`, which ``SimCase/replay(at:workDirectory:)`` replays.
///
/// ```swift
/// let result = Simulation(seed: 42, workDirectory: scratchFolder).run()
/// if !result.passed { print(result) }
/// ```
package struct Simulation: Sendable {
    package var seed: UInt64
    package var replicas: Int
    package var steps: Int
    package var faults: FaultSet
    /// Scratch space: the run uses (and afterwards removes) `workDirectory/run-<seed>-<n>/`.
    package var workDirectory: String
    /// Where a failing run writes its case folder; nil: nowhere.
    package var casesDirectory: String?
    /// Keep the run's folder afterwards (to look at it).
    package var keepFiles = false

    package init(
        seed: UInt64, replicas: Int = 3, steps: Int = 60, faults: FaultSet = .all, workDirectory: String,
        casesDirectory: String? = nil
    ) {
        self.seed = seed
        self.replicas = replicas
        self.steps = steps
        self.faults = faults
        self.workDirectory = workDirectory
        self.casesDirectory = casesDirectory
    }

    /// Runs the simulation. Never throws: anything unexpected is a failure in the result.
    package func run() -> SimulationResult { SimRun(self).run() }
}
