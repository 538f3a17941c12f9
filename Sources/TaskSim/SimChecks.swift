@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// The invariants checked after every run (and when a case folder is replayed), once the
/// replicas have exchanged everything:
///
/// - (a) every replica has the same state, and lists the same tasks;
/// - (b) every acknowledged commit is held by every replica, and its effect is there (an
///   add's task exists, a field write won or lost to a later write, a tag add is present or
///   was removed later, a removal's tags are gone);
/// - (c) replaying each replica's logs (the store's `replay()`, and `LogReplay` on its folder)
///   gives its live state;
/// - (d) after `compact()`, `verify()` passes and the state is unchanged.
package enum SimChecks {
    /// One acknowledged commit.
    package struct Acknowledged: Sendable {
        package var replica: ReplicaID
        package var commit: Commit
        package init(replica: ReplicaID, commit: Commit) {
            self.replica = replica
            self.commit = commit
        }
    }

    /// Runs the checks on stores that should have converged. Each failure names its check.
    /// - Parameter forks: forks settled during the run: an acknowledged commit of a branch
    ///   that moved is looked for under the moved id.
    package static func run(_ stores: [(name: String, store: TaskStore)], acknowledged: [Acknowledged], forks: [ResolvedFork] = []) -> [String] {
        var states: [TaskState] = []
        for (name, store) in stores {
            do {
                states.append(try store.state())
            } catch {
                return ["\(name): reading the state failed: \(error)"]
            }
        }
        let named = zip(stores, states).map { (name: $0.name, store: $0.store, state: $1) }
        return convergence(named)
            + lostWrites(named, acknowledged: acknowledged, forks: forks)
            + replays(named)
            + compactions(named)
    }

    /// A store with the state read from it before the checks.
    private typealias Checked = (name: String, store: TaskStore, state: TaskState)

    /// (a) Every store has the first one's state, and then lists the same tasks.
    private static func convergence(_ stores: [Checked]) -> [String] {
        var failures: [String] = []
        for s in stores.dropFirst() where s.state != stores[0].state {
            failures.append("(a) convergence: \(s.name) differs from \(stores[0].name): "
                + difference(stores[0].state, s.state))
        }
        guard failures.isEmpty else { return failures }
        do {
            let lists = try stores.map { try $0.store.tasks(TaskQuery(status: .all)) }
            for i in lists.indices.dropFirst() where lists[i] != lists[0] {
                failures.append("(a) convergence: \(stores[i].name) lists its tasks differently from \(stores[0].name) although the states are equal")
            }
        } catch {
            failures.append("(a) listing tasks failed: \(error)")
        }
        return failures
    }

    /// (b) No acknowledged write is lost: at most three reported per store, then a count.
    private static func lostWrites(_ stores: [Checked], acknowledged: [Acknowledged], forks: [ResolvedFork]) -> [String] {
        var failures: [String] = []
        for s in stores {
            var reported = 0
            for a in acknowledged {
                guard let problem = missing(a, in: s.state, forks: forks + possibleForks(of: a, among: acknowledged)) else { continue }
                reported += 1
                if reported <= 3 { failures.append("(b) acknowledged write lost: \(s.name) \(problem)") }
            }
            if reported > 3 { failures.append("(b) … and \(reported - 3) more acknowledged commits missing on \(s.name)") }
        }
        return failures
    }

    /// (c) Replaying each store's logs, by the store and by `LogReplay`, gives its live state.
    private static func replays(_ stores: [Checked]) -> [String] {
        var failures: [String] = []
        for (name, store, state) in stores {
            do {
                let replayed = try store.replay().state
                if replayed != state {
                    failures.append("(c) replay: \(name)'s logs replay to a different state than its live one: " + difference(state, replayed))
                }
                let logs = try LogReplay.load(from: store.path).state()
                if logs != state {
                    failures.append("(c) LogReplay: \(name)'s folder replays to a different state than its live one: " + difference(state, logs))
                }
            } catch {
                failures.append("(c) replay: \(name): \(error)")
            }
        }
        return failures
    }

    /// (d) After `compact()`, `verify()` passes and the state is unchanged.
    private static func compactions(_ stores: [Checked]) -> [String] {
        var failures: [String] = []
        for (name, store, state) in stores {
            do {
                try store.compact()
                _ = try store.verify()
                let after = try store.state()
                if after != state {
                    failures.append("(d) compact changed \(name)'s state: " + difference(state, after))
                }
            } catch {
                failures.append("(d) compact/verify: \(name): \(error)")
            }
        }
        return failures
    }

    /// The forks `a` may have been moved by, found without the syncs' reports (a sync that
    /// failed after settling a fork reports nothing): for each acknowledged commit of the same
    /// replica starting at or before `a`, the fork that would move the branch holding it.
    static func possibleForks(of a: Acknowledged, among acknowledged: [Acknowledged]) -> [ResolvedFork] {
        acknowledged.filter { $0.replica == a.replica && $0.commit.firstSeq <= a.commit.firstSeq }.map { other in
            ResolvedFork(
                replica: a.replica, seq: other.commit.firstSeq, keptHeld: false,
                movedTo: ForkRule.movedReplica(of: a.replica, at: other.commit.firstSeq, losingCommit: other.commit), movedOperations: 0)
        }
    }

    /// Why the state lacks the acknowledged commit or its effect, where it is now (nil: it is
    /// there): under its own replica, or moved by one of `forks` (perhaps several times).
    package static func missing(_ a: Acknowledged, in state: TaskState, forks: [ResolvedFork]) -> String? {
        guard let problem = missing(a, in: state) else { return nil }
        for f in forks where f.replica == a.replica && f.seq <= a.commit.firstSeq {
            let moved = ForkRule.rehome([a.commit], of: a.replica, from: f.seq, as: f.movedTo)[0]
            let remaining = forks.filter { !($0.replica == f.replica && $0.seq == f.seq) }
            if missing(Acknowledged(replica: f.movedTo, commit: moved), in: state, forks: remaining) == nil { return nil }
        }
        return problem
    }

    /// Why the state lacks the acknowledged commit or its effect (nil: it is there).
    package static func missing(_ a: Acknowledged, in state: TaskState) -> String? {
        let c = a.commit
        let what = "\(a.replica.hex):\(c.firstSeq)...\(c.endSeq - 1)"
        guard state.version[a.replica] >= c.endSeq - 1 else {
            return "lacks commit \(what) (holds \(a.replica.hex) up to \(state.version[a.replica]))"
        }
        let membership = state.membership
        for (i, op) in c.operations.enumerated() {
            let opID = OperationID(replica: a.replica, seq: c.firstSeq + UInt64(i))
            let stamp = Stamp(time: c.time, operation: opID)
            let record = op.task.flatMap { state.records[$0] }
            var ok = true
            switch op {
            case .add(let id):
                ok = (membership.dots(of: id)?.contains(opID) ?? false || membership.tombstones.contains(opID))
                    && record?.createdAt != nil
            case .remove(_, let observed):
                ok = observed.allSatisfy(membership.tombstones.contains)
            case .set(_, let w):
                guard let r = record else { ok = false; break }
                switch w {
                case .title(let v): ok = holds(r.title, v, stamp)
                case .notes(let v): ok = holds(r.notes, v, stamp)
                case .done(let v): ok = holds(r.done, v, stamp)
                case .priority(let v): ok = holds(r.priority, v, stamp)
                case .due(let v): ok = holds(r.due, v, stamp)
                case .list(let v): ok = holds(r.list, v, stamp)
                case .meta(let k, let v): ok = holds(r.meta[k], v, stamp)
                case .unknown: break
                }
            case .addTag(_, let tag):
                ok = record.map { $0.tags.dots(of: tag)?.contains(opID) ?? false || $0.tags.tombstones.contains(opID) } ?? false
            case .removeTag(_, _, let observed):
                ok = record.map { r in observed.allSatisfy(r.tags.tombstones.contains) } ?? false
            case .deviceName(let name):
                ok = holds(state.deviceNameRegisters[a.replica], DeviceName.normalised(name), stamp)
            case .unknown:
                break
            }
            if !ok { return "lacks the effect of operation \(opID) (\(op)) of commit \(what) at \(c.time)" }
        }
        return nil
    }

    /// A write at `stamp` of `value` is in effect: it won, or a later write replaced it.
    static func holds<V: Equatable>(_ register: LWWRegister<V>?, _ value: V, _ stamp: Stamp) -> Bool {
        guard let r = register else { return false }
        return r.stamp > stamp || (r.stamp == stamp && r.value == value)
    }

    /// The first few differences between two states, in words.
    package static func difference(_ a: TaskState, _ b: TaskState) -> String {
        var out: [String] = []
        if a.version != b.version { out.append("versions \(a.version) vs \(b.version)") }
        if a.latestTime != b.latestTime { out.append("latest times \(a.latestTime) vs \(b.latestTime)") }
        if a.membership != b.membership {
            let ids = Set(a.membership.elements).symmetricDifference(b.membership.elements).sorted()
            out.append("membership differs" + (ids.isEmpty ? " (tags or tombstones)" : " for \(ids.prefix(3))"))
        }
        let ids = Set(a.records.ids).union(b.records.ids).sorted()
        for id in ids where a.records[id] != b.records[id] {
            out.append("task \(id): \(describe(a.records[id])) vs \(describe(b.records[id]))")
            if out.count >= 4 { break }
        }
        return out.isEmpty ? "(no visible difference)" : out.joined(separator: "; ")
    }

    static func describe(_ r: TaskRecord?) -> String {
        guard let r else { return "absent" }
        func reg<V>(_ name: String, _ x: LWWRegister<V>?) -> String? { x.map { "\(name)=\($0.value)@\($0.stamp)" } }
        var parts = [reg("title", r.title), reg("notes", r.notes), reg("done", r.done), reg("priority", r.priority),
                     reg("due", r.due), reg("list", r.list)].compactMap { $0 }
        for k in r.meta.keys.sorted() { parts.append(reg("meta.\(k)", r.meta[k])!) }
        parts.append("tags=\(r.tags.dotsByElement.keys.sorted())")
        parts.append("created=\(r.createdAt.map { "\($0)" } ?? "nil") updated=\(r.updatedAt)")
        return "{" + parts.joined(separator: " ") + "}"
    }

    /// The whole state in words, one task per line (for case folders).
    package static func dump(_ s: TaskState) -> String {
        var out = "version \(s.version)\nlatest \(s.latestTime)\n"
        for id in s.records.ids.sorted() {
            out += "\(id) \(s.isLive(id) ? "live" : "deleted") \(describe(s.records[id]))\n"
        }
        return out
    }
}
