@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// The actions a step may take: writes, syncs, faults and restores.
extension SimRun {
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
                body: body.map { Array($0.utf8) }, timeout: nil, limit: 1 << 20)
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
        case "torn": try crashWritingCommit(r)
        case "seal": try crashSealing(r)
        case "leftovers": crashLeavingTemporaries(r)
        default: note("\(r.name) crashes")
        }
        // The simulator's own edits to the store's files are not what the store synced.
        if kind != "power" && kind != "plain" { durability?.rebase(r.path) }
        stats.note("crash")
        r.close()
        try r.open()
    }

    /// The commit in flight reaches the disk only in part, and is never acknowledged.
    private func crashWritingCommit(_ r: SimReplica) throws {
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
    }

    /// The store seals, and the crash leaves the tail or merged segments as they were before.
    private func crashSealing(_ r: SimReplica) throws {
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
    }

    /// Temporary files are left in the store, its log folder and its namespace of a shared folder.
    private func crashLeavingTemporaries(_ r: SimReplica) {
        let junk = SimFiles.read(r.tailPath).map { Array($0.prefix(rng.int(0...$0.count))) } ?? []
        SimFiles.write(SimFiles.join(r.ownLogDirectory, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), junk)
        SimFiles.write(SimFiles.join(r.path, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), rng.bytes(rng.int(0...64)))
        if let f = folders.first(where: { $0.contains(r.index) }) {
            let ns = SimFiles.join(f.view(of: r.index), "tasklog-" + r.id.hex)
            SimFiles.write(SimFiles.join(ns, ".tmp-\(rng.int(1...99_999))-\(rng.int(0...999_999))"), junk)
        }
        note("\(r.name) crashes leaving temporary files")
        stats.note("crash: temporaries left")
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
}
