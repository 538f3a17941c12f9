/// What a ``Simulation`` run found.
package struct SimulationResult: Sendable, CustomStringConvertible {
    package var seed: UInt64
    /// The failed checks, each naming its check ("(a) convergence: …"); empty when the run passed.
    package var failures: [String]
    /// Actions taken and faults injected, by kind.
    package var stats: SimStats
    /// A digest of the converged state (the same for the same seed in every process; 0 if
    /// the run failed before converging).
    package var fingerprint: UInt64
    /// The run's steps, in words.
    package var trace: [String]
    /// The case folder written for a failing run.
    package var casePath: String?
    /// Whether replaying the case folder fails too (the failure lives in the files).
    package var caseReproduces: Bool?

    package init(seed: UInt64, failures: [String], stats: SimStats, fingerprint: UInt64, trace: [String]) {
        self.seed = seed
        self.failures = failures
        self.stats = stats
        self.fingerprint = fingerprint
        self.trace = trace
    }

    package var passed: Bool { failures.isEmpty }

    package var description: String {
        if passed {
            return "seed \(seed): passed (\(stats["action: edit"] + stats["action: rest"]) writes, "
                + "\(stats["action: folder"] + stats["action: link"]) syncs, \(stats["crash"]) crashes, \(stats["restore"]) restores)"
        }
        var out = "seed \(seed) FAILED:\n" + failures.map { "  - \($0)" }.joined(separator: "\n")
        if let casePath {
            out += "\n  case written to \(casePath)"
            if let r = caseReproduces { out += " (replaying it \(r ? "reproduces the failure" : "passes: the failure is not in the files alone"))" }
        }
        out += "\n  rerun: scripts/simulate.sh 1 \(seed)"
        out += "\n  last steps:\n" + trace.suffix(12).map { "    \($0)" }.joined(separator: "\n")
        return out
    }
}
