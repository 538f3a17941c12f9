@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// A store restored from an old backup that writes at once reuses sequence numbers its lost
/// copy already published: a fork. This scenario checks that syncs after the fork report it
/// as resolved, that both stores then hold the same state, and that no task either branch
/// added is lost.
package struct ForkScenario: Sendable {
    /// How the forked replica meets the other one after the fork.
    package enum Transport: String, Sendable, CaseIterable {
        /// A shared folder, where the lost branch was published in one file that the new
        /// branch overlaps.
        case folder
        /// A shared folder, where the lost branch was published one commit per file, and the
        /// new branch ends exactly where one of those files begins (nothing overlaps).
        case folderAligned
        /// An HTTP exchange.
        case http
    }

    package var seed: UInt64
    package var transport: Transport
    package var workDirectory: String

    package init(seed: UInt64, transport: Transport, workDirectory: String) {
        self.seed = seed
        self.transport = transport
        self.workDirectory = workDirectory
    }

    /// - Returns: what went wrong (empty: the fork was reported and nothing was lost or mixed).
    package func run() -> [String] {
        do {
            return try scenario()
        } catch {
            return ["unexpected error: \(error)"]
        }
    }

    private func scenario() throws -> [String] {
        let dir = SimFiles.join(workDirectory, "fork-\(transport)-\(seed)")
        SimFiles.removeTree(dir)
        defer { SimFiles.removeTree(dir) }
        let run = try ForkRun(self, directory: dir)
        let sharedPrefix = try run.writeAndBackUp()
        let bBefore = try run.publishLostBranch()
        let replica = run.a.replica
        try run.restoreFromBackup()
        guard run.a.replica == replica else { return ["the restored store has another replica id"] }
        try run.a.add(NewTask(title: "new branch"), id: TaskID.random(using: &run.rng))
        let aBefore = try run.a.state()

        var forks = try run.exchange()
        // A folder needs a second round for the side that synced first to see the other's files.
        forks += try run.exchange()
        var failures: [String] = []
        if forks.isEmpty {
            failures.append("\(transport) sync did not report the fork")
        }
        let (aAfter, bAfter) = (try run.a.state(), try run.b.state())
        failures += lossAndDivergence(before: (aBefore, bBefore), after: (aAfter, bAfter))
        let expected = bBefore.version.operationCount + aBefore.version[replica] - sharedPrefix
        // Aligned files can append the start of the losing branch's continuation to the winner
        // as well (Spec/sync-folder.md, "Forks", limits): operations are then held twice, never lost.
        if transport == .folderAligned ? aAfter.version.operationCount < expected : aAfter.version.operationCount != expected {
            failures.append("\(aAfter.version.operationCount) operations after the fork, expected \(expected)")
        }
        return failures
    }

    /// Whether the stores differ after the fork, and which tasks of either branch (the
    /// restored store's, then the other's) either store lacks.
    private func lossAndDivergence(before: (a: TaskState, b: TaskState), after: (a: TaskState, b: TaskState)) -> [String] {
        var failures: [String] = []
        if after.a.records != after.b.records || after.a.version != after.b.version {
            failures.append("after the fork the stores differ: \(after.a.version) vs \(after.b.version)")
        }
        // Nothing acknowledged on either branch is lost.
        for (name, state) in [("restored", before.a), ("other", before.b)] {
            for id in state.records.ids where after.a.records[id] == nil || after.b.records[id] == nil {
                failures.append("task \(id) of the \(name) store's branch is lost")
            }
        }
        return failures
    }
}

/// The two stores of one ``ForkScenario`` run, with their clock and shared folder: `a` is the
/// device restored from a backup, `b` the other one.
private final class ForkRun {
    static let start: UInt64 = 1_767_225_600_000

    let transport: ForkScenario.Transport
    let seed: UInt64
    var rng: SimRandom
    let clock = SimClock(trueTime: ForkRun.start)
    let aPath: String
    let shared: String
    let backup: String
    var a: TaskStore
    let b: TaskStore

    init(_ scenario: ForkScenario, directory dir: String) throws {
        (transport, seed) = (scenario.transport, scenario.seed)
        var rng = SimRandom(seed: seed)
        (aPath, shared, backup) = (SimFiles.join(dir, "a"), SimFiles.join(dir, "shared"), SimFiles.join(dir, "backup"))
        SimFiles.makeDirectories(shared)
        a = try TaskStore.open(at: aPath, options: Self.options(clock, &rng))
        b = try TaskStore.open(at: SimFiles.join(dir, "b"), options: Self.options(clock, &rng))
        self.rng = rng
    }

    private static func options(_ clock: SimClock, _ rng: inout SimRandom) -> TaskStore.Options {
        var o = TaskStore.Options()
        o.wallClock = clock.wallClock
        o.newReplicaID = ReplicaID.random(using: &rng)
        o.sealsInBackground = false
        o.lockLease = .zero
        return o
    }

    /// One exchange between the two stores; returns the forks they reported resolved.
    func exchange() throws -> [ResolvedFork] {
        switch transport {
        case .folder, .folderAligned:
            return try FolderSync(store: a, folder: shared).sync().forks + FolderSync(store: b, folder: shared).sync().forks
        case .http:
            let link = SimLink(service: HTTPService(store: a, token: "t"), faults: .none, rng: SimRandom(seed: seed))
            return try HTTPSync(store: b, peer: "sim://a", token: "t", transport: link).sync().report.forks
        }
    }

    /// `a` writes, both exchange, and `a` is backed up.
    /// - Returns: how many of its own operations `a` held when backed up.
    func writeAndBackUp() throws -> UInt64 {
        for _ in 0..<rng.int(1...3) { try a.add(NewTask(title: "before \(rng.int(0...99))"), id: TaskID.random(using: &rng)) }
        _ = try exchange()
        SimFiles.copyTree(aPath, to: backup)
        return try a.version[a.replica]
    }

    /// The original `a` goes on writing and publishes the branch its restore will lose;
    /// sometimes the restored device's clock will read earlier than these writes (it is
    /// behind), sometimes later.
    /// - Returns: the state of `b` once it holds that branch.
    func publishLostBranch() throws -> TaskState {
        let restoredClockBehind = rng.chance(0.5)
        if restoredClockBehind { clock.advance(to: Self.start + 20_000) }
        for _ in 0..<rng.int(2...3) {
            try a.add(NewTask(title: "lost branch \(rng.int(0...99))"), id: TaskID.random(using: &rng))
            if transport == .folderAligned { _ = try exchange() }
        }
        _ = try exchange()
        return try b.state()
    }

    /// The device `a` is restored from the backup (it writes before syncing: a fork).
    func restoreFromBackup() throws {
        clock.advance(to: Self.start + UInt64(rng.int(1...10_000)))
        SimFiles.removeTree(aPath)
        SimFiles.copyTree(backup, to: aPath)
        var o = TaskStore.Options()
        o.wallClock = clock.wallClock
        a = try TaskStore.open(at: aPath, options: o)
    }
}
