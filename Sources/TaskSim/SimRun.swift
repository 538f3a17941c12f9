@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// One run of a ``Simulation``: the replicas, folders and links, the step loop, healing and
/// the checks. Everything random comes from `rng`, seeded from the run's seed.
final class SimRun {
    /// Runs started in this process.
    static let runs = Atomic<Int>(0)

    let config: Simulation
    var rng: SimRandom
    let dir: String
    var trueTime: UInt64
    var replicas: [SimReplica] = []
    var folders: [SimFolder] = []
    var links: [(client: Int, server: Int)] = []
    var acknowledged: [SimChecks.Acknowledged] = []
    /// Forks the syncs reported settled.
    var resolvedForks: [ResolvedFork] = []
    /// How many times a restored replica may still write before syncing (forking its log).
    var forkBudget = 1
    /// Replicas whose log forked in this run: whether their acknowledged commits survive a
    /// restore is judged by content, since the other branch reuses their sequence numbers.
    var forkedOwners = Set<ReplicaID>()
    /// The folder that joins every replica while healing.
    var healFolder: SimFolder?
    var stats = SimStats()
    /// What each replica's store has fsynced, for power losses.
    var durability: SimDurability?
    var failures: [String] = []
    var trace: [String] = []
    var step = 0

    init(_ config: Simulation) {
        self.config = config
        rng = SimRandom(seed: config.seed)
        // Runs of one seed may overlap in a process (tests run in parallel): each gets its own folder.
        dir = SimFiles.join(config.workDirectory, "run-\(config.seed)-\(SimRun.runs.add(1, ordering: .relaxed).newValue)")
        trueTime = 1_767_225_600_000  // 2026-01-01
    }

    var faults: FaultSet { config.faults }

    func fail(_ what: String) {
        failures.append(what)
        log("FAILED: \(what)")
    }

    func note(_ what: String) { log("step \(step): \(what)") }

    /// The trace is also written as it goes to `trace.txt` in the run's folder, which stays
    /// behind if a trap ends the process in the middle of a run.
    func log(_ line: String) {
        trace.append(line)
        SimFiles.append(SimFiles.join(dir, "trace.txt"), Array((line + "\n").utf8))
    }

    // MARK: Running

    func run() -> SimulationResult {
        do {
            try setUp()
            for s in 0..<config.steps where failures.isEmpty {
                step = s
                try act()
            }
        } catch {
            fail("step \(step): unexpected error: \(error)")
        }
        if failures.isEmpty {
            step = config.steps
            do {
                try heal()
            } catch {
                fail("heal: unexpected error: \(error)")
            }
        }
        var fingerprint: UInt64 = 0
        if failures.isEmpty {
            if let s = try? replicas[0].store.state() { fingerprint = Self.fnv1a(SimChecks.dump(s)) }
            failures += SimChecks.run(replicas.map { ($0.name, $0.store) }, acknowledged: acknowledged, forks: resolvedForks)
        }
        var result = SimulationResult(seed: config.seed, failures: failures, stats: stats, fingerprint: fingerprint, trace: trace)
        if !failures.isEmpty, let cases = config.casesDirectory {
            let path = SimFiles.join(cases, "seed-\(config.seed)")
            SimCase.write(self, to: path)
            result.casePath = path
            result.caseReproduces = !SimCase.replay(at: path, workDirectory: SimFiles.join(dir, "replay")).isEmpty
        }
        for r in replicas { r.close() }
        durability?.stop()
        if !config.keepFiles { SimFiles.removeTree(dir) }
        return result
    }

    func setUp() throws {
        SimFiles.removeTree(dir)
        SimFiles.makeDirectories(dir)
        trueTime += UInt64(rng.int(0..<86_400_000))
        let n = max(1, config.replicas)
        if faults.contains(.powerLoss) {
            let d = SimDurability(roots: (0..<n).map { SimFiles.join(dir, "replica-\($0)") })
            d.start()
            durability = d
        }
        for i in 0..<n {
            let clock = SimClock(trueTime: trueTime)
            if faults.contains(.clockSkew) { clock.skew = rng.pick([0, 0, 0, Int64(rng.int(-2_000...2_000)), Int64(rng.int(-3_600_000...3_600_000))]) }
            var options = TaskStore.Options()
            options.durable = true
            options.lockLease = .zero
            options.wallClock = clock.wallClock
            options.newReplicaID = ReplicaID.random(using: &rng)
            // Half the replicas seal as a long-running process does, with the background seal's
            // work run on the simulator's thread (every run of a seed does the same). Chosen by
            // the id, so the random stream, and what each seed explores, stays as it was.
            options.sealsInBackground = options.newReplicaID!.bytes[15] & 1 == 1
            options.maintenanceOnCallingThread = true
            options.sealThreshold = rng.pick([256, 1024, 8192, 1 << 20])
            options.mergeTarget = rng.pick([1024, 16384, 4 << 20])
            options.snapshotAfterOperations = rng.pick([4, 32, 2048])
            let r = SimReplica(index: i, id: options.newReplicaID!, path: SimFiles.join(dir, "replica-\(i)"), clock: clock, options: options)
            try r.open()
            replicas.append(r)
        }
        // Topology: one or two shared folders over random members, random HTTP links, and
        // every replica connected to something.
        if n > 1 {
            for f in 0..<rng.int(1...2) {
                var members = Array(0..<n)
                members.shuffle(using: &rng)
                let chosen = members.prefix(rng.int(2...n)).sorted()
                folders.append(SimFolder(
                    name: "folder-\(f)", root: SimFiles.join(dir, "folders/folder-\(f)"),
                    members: chosen.map { ($0, "tasklog-" + replicas[$0].id.hex) }))
            }
            for a in 0..<n {
                for b in (a + 1)..<n where rng.chance(0.4) {
                    links.append(rng.chance(0.5) ? (a, b) : (b, a))
                }
            }
            for r in 0..<n where !folders.contains(where: { $0.contains(r) }) && !links.contains(where: { $0.client == r || $0.server == r }) {
                let other = (r + rng.int(1..<n)) % n
                links.append(rng.chance(0.5) ? (r, other) : (other, r))
            }
        }
        log("replicas: " + replicas.map { "\($0.name)=\($0.id.hex) skew \($0.clock.skew) ms" }.joined(separator: ", "))
        log("folders: " + folders.map { "\($0.name) \($0.members.map(\.replica))" }.joined(separator: ", "))
        log("links (client→server): " + links.map { "\($0.client)→\($0.server)" }.joined(separator: ", "))
    }

