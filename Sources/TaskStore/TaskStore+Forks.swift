#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Where two branches of one replica's log part: the commits held here and the arriving ones,
/// both from the first sequence number at which they differ.
struct ForkPoint {
    var replica: ReplicaID
    var seq: UInt64
    var held: [Commit]
    var arriving: [Commit]
}

extension TaskStore {
    /// Compares arriving commits with those held for the same sequence numbers.
    /// - Returns: nil when they agree, or where the branches part.
    /// - Throws: ``StoreError/forkNeedsEarlierOperations(replica:seq:)`` when they differ from
    ///   their very first commit, which is not at sequence number 1: where the branches part
    ///   is then unknown.
    /// - Parameter lastHeld: set to the last held commit read on the way, if any were read.
    ///   When it holds the commit ending at `have` on the way in and that is the only one of
    ///   `commits` the store holds, it is compared with that, and nothing is read.
    func findFork(_ commits: [Commit], of origin: ReplicaID, holding have: UInt64, lastHeld: inout Commit?) throws(StoreError) -> ForkPoint? {
        guard let first = commits.first, first.firstSeq <= have else { return nil }
        if let known = lastHeld, known.endSeq == have + 1, first == known, commits.count == 1 || commits[1].firstSeq > have {
            return nil
        }
        let held = try LogReader(layout: layout).commits(of: origin, after: first.firstSeq - 1).commits
        lastHeld = held.last
        var index: [UInt64: Int] = [:]
        for (i, c) in held.enumerated() { index[c.firstSeq] = i }
        for (i, arriving) in commits.enumerated() where arriving.firstSeq <= have {
            if let j = index[arriving.firstSeq], held[j] == arriving { continue }
            guard i > 0 || arriving.firstSeq == 1 else {
                throw .forkNeedsEarlierOperations(replica: origin, seq: arriving.firstSeq)
            }
            // The commit before agrees, so the held log has a commit starting here too.
            guard let j = index[arriving.firstSeq] else {
                throw .fork(replica: origin.hex, seq: arriving.firstSeq, detail: "the commits are cut at different sequence numbers")
            }
            return ForkPoint(replica: origin, seq: arriving.firstSeq, held: Array(held[j...]), arriving: Array(commits[i...]))
        }
        return nil
    }

    /// Settles a fork by ``ForkRule``: the losing branch moves to its derived replica id
    /// (written first, so nothing is lost if this is interrupted), then, if the held branch
    /// lost, the replica's log is rewritten to the winning branch and the state rebuilt.
    func resolve(_ fork: ForkPoint, _ inner: inout Inner) throws(StoreError) -> Integration {
        inner.lastIntegrated = [:]
        let origin = fork.replica
        let ownBranch = origin == inner.writer.replica
        try checkOrder(fork.arriving, of: origin)
        if fork.seq > 1, let before = try LogReader(layout: layout).commit(of: origin, endingAt: fork.seq - 1),
            fork.arriving[0].time <= before.time
        {
            throw .invalidArgument("operations of \(origin) from \(fork.seq) are not later than those held; not imported")
        }
        let keepHeld = ForkRule.keeps(fork.held[0], over: fork.arriving[0])
        let losing = keepHeld ? fork.arriving : fork.held
        let moved = ForkRule.movedReplica(of: origin, at: fork.seq, losingCommit: losing[0])
        let rehomed = ForkRule.rehome(losing, of: origin, from: fork.seq, as: moved)
        let resolved = ResolvedFork(
            replica: origin, seq: fork.seq, keptHeld: keepHeld, movedTo: moved,
            movedOperations: rehomed.reduce(0) { $0 + UInt64($1.operations.count) })
        let latest = max(fork.held.last!.time, fork.arriving.last!.time)
        try recordFork(origin, at: fork.seq, movedTo: moved)

        // 1. The losing branch under its new id (a no-op if this store already holds it).
        let fresh = try writeMovedBranch(rehomed, of: fork, as: moved, inner)
        if keepHeld {
            try observeImported(latest, of: origin, &inner)
            var added: UInt64 = 0
            for c in fresh where inner.state!.apply(c, from: moved) {
                added += UInt64(c.operations.count)
                notify(inner.observers, StoreChange(replica: moved, commit: c, isLocal: false))
            }
            return Integration(operations: added, fork: resolved)
        }
        // 2. and 3. The held branch lost.
        try adoptWinningBranch(
            fork, movingOwnBranchTo: ownBranch ? moved : nil, continuingAt: rehomed.last!.endSeq, latest: latest, &inner)
        try observeImported(latest, of: origin, &inner)
        // 4. The state, from the logs.
        let added = try rebuildState(after: fork, identityMoved: ownBranch, &inner)
        return Integration(operations: added, fork: resolved)
    }

