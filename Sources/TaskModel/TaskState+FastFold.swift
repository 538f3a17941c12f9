@_spi(Engine) import CRDTCore

/// The fast fold: applying runs of commits with the records prefetched a few operations ahead
/// (``RecordPrefetch``) and, for commits no one reads afterwards, field values moved out of
/// the operations through pointers instead of copied.
///
/// Invariant: every path gives the state the plain fold gives (``apply(_:from:)`` one commit
/// at a time); the tests check it against a reference fold written for clarity.
extension TaskState {
    /// Applies commits of `replica` in order, each as ``apply(_:from:)`` would, up to the first
    /// that leaves a gap; the version vector is looked up and extended once for all of them
    /// (per commit it was a tenth of applying a log).
    /// - Returns: how many of the commits were taken (applied, or ignored as held already):
    ///   all of them unless one leaves a gap.
    @discardableResult
    @_spi(Engine) public mutating func apply(_ commits: ArraySlice<Commit>, from replica: ReplicaID) -> Int {
        apply(commits, from: replica, taking: false)
    }

    /// ``apply(_:from:)`` for commits no one reads afterwards (a chunk just decoded for a
    /// rebuild). Each field write applied moves its value into the state instead of copying
    /// it, and is left holding the text the state let go (the field's previous value), which
    /// is then released wherever the commits are freed: in a rebuild, on the thread that
    /// decoded them, whose memory it is. Copying each value and releasing the previous one
    /// there was about a quarter of the applying thread's time in a rebuild, most of it
    /// reference counts of strings another thread had just made.
    @discardableResult
    @_spi(Engine) public mutating func apply(taking commits: ArraySlice<Commit>, from replica: ReplicaID) -> Int {
        apply(commits, from: replica, taking: true)
    }

    @inline(__always)
    private mutating func apply(_ commits: ArraySlice<Commit>, from replica: ReplicaID, taking: Bool) -> Int {
        let held = version[replica]
        var have = held
        var latest = latestTime
        var taken = 0
        commits.withUnsafeBufferPointer { commits in
            guard let first = commits.baseAddress else { return }
            var ahead = RecordPrefetch(commits, table: records)
            for commit in first..<(first + commits.count) {
                let end = commit.pointee.endSeq - 1
                if end <= have {
                    for _ in commit.pointee.operations.indices { _ = ahead.advance(records) }
                    taken += 1
                    continue
                }
                guard commit.pointee.firstSeq == have + 1 else { return }
                applyOperations(of: commit, from: replica, taking: taking, ahead: &ahead)
                have = end
                if commit.pointee.time > latest { latest = commit.pointee.time }
                taken += 1
            }
        }
        if have > held { version[replica] = have }
        latestTime = latest
        return taken
    }

    /// The operations of a commit the version vector now holds, read in place (not copied
    /// out one by one).
    @inline(__always)
    mutating func applyOperations(
        of commit: UnsafePointer<Commit>, from replica: ReplicaID, taking: Bool = false, ahead: UnsafeMutablePointer<RecordPrefetch>? = nil
    ) {
        let (firstSeq, time) = (commit.pointee.firstSeq, commit.pointee.time)
        commit.pointee.operations.withUnsafeBufferPointer { ops in
            guard let first = ops.baseAddress else { return }
            for i in ops.indices {
                let hash = ahead?.pointee.advance(records)
                let stamp = Stamp(time: time, operation: OperationID(replica: replica, seq: firstSeq + UInt64(i)))
                if taking {
                    apply(taking: UnsafeMutablePointer(mutating: first + i), stamp: stamp, hash: hash)
                } else {
                    apply(at: first + i, stamp: stamp, hash: hash)
                }
            }
        }
    }

    /// ``apply(at:stamp:)`` moving a field write's value out of `op` into the state; `op` is
    /// left holding the text the state let go, if any (otherwise a write of no value).
    @inline(__always)
    private mutating func apply(taking op: UnsafeMutablePointer<TaskOperation>, stamp: Stamp, hash: Int?) {
        guard case .set = op.pointee else { return apply(at: op, stamp: stamp, hash: hash) }
        guard case .set(let id, let write) = op.move() else { preconditionFailure("a set operation just read") }
        let p = records.positionCreating(id, hash: hash)
        let dropped = records.values[p].apply(write, stamp)
        records.values[p].touch(stamp.time)
        op.initialize(to: .set(id, dropped ?? .unknown(field: 0, value: [])))
    }
}