    func act() throws {
        followIdentities()
        trueTime += rng.pick([0, 0, 0, 1, 2, 7, 50, 1_000, 60_000])
        for r in replicas { r.clock.advance(to: trueTime) }
        let r = replicas[rng.int(0..<replicas.count)]
        let myFolders = folders.filter { $0.contains(r.index) }
        let myLinks = links.filter { $0.client == r.index }
        let restLinks = try myLinks.filter { try replicas[$0.server].mayWrite() }
        var action = rng.weighted([
            ("edit", 40), ("concurrent", replicas.count > 1 ? 5 : 0), ("rest", restLinks.isEmpty ? 0 : 5),
            ("folder", myFolders.isEmpty ? 0 : 14), ("link", myLinks.isEmpty ? 0 : 12), ("client", folders.isEmpty ? 0 : 10),
            ("crash", faults.contains(.crashes) ? 4 : 0), ("backup", faults.contains(.backups) ? 2 : 0),
            ("restore", faults.contains(.backups) && !r.backups.isEmpty ? 2 : 0),
            ("clock", faults.isDisjoint(with: .clocks) ? 0 : 3), ("compact", 2), ("process", 3),
        ])
        if action == "edit" || action == "concurrent", try !r.mayWrite(), faults.contains(.backups), forkBudget > 0, rng.chance(0.5) {
            // A restored replica writes before it syncs: its log forks from the copies elsewhere.
            forkBudget -= 1
            r.catchUpTarget = 0
            for b in r.backups { SimFiles.removeTree(b.path) }
            r.backups = []
            forkedOwners.insert(r.id)
            note("\(r.name) writes before it syncs: its log forks from the copies of it elsewhere")
            stats.note("fork: a restored replica writes before syncing")
        }
        if action == "edit" || action == "concurrent", try !r.mayWrite() {
            // A restored replica syncs before it writes again.
            action = myFolders.isEmpty && myLinks.isEmpty ? "wait" : myFolders.isEmpty || (!myLinks.isEmpty && rng.chance(0.5)) ? "link" : "folder"
        }
        stats.note("action: \(action)")
        switch action {
        case "edit": try edit(r)
        case "concurrent": try concurrentEdit(r)
        case "rest": try rest(r, server: replicas[rng.pick(restLinks).server])
        case "folder": try folderSync(r, rng.pick(myFolders), faults: faults)
        case "link": try linkSync(r, server: replicas[rng.pick(myLinks).server], faults: faults)
        case "client":
            let f = rng.pick(folders)
            let m = rng.pick(f.members).replica
            f.deliver(to: m, faults, &rng, &stats)
            note("sync client delivers \(f.name) to replica-\(m)")
        case "crash": try crash(r)
        case "backup": try backup(r)
        case "restore": try restore(r)
        case "clock": clockFault(r)
        case "compact":
            try r.store.compact()
            _ = try r.store.verify()
            note("\(r.name) compacts")
        case "process": try process(r)
        default: note("\(r.name) waits (restored, not connected)")
        }
    }

    // MARK: Healing

    /// Faults end: every folder delivers everything, and the replicas sync through their
    /// folders, their links and one more clean folder that joins them all, until a whole
    /// round moves nothing.
    func heal() throws {
        for f in folders {
            for m in f.members { f.upload(from: m.replica) }
            for m in f.members { f.heal(m.replica) }
        }
        let clean = SimFolder(
            name: "heal", root: SimFiles.join(dir, "folders/heal"),
            members: replicas.map { ($0.index, "tasklog-" + $0.id.hex) })
        healFolder = clean
        let maxRounds = 6 + 2 * replicas.count
        for round in 1...maxRounds {
            var moved: UInt64 = 0
            for r in replicas {
                for f in folders where f.contains(r.index) { moved += try folderSync(r, f, faults: .none) }
                for l in links where l.client == r.index { moved += try linkSync(r, server: replicas[l.server], faults: .none) }
                moved += try folderSync(r, clean, faults: .none)
            }
            note("heal round \(round): \(moved) operations moved")
            if !failures.isEmpty { return }
            if moved == 0 {
                stats.note("heal rounds", round)
                return
            }
        }
        fail("heal: the replicas still exchanged operations after \(maxRounds) rounds")
    }

    /// FNV-1a of a string: a fingerprint that is the same in every process.
    static func fnv1a(_ s: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return h
    }
}
