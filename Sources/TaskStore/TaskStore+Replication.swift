@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension TaskStore {
    /// Moves the tail's commits into a sealed segment (so they can be published as they are).
    @_spi(Engine) public func seal() throws(StoreError) {
        try inner.withLock { (inner) throws(StoreError) in
            try holdingLock(&inner) { (inner) throws(StoreError) in
                inner.warnings += try inner.writer.seal()
            }
        }
    }

    /// The commits of `replica` that this store holds after sequence number `seq`, in order.
    @_spi(Engine) public func commits(of replica: ReplicaID, after seq: UInt64) throws(StoreError) -> [Commit] {
        try LogReader(layout: layout).commits(of: replica, after: seq).commits
    }

    /// What to send a peer that holds `replica`'s operations up to `seq`: the commits after
    /// it, preceded by the commit ending at `seq`, which the peer compares with its own so
    /// that a fork is noticed even where the two branches do not otherwise overlap.
    package func commitsToSend(of replica: ReplicaID, after seq: UInt64) throws(StoreError) -> [Commit] {
        let reader = LogReader(layout: layout)
        var previous: Commit?
        let after = try reader.commits(of: replica, after: seq, previous: { previous = $0 }).commits
        if after.isEmpty, seq > 0, try version[replica] > seq {
            // `seq` falls inside a commit here: the peer's log of this replica is cut
            // differently, a fork. Send from the commit holding `seq`, which shows it.
            let all = try reader.commits(of: replica, after: 0).commits
            return Array(all.drop { $0.endSeq - 1 < seq })
        }
        guard seq > 0, !after.isEmpty else { return after }
        if previous == nil { previous = try reader.commit(of: replica, endingAt: seq) }
        guard let previous else { return after }
        return [previous] + after
    }

    /// What to send a peer that holds `replica`'s operations up to `seq`, as sealed segments
    /// ready to go: the commit ending at `seq` alone (for the peer's fork check, as in
    /// ``commitsToSend(of:after:)``), then this store's sealed files verbatim while one starts
    /// right after what is covered (nothing decoded or re-encoded), then the rest encoded in
    /// one segment, which the peer can keep as it is. What is encoded here is compressed
    /// with ``LZ4Block/Effort/balanced``, as the peer is waiting for it.
    @_spi(Engine) public func segmentsToSend(of replica: ReplicaID, after seq: UInt64) throws(StoreError) -> [[UInt8]] {
        let reader = LogReader(layout: layout)
        let dir = layout.logDirectory(replica)
        let sealed = try Posix.list(dir).compactMap(SealedName.init(fileName:))
        var verbatim: [[UInt8]] = []
        var covered = seq
        while let next = sealed.filter({ $0.first == covered + 1 }).max(by: { $0.last < $1.last }),
            let bytes = try Posix.readFile(Posix.join(dir, next.fileName)),
            // Checksums only (no record is decoded): a damaged file is sent as decoded below.
            SegmentCodec.isWholeSealed(bytes, replica: replica, first: next.first, last: next.last)
        {
            verbatim.append(bytes)
            covered = next.last
        }
        guard covered > seq else {
            let commits = try commitsToSend(of: replica, after: seq)
            // The commit at the peer's horizon goes alone, as above: the rest is then wholly
            // new to the peer, which keeps it as it arrives instead of encoding it again.
            if seq > 0, commits.count > 1, commits[0].endSeq - 1 == seq {
                return [SegmentCodec.sealed(replica, [commits[0]], effort: .balanced),
                        SegmentCodec.sealed(replica, Array(commits.dropFirst()), effort: .balanced)]
            }
            return commits.isEmpty ? [] : [SegmentCodec.sealed(replica, commits, effort: .balanced)]
        }
        var out: [[UInt8]] = []
        if seq > 0, let previous = try reader.commit(of: replica, endingAt: seq) {
            out.append(SegmentCodec.sealed(replica, [previous], effort: .balanced))
        }
        out += verbatim
        let rest = try reader.commits(of: replica, after: covered).commits
        if !rest.isEmpty { out.append(SegmentCodec.sealed(replica, rest, effort: .balanced)) }
        return out
    }

    /// Notes that peers now hold this replica's own operations through `seq` (a sync sent or
    /// published them). Merges then keep this replica's sealed segments up to `seq` apart from
    /// later ones, for as long as this store object lives, so that the next exchange with those
    /// peers sends the later segments as they are instead of decoding a merged one. It works
    /// best where `seq` ends a sealed segment, as after a folder sync, which seals first;
    /// `compact` merges regardless.
    package func notePeersHold(through seq: UInt64) {
        inner.withLock { $0.writer.sharedThrough = seq }
    }

    /// The last commit this store holds of `replica` (nil if none): sent to a peer that holds
    /// as much or more of the replica, so that a fork between equally long branches is noticed.
    package func lastCommit(of replica: ReplicaID) throws(StoreError) -> Commit? {
        let held = try version[replica]
        return held == 0 ? nil : try LogReader(layout: layout).commit(of: replica, endingAt: held)
    }

    /// Adds commits of a replica learned from elsewhere (a shared folder, a peer): the part
    /// past what this store holds is written as a sealed segment, and the clock moves past
    /// their times. Commits this store already holds are skipped. Commits that disagree with
    /// those held (a fork) are settled by ``ForkRule``, keeping both branches' operations.
    /// - Parameter segment: the sealed segment `commits` were decoded from, if they were: when
    ///   all of them are new it is kept as it is instead of being encoded again.
    /// - Returns: the operations added and the fork resolved, if any.
    @discardableResult
    @_spi(Engine) public func integrate(_ commits: [Commit], from origin: ReplicaID, segment: [UInt8]? = nil) throws(StoreError) -> Integration {
        try inner.withLock { (inner) throws(StoreError) -> Integration in
            try refresh(&inner)
            return try holdingLock(&inner) { (inner) throws(StoreError) -> Integration in
                _ = try synchroniseFollowingIdentity(&inner)
                let me = inner.writer.replica
                let have = origin == me ? max(inner.state!.version[origin], inner.writer.nextSeq - 1)
                    : inner.state!.version[origin]
                var lastHeld = inner.lastIntegrated[origin].flatMap { $0.endSeq == have + 1 ? $0 : nil }
                let fork: ForkPoint?
                do throws(StoreError) {
                    fork = try findFork(commits, of: origin, holding: have, lastHeld: &lastHeld)
                    if let lastHeld, lastHeld.endSeq == have + 1 { inner.lastIntegrated[origin] = lastHeld }
                } catch .forkNeedsEarlierOperations(let replica, let seq) {
                    if let moved = try continueMovedBranch(commits, of: origin, &inner) { return moved }
                    throw .forkNeedsEarlierOperations(replica: replica, seq: seq)
                }
                if let fork {
                    if let moved = try continueMovedBranch(commits, of: origin, &inner) { return moved }
                    return try resolve(fork, &inner)
                }
                // Commits arrive in order (``checkOrder(_:of:)``): when the first is new, all are.
                let fresh = commits.first.map({ $0.endSeq - 1 > have }) == true ? commits : commits.filter { $0.endSeq - 1 > have }
                guard let first = fresh.first else { return Integration(operations: 0) }
                guard first.firstSeq == have + 1 else {
                    if let moved = try continueMovedBranch(commits, of: origin, &inner) { return moved }
                    throw .invalidArgument("operations of \(origin) from \(first.firstSeq) do not follow the \(have) this store holds")
                }
                let verbatim = fresh.count == commits.count ? segment : nil
                return try append(fresh, of: origin, holding: have, lastHeld: lastHeld, segment: verbatim, &inner)
            }
        }
    }

    /// Integrates a sealed segment as it arrived (a file of a shared folder, a peer's body),
    /// as ``integrate(_:from:segment:)`` does with its decoded commits. When the segment
    /// continues exactly where this store's operations of its replica end (what a sync sends
    /// of operations new to it), it is decoded on a second thread while this one applies what
    /// is decoded, and then kept as it is; otherwise it is decoded whole first (overlaps,
    /// forks).
    /// - Throws: ``StoreError/invalidArgument(_:)`` when the bytes are not an undamaged
    ///   sealed segment, or their operations do not decode; nothing is then imported.
    @discardableResult
    @_spi(Engine) public func integrate(segment bytes: [UInt8]) throws(StoreError) -> Integration {
        let span: (replica: ReplicaID, first: UInt64, last: UInt64)
        do {
            span = try SegmentFile.span(bytes)
        } catch {
            throw .invalidArgument("a segment not imported: \(error)")
        }
        let streamed = try inner.withLock { (inner) throws(StoreError) -> Integration? in
            try refresh(&inner)
            return try holdingLock(&inner) { (inner) throws(StoreError) -> Integration? in
                _ = try synchroniseFollowingIdentity(&inner)
                guard span.replica != inner.writer.replica, inner.state!.version[span.replica] == span.first - 1 else { return nil }
                return try appendStreaming(bytes, of: span.replica, first: span.first, last: span.last, &inner)
            }
        }
        if let streamed { return streamed }
        let commits: [Commit]
        do {
            commits = try SegmentFile.decode(bytes).commits
        } catch {
            throw .invalidArgument("a segment not imported: \(error)")
        }
        return try integrate(commits, from: span.replica, segment: bytes)
    }

    /// Applies the operations of `bytes`, an undamaged sealed segment of `origin` holding
    /// `first...last` where `first` follows what the state holds, while they are decoded;
    /// then writes the segment as it is. On any failure the state is dropped (the next read
    /// loads it from the files), since part of the segment may have been applied to it.
    private func appendStreaming(
        _ bytes: [UInt8], of origin: ReplicaID, first: UInt64, last: UInt64, _ inner: inout Inner
    ) throws(StoreError) -> Integration {
        let have = first - 1
        var held = inner.lastIntegrated[origin].flatMap { $0.endSeq == first ? $0 : nil }
        if held == nil && have > 0 { held = try LogReader(layout: layout).commit(of: origin, endingAt: have) }
        var state = inner.state.take()!
        var kept = false
        defer {
            if !kept {
                inner.tails = [:]
                inner.lastIntegrated = [:]
            }
        }
        var taking = TakingSegment(origin: origin, first: first, held: held, notifying: !inner.observers.isEmpty)
        let streamed: SegmentCodec.Streamed
        do {
            streamed = try SegmentCodec.stream(
                bytes, needsLatestTime: false, decodingAhead: bytes.count >= LogReader.decodingAheadMinimumBytes
            ) { commits in taking.take(commits, into: &state) }
        } catch {
            throw .invalidArgument("a segment of \(origin) not imported: \(error)")
        }
        if let refusal = taking.refusal { throw .invalidArgument(refusal) }
        if let damage = streamed.contents.damage {
            throw .invalidArgument("a segment of \(origin) not imported: damaged at byte \(damage.offset) (\(damage.reason))")
        }
        guard let lastCommit = taking.lastCommit, lastCommit.endSeq == last + 1 else {
            throw .invalidArgument("a segment of \(origin) not imported: it holds fewer operations than its records say")
        }
        try Posix.makeDirectories(layout.logDirectory(origin))
        try Posix.writeAtomically(layout.sealedFile(origin, first: first, last: last), bytes)
        inner.state = state
        kept = true
        try observeImported(lastCommit.time, of: origin, &inner)  // the latest: times increase
        inner.lastIntegrated[origin] = lastCommit
        for change in taking.changes { notify(inner.observers, change) }
        return Integration(operations: taking.added)
    }

    /// What applying a segment's commits as they are decoded found (``appendStreaming``).
    private struct TakingSegment {
        let origin: ReplicaID
        let first: UInt64
        /// The last commit of `origin` held before the segment.
        let held: Commit?
        let notifying: Bool
        private(set) var added: UInt64 = 0
        private(set) var lastCommit: Commit?
        private(set) var refusal: String?
        private(set) var changes: [StoreChange] = []

        /// Applies `commits` to `state`; false, with a refusal, when they do not follow on.
        mutating func take(_ commits: ArraySlice<Commit>, into state: inout TaskState) -> Bool {
            // A replica's clock never goes back: the first commit must be later than the
            // last one held (so segments can always be re-encoded and relayed).
            if lastCommit == nil, let held, let c = commits.first, c.time <= held.time {
                refusal = "operations of \(origin) from \(first) are not later than those held; not imported"
                return false
            }
            let taken = state.apply(commits, from: origin)
            for c in commits.prefix(taken) {
                added += UInt64(c.operations.count)
                if notifying { changes.append(StoreChange(replica: origin, commit: c, isLocal: false)) }
            }
            guard taken == commits.count else {
                let c = commits[commits.startIndex + taken]
                refusal = "operations of \(origin) from \(c.firstSeq) do not follow those this store holds; not imported"
                return false
            }
            lastCommit = commits.last
            return true
        }
    }

    /// Writes `fresh` (commits of `origin` continuing exactly after `have`) as a sealed
    /// segment and applies them.
    func append(
        _ fresh: [Commit], of origin: ReplicaID, holding have: UInt64, lastHeld: Commit?, segment: [UInt8]?, _ inner: inout Inner
    ) throws(StoreError) -> Integration {
        let me = inner.writer.replica
        let first = fresh[0]
        try checkOrder(fresh, of: origin)
        // A replica's clock never goes back: the first new commit must be later than
        // the last one held (so segments can always be re-encoded and relayed).
        if have > 0,
            let held = lastHeld?.endSeq == have + 1 ? lastHeld : try LogReader(layout: layout).commit(of: origin, endingAt: have),
            fresh[0].time <= held.time
        {
            throw .invalidArgument("operations of \(origin) from \(fresh[0].firstSeq) are not later than those held; not imported")
        }
        let last = fresh.last!.endSeq - 1
        try Posix.makeDirectories(layout.logDirectory(origin))
        let verbatim = segment.flatMap { bytes in
            SegmentCodec.isWholeSealed(bytes, replica: origin, first: first.firstSeq, last: last) ? bytes : nil
        }
        try Posix.writeAtomically(
            layout.sealedFile(origin, first: first.firstSeq, last: last), verbatim ?? SegmentCodec.sealed(origin, fresh))
        if origin == me {
            // This replica's own operations, held elsewhere but missing here (a store
            // restored from an old backup): the tail must continue after them.
            _ = try inner.writer.seal()
            try Posix.writeAtomically(
                layout.tailFile(me),
                SegmentCodec.tail(me, firstSeq: last + 1, clock: max(inner.writer.latestTime, fresh.last!.time)))
            inner.writer.closeFile()
            _ = try inner.writer.synchronise()
        } else {
            try observeImported(fresh.last!.time, of: origin, &inner)  // times increase (checkOrder)
        }
        inner.lastIntegrated[origin] = fresh.last
        var added: UInt64 = 0
        for c in fresh where inner.state!.apply(c, from: origin) {
            added += UInt64(c.operations.count)
            if !inner.observers.isEmpty { notify(inner.observers, StoreChange(replica: origin, commit: c, isLocal: false)) }
        }
        return Integration(operations: added)
    }

    /// Moves this replica's clock past `time`, the latest of the operations of `origin` just
    /// imported, as far as it may; a time beyond that is noted as a warning.
    func observeImported(_ time: Timestamp, of origin: ReplicaID, _ inner: inout Inner) throws(StoreError) {
        let wall = options.wallClock()
        if HybridLogicalClock.admitted(time, wall: wall) < time {
            inner.note([StoreWarning(
                path: layout.logDirectory(origin),
                message: "operations of replica \(origin.hex) are stamped \(isoTime(time)), more than 24 hours ahead of this machine's clock; they were imported, but this replica's clock does not follow them (check that device's clock)")])
        }
        try inner.writer.observe(time, wall: wall, durable: options.durable)
    }
}