    /// Writes the commits of `rehomed` that the moved replica lacks here, in one sealed segment.
    /// - Returns: those commits.
    /// - Throws: when they differ from what the moved replica holds, or do not follow it.
    private func writeMovedBranch(_ rehomed: [Commit], of fork: ForkPoint, as moved: ReplicaID, _ inner: borrowing Inner) throws(StoreError) -> [Commit] {
        let movedHave = inner.state!.version[moved]
        var ignored: Commit?
        if try findFork(rehomed, of: moved, holding: movedHave, lastHeld: &ignored) != nil {
            throw .fork(replica: fork.replica.hex, seq: fork.seq, detail: "the branch that moves to \(moved.hex) differs from the one held there: a fork inside a moved branch, not resolved")
        }
        let fresh = rehomed.filter { $0.endSeq - 1 > movedHave }
        if let first = fresh.first {
            guard first.firstSeq == movedHave + 1 else {
                throw .invalidArgument("operations of \(moved) from \(first.firstSeq) do not follow the \(movedHave) this store holds")
            }
            try Posix.makeDirectories(layout.logDirectory(moved))
            try Posix.writeAtomically(
                layout.sealedFile(moved, first: first.firstSeq, last: fresh.last!.endSeq - 1), SegmentCodec.sealed(moved, fresh))
        }
        return fresh
    }

    /// The replica's log becomes the shared prefix and the arriving branch, in one segment.
    /// The journal goes first, so a process that reloads meanwhile waits for the rewrite to
    /// finish (see finishInterruptedRewrite).
    /// - Parameter moved: the moved id when the losing branch is this store's own: the store
    ///   then goes on as that id, its tail continuing at `nextSeq`.
    private func adoptWinningBranch(
        _ fork: ForkPoint, movingOwnBranchTo moved: ReplicaID?, continuingAt nextSeq: UInt64, latest: Timestamp,
        _ inner: inout Inner
    ) throws(StoreError) {
        let origin = fork.replica
        let prefix = fork.seq > 1 ? try LogReader(layout: layout).commits(of: origin, after: 0, through: fork.seq - 1).commits : []
        guard prefix.last.map({ $0.endSeq == fork.seq }) ?? true else {
            throw .fork(replica: origin.hex, seq: fork.seq, detail: "the operations before the fork are not all readable here")
        }
        let winning = prefix + fork.arriving
        let keep = SealedName(first: 1, last: winning.last!.endSeq - 1)
        try Posix.writeAtomically(layout.rewriteJournal, Array("replica \(origin.hex)\nkeep \(keep.fileName)\n".utf8))
        if let moved {
            try Posix.makeDirectories(layout.logDirectory(moved))
            try Posix.writeAtomically(
                layout.tailFile(moved), SegmentCodec.tail(moved, firstSeq: nextSeq, clock: max(latest, inner.writer.latestTime)))
            try Posix.writeAtomically(layout.identityFile, StoreIdentity.encode(moved))
            switchIdentity(to: moved, &inner)
            _ = try inner.writer.synchronise()
        }
        try rewriteLog(of: origin, as: winning, keeping: keep)
    }

