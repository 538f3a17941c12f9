import CRDTCore
import Synchronization
import TaskModel
import TaskStore
import TaskSync
import TaskSyncHTTP

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

    // MARK: Actions

    /// Records forks a sync settled, and follows replicas whose store moved to a new id.
    func noteForks(_ forks: [ResolvedFork], _ r: SimReplica) {
        for f in forks where !resolvedForks.contains(where: { $0.replica == f.replica && $0.seq == f.seq }) {
            resolvedForks.append(f)
            note("\(r.name): \(f)")
            stats.note("fork resolved")
        }
        followIdentities()
    }

    /// A store whose own branch lost a fork goes on under the moved id: so does its replica here.
    func followIdentities() {
        for r in replicas {
            _ = try? r.store.catchUp()  // notices a move made through another store object
            _ = try? r.second?.catchUp()
        }
        for r in replicas where r.store.replica != r.id {
            note("\(r.name) now writes as \(r.store.replica.hex) (was \(r.id.hex))")
            r.id = r.store.replica
            r.catchUpTarget = 0
            for b in r.backups { SimFiles.removeTree(b.path) }
            r.backups = []
            for f in folders + [healFolder].compactMap({ $0 }) where f.contains(r.index) { f.adopt("tasklog-" + r.id.hex, for: r.index) }
        }
    }

    func record(_ r: SimReplica, _ store: TaskStore, after before: UInt64) throws {
        let now = try store.version[r.id]
        guard now > before else { return }
        for c in try store.commits(of: r.id, after: before) {
            acknowledged.append(SimChecks.Acknowledged(replica: r.id, commit: c))
        }
    }

    func edit(_ r: SimReplica) throws {
        guard try r.mayWrite() else { return fail("simulator bug: \(r.name) writes before it holds its own operations again") }
        let store = r.second.map { rng.chance(0.5) ? $0 : r.store! } ?? r.store!
        let before = try store.version[r.id]
        let outcome = try SimWorkload.perform(on: store, &rng)
        try record(r, store, after: before)
        note("\(r.name)\(store === r.second ? " (second process)" : "") \(outcome.action)")
        if let p = outcome.problem { fail("step \(step): \(r.name) \(outcome.action): \(p)") }
    }

    /// `r` and another replica write the same field of a task both know, at the same
    /// clock reading, neither having seen the other's write: their hybrid-clock times are
    /// often equal, and only the replica tie-break orders them.
    func concurrentEdit(_ r: SimReplica) throws {
        let others = try replicas.filter { try $0 !== r && $0.mayWrite() }
        guard !others.isEmpty else { return try edit(r) }
        let s = rng.pick(others)
        let shared = Set(try r.store.state().allTasks.map(\.id)).intersection(try s.store.state().allTasks.map(\.id)).sorted()
        guard !shared.isEmpty else { return try edit(r) }
        let id = rng.pick(shared)
        let field = rng.int(0...6)
        let reading = max(r.clock.now, s.clock.now) + 1
        for w in [r, s] {
            w.clock.pin(reading)
            let write = SimWorkload.write(field: field, &rng)
            let before = try w.store.version[w.id]
            try w.store.edit(id, [write])
            try record(w, w.store, after: before)
            note("\(w.name) writes \(write) to \(id) at clock \(reading)")
            guard let now = try w.store.task(id), SimWorkload.shows(now, write) || SimWorkload.holdsFarFutureWrite(now, in: w.store) else {
                return fail("step \(step): \(w.name) wrote \(write) to \(id): read-your-writes: it reads \(String(describing: try w.store.task(id)))")
            }
        }
        for w in [r, s] { w.clock.advance(to: trueTime) }
    }

    /// A REST write from `r` to its peer `server`: acknowledged when the answer arrives.
    func rest(_ r: SimReplica, server s: SimReplica) throws {
        let known = try r.store.state().allTasks.map(\.id).sorted()
        let id = !known.isEmpty && rng.chance(0.7) ? rng.pick(known).rawValue : "rest-\(rng.int(0...99_999))"
        let (method, body): (String, String?) = rng.weighted([
            (("PUT", "{\"title\":\"\(SimWorkload.title(&rng))\",\"priority\":\(rng.int(0...3)),\"tags\":[\"\(rng.pick(SimWorkload.tags))\"]}"), 4),
            (("PATCH", rng.chance(0.5) ? "{\"done\":\(rng.chance(0.5))}" : "{\"notes\":\"r\(rng.int(0...99))\"}"), 3),
            (("DELETE", nil), 1),
        ])
        let link = SimLink(service: s.service, faults: faults, rng: rng.fork())
        let before = try s.store.version[s.id]
        do {
            let reply = try link.send(
                method, "sim://\(s.name)/v1/tasks/\(id)", headers: ["Authorization": "Bearer \(SimReplica.token)", "Content-Type": "application/json"],
                body: body.map { Array($0.utf8) }, timeout: nil)
            if (200...299).contains(reply.status) { try record(s, s.store, after: before) }
            if reply.status >= 500 { fail("step \(step): \(s.name) answered \(method) \(id) with \(reply.status): \(String(decoding: reply.body, as: UTF8.self))") }
            note("\(r.name) \(method) \(id) on \(s.name): \(reply.status)")
        } catch {
            note("\(r.name) \(method) \(id) on \(s.name): \(error)")
        }
        stats.add(link.stats)
    }

    @discardableResult
    func folderSync(_ r: SimReplica, _ f: SimFolder, faults: FaultSet) throws -> UInt64 {
        var sync = FolderSync(store: r.second.map { rng.chance(0.3) ? $0 : r.store! } ?? r.store!, folder: f.view(of: r.index))
        sync.mergeThreshold = rng.pick([2, 4, 8])
        let report = try sync.sync()
        stats.note("folder: skipped file", report.skipped.count)
        for s in report.skipped where s.reason.contains("has two different operations") {
            fail("step \(step): \(r.name) syncing \(f.name) met a fork it could not resolve: \(s.path): \(s.reason)")
        }
        noteForks(report.forks, r)
        let changed = f.upload(from: r.index)
        note("\(r.name) syncs \(f.name): in \(report.operationsIn), out \(report.operationsOut), \(report.skipped.count) skipped")
        for s in report.skipped { note("  skipped \(s.path.split(separator: "/").suffix(2).joined(separator: "/")): \(s.reason.prefix(160))") }
        for m in f.members where m.replica != r.index {
            if faults.isDisjoint(with: .folders) {
                if changed { f.heal(m.replica) }
            } else if rng.chance(0.5) {
                f.deliver(to: m.replica, faults, &rng, &stats)
            }
        }
        return report.operationsIn + report.operationsOut
    }

    @discardableResult
    func linkSync(_ r: SimReplica, server s: SimReplica, faults: FaultSet) throws -> UInt64 {
        let link = SimLink(service: s.service, faults: faults, rng: rng.fork())
        let sync = HTTPSync(store: r.store, peer: "sim://\(s.name)", token: SimReplica.token, transport: link)
        defer { stats.add(link.stats) }
        do {
            let (report, _) = try sync.sync()
            for p in report.skipped where p.reason.contains("has two different operations") {
                fail("step \(step): \(r.name) syncing with \(s.name) met a fork it could not resolve: \(p.reason)")
            }
            noteForks(report.forks, r)
            note("\(r.name) syncs with \(s.name): in \(report.operationsIn), out \(report.operationsOut)")
            return report.operationsIn + report.operationsOut
        } catch {
            note("\(r.name) syncs with \(s.name): \(error)")
            if link.stats.counts.isEmpty || !Self.isExpected(error) {
                fail("step \(step): \(r.name) syncing with \(s.name) failed \(link.stats.counts.isEmpty ? "with no fault injected" : "unexpectedly"): \(error)")
            }
            return 0
        }
    }

    /// Errors a faulty link may cause: lost requests, cut bodies (unreadable bundles, or a
    /// request the peer cannot parse).
    static func isExpected(_ error: any Error) -> Bool {
        switch error {
        case HTTPClientError.refused, HTTPClientError.timedOut: return true
        case HTTPClientError.failed(_, let status, _): return status == 400
        case is SegmentFile.Invalid: return true
        default: return false
        }
    }

    func crash(_ r: SimReplica) throws {
        let kind = try rng.weighted([
            ("torn", r.mayWrite() ? 4 : 0), ("seal", 2), ("leftovers", 2), ("plain", 1), ("power", durability == nil ? 0 : 3),
        ])
        switch kind {
        case "power":
            r.close()
            let changed = durability!.powerLoss(r.path)
            note("\(r.name) loses power: \(changed) file(s) go back to what was last synced")
            stats.note("crash: power loss")
        case "torn":
            // The commit in flight reaches the disk only in part, and is never acknowledged.
            let before = SimFiles.size(r.tailPath) ?? 0
            let held = try r.store.version[r.id]
            let commit = try r.store.commit(NewTask(title: "torn \(rng.int(0...999))").operations(id: TaskID.random(using: &rng)))
            let after = SimFiles.size(r.tailPath) ?? 0
            if after > before {
                let cut = before + rng.int(0..<(after - before))
                SimFiles.truncate(r.tailPath, to: cut)
                note("\(r.name) crashes writing commit \(commit.firstSeq): \(cut - before) of \(after - before) bytes reached the disk")
                stats.note("crash: torn commit")
            } else {
                try record(r, r.store, after: held)  // it was sealed, so it completed: the crash came after
                note("\(r.name) crashes right after commit \(commit.firstSeq)")
            }
        case "seal":
            let dir = r.ownLogDirectory
            var old: [String: [UInt8]] = [:]
            for f in SimFiles.list(dir) { old[f] = SimFiles.read(SimFiles.join(dir, f)) }
            try r.store.seal()
            let now = Set(SimFiles.list(dir))
            let removed = old.keys.filter { !now.contains($0) }.sorted()
            if removed.isEmpty {
                if let tail = old["tail.tlog"], SimFiles.read(r.tailPath) != tail {
                    SimFiles.writeAtomically(r.tailPath, tail)
                    note("\(r.name) crashes sealing: the segment is written, the tail not yet restarted")
                    stats.note("crash: seal interrupted")
                } else {
                    note("\(r.name) crashes (its tail was empty)")
                }
            } else {
                for f in removed.suffix(rng.int(1...removed.count)) { SimFiles.write(SimFiles.join(dir, f), old[f]!) }
                note("\(r.name) crashes merging: some merged segments are not removed yet")
                stats.note("crash: merge interrupted")
            }
        case "leftovers":
            let junk = SimFiles.read(r.tailPath).map { Array($0.prefix(rng.int(0...$0.count))) } ?? []
            SimFiles.write(SimFiles.join(r.ownLogDirectory, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), junk)
            SimFiles.write(SimFiles.join(r.path, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), rng.bytes(rng.int(0...64)))
            if let f = folders.first(where: { $0.contains(r.index) }) {
                let ns = SimFiles.join(f.view(of: r.index), "tasklog-" + r.id.hex)
                SimFiles.write(SimFiles.join(ns, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), junk)
            }
            note("\(r.name) crashes leaving temporary files")
            stats.note("crash: temporaries left")
        default:
            note("\(r.name) crashes")
        }
        // The simulator's own edits to the store's files are not what the store synced.
        if kind != "power" && kind != "plain" { durability?.rebase(r.path) }
        stats.note("crash")
        r.close()
        try r.open()
    }

    func backup(_ r: SimReplica) throws {
        let path = SimFiles.join(dir, "backups/\(r.name)-step-\(step)")
        let version = try r.store.version
        SimFiles.copyTree(r.path, to: path)
        r.backups.append((path, version))
        note("\(r.name) is backed up (own operations up to \(version[r.id]))")
    }

    /// The store is replaced by an old backup, and syncs before it writes again.
    ///
    /// Operations the restore rolled back survive if a copy is left elsewhere (another
    /// store, a shared folder): each replica must get its own back before it writes again.
    /// Acknowledged commits whose every copy was rolled back are lost, which no system can
    /// prevent; they leave the bookkeeping, and so do backups still holding them (restoring
    /// one later would bring back a branch whose sequence numbers are reused: a fork, see
    /// ``ForkScenario``).
    func restore(_ r: SimReplica) throws {
        let b = rng.pick(r.backups)
        r.close()
        SimFiles.removeTree(r.path)
        SimFiles.copyTree(b.path, to: r.path)
        durability?.rebase(r.path)
        try r.open()
        var lost = 0
        var gated: [String] = []
        for owner in replicas {
            var surviving: UInt64 = 0
            for s in replicas { surviving = max(surviving, try s.store.version[owner.id]) }
            for f in folders { surviving = max(surviving, f.highestPublished(of: owner.id.hex)) }
            let held = try owner.store.version[owner.id]
            owner.catchUpTarget = surviving > held ? surviving : 0
            if owner.catchUpTarget > 0 { gated.append("\(owner.name) until it holds its own \(surviving)") }
            lost += acknowledged.filter { $0.replica == owner.id && $0.commit.endSeq - 1 > surviving }.count
            acknowledged.removeAll { $0.replica == owner.id && $0.commit.endSeq - 1 > surviving }
            for s in replicas {
                for old in s.backups where old.version[owner.id] > surviving { SimFiles.removeTree(old.path) }
                s.backups.removeAll { $0.version[owner.id] > surviving }
            }
        }
        if !forkedOwners.isEmpty {
            let copies = try heldCommits()
            let before = acknowledged.count
            let all = acknowledged
            acknowledged.removeAll { a in
                guard forkedOwners.contains(a.replica), !(copies[a.replica]?.contains(a.commit) ?? false) else { return false }
                // Or moved, whole, by a fork already settled somewhere.
                return !SimChecks.possibleForks(of: a, among: all).contains { f in
                    copies[f.movedTo]?.contains(ForkRule.rehome([a.commit], of: a.replica, from: f.seq, as: f.movedTo)[0]) ?? false
                }
            }
            lost += before - acknowledged.count
        }
        note("\(r.name) is restored from a backup holding \(b.version); \(lost) acknowledged commits had no copy left; "
            + (gated.isEmpty ? "no replica waits" : "waiting: " + gated.joined(separator: ", ")))
        stats.note("restore")
        stats.note("restore: acknowledged commits with no copy left", lost)
    }

    /// Every commit some store or folder file holds, by replica.
    func heldCommits() throws -> [ReplicaID: Set<Commit>] {
        var out: [ReplicaID: Set<Commit>] = [:]
        for s in replicas {
            for (replica, _) in try s.store.version.sortedEntries {
                out[replica, default: []].formUnion(try s.store.commits(of: replica, after: 0))
            }
        }
        for f in folders {
            var files = Array(f.cloud.values)
            for m in f.members {
                for ns in SimFiles.list(f.view(of: m.replica)) {
                    let dir = SimFiles.join(f.view(of: m.replica), ns)
                    for name in SimFiles.list(dir) { if let b = SimFiles.read(SimFiles.join(dir, name)) { files.append(b) } }
                }
            }
            for bytes in files {
                if let (replica, commits) = try? SegmentFile.decode(bytes) { out[replica, default: []].formUnion(commits) }
            }
        }
        return out
    }

    func clockFault(_ r: SimReplica) {
        let kind = rng.weighted([
            ("drift", faults.contains(.clockSkew) ? 3 : 0), ("back", faults.contains(.clockSkew) ? 2 : 0),
            ("future", faults.contains(.futureClock) && r.clock.skew < 100_000_000_000 ? 1 : 0),
            ("fixed", r.clock.skew != 0 ? 2 : 0),
        ])
        switch kind {
        case "drift": r.clock.skew += Int64(rng.int(-5_000...5_000))
        case "back": r.clock.skew -= Int64(rng.int(60_000...86_400_000))
        case "future": r.clock.skew += 10 * 365 * 86_400_000 + Int64(rng.int(0...1_000))
        default: r.clock.skew = 0
        }
        r.clock.advance(to: trueTime)
        note("\(r.name)'s clock: \(kind), now \(r.clock.skew) ms off")
        stats.note("clock: \(kind)")
    }

    func process(_ r: SimReplica) throws {
        switch rng.int(0...2) {
        case 0:
            r.close()
            try r.open()
            note("\(r.name) restarts")
        case 1:
            r.second = try TaskStore.open(at: r.path, options: r.options)
            note("\(r.name) opens a second process")
        default:
            r.second = nil
            note("\(r.name)'s second process exits")
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
