import CRDTCore
import TaskModel
import TaskStore
import TaskSync
import TaskSyncHTTP

/// The one thing the simulator's restored replicas never do: write before syncing. A store
/// restored from an old backup that writes at once reuses sequence numbers its lost copy
/// already published, a fork. TaskLog detects and reports forks (it does not resolve them):
/// this scenario checks that a sync after the fork reports it, with a skip note containing
/// "fork", and that neither side loses or mixes what it has.
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
            return o
        }
        let (aPath, bPath, shared) = (SimFiles.join(dir, "a"), SimFiles.join(dir, "b"), SimFiles.join(dir, "shared"))
        SimFiles.makeDirectories(shared)
        var a = try TaskStore.open(at: aPath, options: options())
        let b = try TaskStore.open(at: bPath, options: options())
        var failures: [String] = []
        /// One exchange between the two stores; returns the skip notes.
        func exchange() throws -> [(path: String, reason: String)] {
            switch transport {
            case .folder, .folderAligned:
                return try FolderSync(store: a, folder: shared).sync().skipped + FolderSync(store: b, folder: shared).sync().skipped
            case .http:
                let link = SimLink(service: HTTPService(store: a, token: "t"), faults: .none, rng: SimRandom(seed: seed))
                return try HTTPSync(store: b, peer: "sim://a", token: "t", transport: link).sync().report.skipped
            }
        }

        for _ in 0..<rng.int(1...3) { try a.add(NewTask(title: "before \(rng.int(0...99))"), id: TaskID.random(using: &rng)) }
        _ = try exchange()
        let backup = SimFiles.join(dir, "backup")
        SimFiles.copyTree(aPath, to: backup)
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

        let skipped = try exchange()
        if !skipped.contains(where: { $0.reason.contains("fork") }) {
            failures.append("\(transport) sync did not report the fork (notes: \(skipped.map(\.reason)))")
        }
        // Each side keeps its own branch: nothing acknowledged is lost or replaced.
        let (aAfter, bAfter) = (try a.state(), try b.state())
        if aAfter.version[replica] != aBefore.version[replica] || aBefore.records.keys.contains(where: { aAfter.records[$0] == nil }) {
            failures.append("the restored store lost or replaced its own branch")
        }
        if bAfter.version[replica] != bBefore.version[replica] || bBefore.records.keys.contains(where: { bAfter.records[$0] == nil }) {
            failures.append("the other store lost or replaced the first branch")
        }
        return failures
    }
}