    /// Rebuilds the state from the logs after `fork`'s held branch lost; other processes
    /// notice the new identity file and reload.
    /// - Parameter identityMoved: whether ``adoptWinningBranch`` moved this store to a new id
    ///   (and so rewrote the identity file already).
    /// - Returns: how many operations the state gained.
    private func rebuildState(after fork: ForkPoint, identityMoved: Bool, _ inner: inout Inner) throws(StoreError) -> UInt64 {
        let before = inner.state!.version.operationCount
        // Rewritten once per resolution (a store whose own branch lost did so already): the new
        // file's inode then differs from the one other processes saw.
        if !identityMoved { try Posix.writeAtomically(layout.identityFile, StoreIdentity.encode(inner.writer.replica)) }
        inner.identityVersion = Posix.version(of: layout.identityFile)
        var state = TaskState()
        inner.tails = [:]
        inner.warnings += try LogReader(layout: layout).catchUp(&state, tails: &inner.tails).warnings
        inner.state = state
        try saveSnapshot(&inner)
        for c in fork.arriving { notify(inner.observers, StoreChange(replica: fork.replica, commit: c, isLocal: false)) }
        let after = state.version.operationCount
        return after > before ? after - before : 0
    }

    /// The forks of `replica` this store settled: where the branches part and where the
    /// losing branch moved (the `forks` file, one `fork <replica> <seq> <moved>` line each).
    func knownForks(of replica: ReplicaID) throws(StoreError) -> [(seq: UInt64, moved: ReplicaID)] {
        guard let bytes = try Posix.readFile(layout.forksFile) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 4, f[0] == "fork", ReplicaID(hex: f[1]) == replica, let seq = UInt64(f[2]), let moved = ReplicaID(hex: f[3])
            else { return nil }
            return (seq, moved)
        }
    }

    private func recordFork(_ replica: ReplicaID, at seq: UInt64, movedTo moved: ReplicaID) throws(StoreError) {
        let line = "fork \(replica.hex) \(seq) \(moved.hex)\n"
        let old = try Posix.readFile(layout.forksFile) ?? []
        guard !String(decoding: old, as: UTF8.self).contains(line) else { return }
        try Posix.writeAtomically(layout.forksFile, old + Array(line.utf8))
    }

    /// Commits of `origin` that disagree with its log here (or do not follow it) but belong to
    /// a branch that moved away in a fork settled earlier: they are integrated, renumbered,
    /// into the moved replica. Nil when no such branch takes them.
    func continueMovedBranch(_ commits: [Commit], of origin: ReplicaID, _ inner: inout Inner) throws(StoreError) -> Integration? {
        for (seq, moved) in try knownForks(of: origin) {
            let part = commits.filter { $0.firstSeq >= seq }
            guard !part.isEmpty else { continue }
            let rehomed = ForkRule.rehome(part, of: origin, from: seq, as: moved)
            let have = inner.state!.version[moved]
            var lastHeld: Commit?
            // It must agree with what the moved replica holds, and overlap it or follow it.
            let check = Result { () throws(StoreError) in try findFork(rehomed, of: moved, holding: have, lastHeld: &lastHeld) }
            guard case .success(nil) = check, rehomed[0].firstSeq <= have + 1
            else { continue }
            // Reported as the fork it belongs to: the sender holds the losing branch under the
            // old id and learns of it only if told (sync-folder.md, "Forks").
            let known = ResolvedFork(
                replica: origin, seq: seq, keptHeld: true, movedTo: moved,
                movedOperations: rehomed.reduce(0) { $0 + UInt64($1.operations.count) })
            let fresh = rehomed.filter { $0.endSeq - 1 > have }
            guard !fresh.isEmpty else { return Integration(operations: 0, fork: known) }
            var result = try append(fresh, of: moved, holding: have, lastHeld: lastHeld, segment: nil, &inner)
            result.fork = known
            return result
        }
        return nil
    }

    /// Replaces every file of `replica`'s log with `keep`, one sealed segment of `commits`
    /// (from sequence number 1), then removes the journal written before: across a crash,
    /// ``finishInterruptedRewrite(_:)`` removes the old files if the new one is in place.
    private func rewriteLog(of replica: ReplicaID, as commits: [Commit], keeping keep: SealedName) throws(StoreError) {
        try Posix.writeAtomically(layout.sealedFile(replica, first: keep.first, last: keep.last), SegmentCodec.sealed(replica, commits))
        try removeAllBut(keep.fileName, in: layout.logDirectory(replica))
        unlink(layout.rewriteJournal)
        try Posix.fsyncDirectory(layout.root)
    }

    private func removeAllBut(_ name: String, in dir: String) throws(StoreError) {
        for f in try Posix.list(dir) where f != name && !f.hasPrefix(".") {
            unlink(Posix.join(dir, f))
        }
        try Posix.fsyncDirectory(dir)
    }

    /// Completes a log rewrite that a crash interrupted (see ``rewriteLog(of:as:)``).
    func finishInterruptedRewrite(_ inner: inout Inner) throws(StoreError) {
        guard let bytes = try Posix.readFile(layout.rewriteJournal) else { return }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        try holdingLock(&inner) { (inner) throws(StoreError) in
            guard Posix.exists(layout.rewriteJournal) else { return }
            if lines.count == 2, lines[0].hasPrefix("replica "), lines[1].hasPrefix("keep "),
                let replica = ReplicaID(hex: lines[0].dropFirst("replica ".count))
            {
                let keep = String(lines[1].dropFirst("keep ".count))
                let dir = layout.logDirectory(replica)
                // Without the new segment the old files are still whole: the fork is settled
                // again on the next sync.
                if SealedName(fileName: keep) != nil, Posix.exists(Posix.join(dir, keep)) {
                    try removeAllBut(keep, in: dir)
                }
            }
            unlink(layout.rewriteJournal)
        }
    }

    /// Follows the identity file after a fork resolution in another process: the writer
    /// moves to the new id and the state is loaded afresh.
    func adoptIdentity(_ inner: inout Inner) throws(StoreError) {
        guard let bytes = try Posix.readFile(layout.identityFile) else { throw .storeNotFound(path: path) }
        let now = try StoreIdentity.decode(bytes, path: path)
        if now != inner.writer.replica { switchIdentity(to: now, &inner) }
        inner.lastIntegrated = [:]
        inner.state = nil
        inner.tails = [:]
    }

    private func switchIdentity(to replica: ReplicaID, _ inner: inout Inner) {
        inner.writer.closeFile()
        inner.writer = TailWriter(layout: layout, replica: replica, options: options)
        identity.withLock { $0 = replica }
    }

    /// The writer's view of the tail, following the identity file if another process moved
    /// this store to a new replica id (its old tail is then gone).
    func synchroniseFollowingIdentity(_ inner: inout Inner) throws(StoreError) -> [Commit] {
        do {
            return try inner.writer.synchronise()
        } catch {
            let now = Posix.version(of: layout.identityFile)
            guard now != inner.identityVersion else { throw error }
            try adoptIdentity(&inner)
            inner.identityVersion = now
            return try inner.writer.synchronise()
        }
    }

    /// Arriving commits must be contiguous and in increasing clock order.
    func checkOrder(_ commits: [Commit], of origin: ReplicaID) throws(StoreError) {
        for (a, b) in zip(commits, commits.dropFirst()) where b.firstSeq != a.endSeq {
            throw .invalidArgument("operations of \(origin) are not contiguous at \(a.endSeq)")
        }
        for (a, b) in zip(commits, commits.dropFirst()) where b.time <= a.time {
            throw .invalidArgument("operations of \(origin) go back in time at \(b.firstSeq); not imported")
        }
    }
}
