import CRDTCore
import TaskModel
@_spi(Engine) import TaskStore
import TaskSync
import TaskSyncHTTP

/// A store restored from an old backup that writes at once reuses sequence numbers its lost
/// copy already published: a fork. This scenario checks that syncs after the fork report it
/// as resolved, that both stores then hold the same state, and that no task either branch
/// added is lost.
public struct ForkScenario: Sendable {
    /// How the forked replica meets the other one after the fork.
    public enum Transport: String, Sendable, CaseIterable {
        /// A shared folder, where the lost branch was published in one file that the new
        /// branch overlaps.
        case folder
        /// A shared folder, where the lost branch was published one commit per file, and the
        /// new branch ends exactly where one of those files begins (nothing overlaps).
        case folderAligned
        /// An HTTP exchange.
        case http
    }

    public var seed: UInt64
    public var transport: Transport
    public var workDirectory: String

    public init(seed: UInt64, transport: Transport, workDirectory: String) {
        self.seed = seed
        self.transport = transport
        self.workDirectory = workDirectory
    }

    /// - Returns: what went wrong (empty: the fork was reported and nothing was lost or mixed).
    public func run() -> [String] {
        do {
            return try scenario()
        } catch {
            return ["unexpected error: \(error)"]
        }
    }

    private func scenario() throws -> [String] {
        var rng = SimRandom(seed: seed)
        let dir = SimFiles.join(workDirectory, "fork-\(transport)-\(seed)")
        SimFiles.removeTree(dir)
        defer { SimFiles.removeTree(dir) }
        let clock = SimClock(trueTime: 1_767_225_600_000)
        func options() -> TaskStore.Options {
            var o = TaskStore.Options()
            o.wallClock = clock.wallClock
            o.newReplicaID = ReplicaID.random(using: &rng)
            o.sealsInBackground = false
            o.lockLease = .zero
            return o
        }
        let (aPath, bPath, shared) = (SimFiles.join(dir, "a"), SimFiles.join(dir, "b"), SimFiles.join(dir, "shared"))
        SimFiles.makeDirectories(shared)
        var a = try TaskStore.open(at: aPath, options: options())
        let b = try TaskStore.open(at: bPath, options: options())
        var failures: [String] = []
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

        for _ in 0..<rng.int(1...3) { try a.add(NewTask(title: "before \(rng.int(0...99))"), id: TaskID.random(using: &rng)) }
        _ = try exchange()
        let backup = SimFiles.join(dir, "backup")
        SimFiles.copyTree(aPath, to: backup)
        let sharedPrefix = try a.version[a.replica]
        // The original goes on writing and publishes; sometimes the restored device's clock
        // will read earlier than these writes (it is behind), sometimes later.
        let restoredClockBehind = rng.chance(0.5)
        if restoredClockBehind { clock.advance(to: 1_767_225_600_000 + 20_000) }
        for _ in 0..<rng.int(2...3) {
            try a.add(NewTask(title: "lost branch \(rng.int(0...99))"), id: TaskID.random(using: &rng))
            if transport == .folderAligned { _ = try exchange() }
        }
        _ = try exchange()
        let bBefore = try b.state()
        // The device is restored from the backup and writes before syncing: a fork.
        clock.advance(to: 1_767_225_600_000 + UInt64(rng.int(1...10_000)))
        let replica = a.replica
        a = try { () throws -> TaskStore in
            SimFiles.removeTree(aPath)
            SimFiles.copyTree(backup, to: aPath)
            var o = TaskStore.Options()
            o.wallClock = clock.wallClock
            return try TaskStore.open(at: aPath, options: o)
        }()
        guard a.replica == replica else { return ["the restored store has another replica id"] }
        try a.add(NewTask(title: "new branch"), id: TaskID.random(using: &rng))
        let aBefore = try a.state()

        var forks = try exchange()
        // A folder needs a second round for the side that synced first to see the other's files.
        forks += try exchange()
        if forks.isEmpty {
            failures.append("\(transport) sync did not report the fork")
        }
        let (aAfter, bAfter) = (try a.state(), try b.state())
        if aAfter.records != bAfter.records || aAfter.version != bAfter.version {
            failures.append("after the fork the stores differ: \(aAfter.version) vs \(bAfter.version)")
        }
        // Nothing acknowledged on either branch is lost.
        for (name, before) in [("restored", aBefore), ("other", bBefore)] {
            for id in before.records.ids where aAfter.records[id] == nil || bAfter.records[id] == nil {
                failures.append("task \(id) of the \(name) store's branch is lost")
            }
        }
        let expected = bBefore.version.operationCount + aBefore.version[replica] - sharedPrefix
        // Aligned files can append the start of the losing branch's continuation to the winner
        // as well (Spec/sync-folder.md, "Forks", limits): operations are then held twice, never lost.
        if transport == .folderAligned ? aAfter.version.operationCount < expected : aAfter.version.operationCount != expected {
            failures.append("\(aAfter.version.operationCount) operations after the fork, expected \(expected)")
        }
        return failures
    }
}
