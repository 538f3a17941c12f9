#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
import Dispatch
@_spi(Engine) import TaskModel

/// Sealing, merging and snapshots off the commit path (``TaskStore/Options/sealsInBackground``).
///
/// The slow part of each (decoding, encoding, compressing) runs on a background thread (at a lower priority) without
/// the lock, from files that cannot change under it; only the writes take the lock, and they
/// are skipped when another process replaced the files meanwhile (Spec/log-format.md, "Seal").
extension TaskStore {
    /// Brings the store to rest: ends the lock lease a burst of commits may be keeping
    /// (sealing the tail it left, past ``Options/idleSealThreshold``) and waits until the
    /// seals, merges and snapshots queued so far are done. Not to be called from the
    /// store's own maintenance work.
    public func waitForMaintenance() {
        inner.withLock { endLease(&$0) }
        maintenanceRunning.wait()
    }

    /// Ends the lease `inner` keeps (only lease `number`, if given); a burst of commits is then
    /// over, and the tail it left is sealed if it is long (``sealIfLeftLong(_:)``).
    func endLease(_ inner: inout Inner, number: Int? = nil) {
        guard inner.lock.keepsLease(number) else { return }
        giveBackReservation(&inner)
        _ = inner.lock.endLease(number: number)
        sealIfLeftLong(&inner)
    }

    /// Queues a background seal of a tail that a finished burst left longer than
    /// ``Options/idleSealThreshold``.
    func sealIfLeftLong(_ inner: inout Inner) {
        guard options.sealsInBackground, !options.maintenanceOnCallingThread, !inner.sealInCommit,
            inner.writer.isLonger(than: options.idleSealThreshold)
        else { return }
        queueSeal(&inner)
    }

    func queueSeal(_ inner: inout Inner) {
        guard !inner.sealQueued, let mark = inner.writer.mark else { return }
        inner.sealQueued = true
        let replica = inner.writer.replica
        if options.maintenanceOnCallingThread {
            inner.sealWaiting = (replica, mark)
            return
        }
        maintenanceRunning.enter()
        Posix.detachLowPriorityThread { [self] in
            seal(of: replica, from: mark)
            maintenanceRunning.leave()
        }
    }

    /// Runs the seal ``queueSeal(_:)`` left for the calling thread, if any (with
    /// ``Options/maintenanceOnCallingThread``: the same work as in the background, after the
    /// commit has released the locks, so that a simulation stays reproducible).
    func runWaitingSeal() {
        while let (replica, mark) = inner.withLock({ $0.sealWaiting.take() }) {
            seal(of: replica, from: mark)
        }
    }

    private func seal(of replica: ReplicaID, from mark: TailMark) {
        let outcome = sealInBackground(of: replica, from: mark)
        inner.withLock { inner in
            inner.sealQueued = false
            if outcome == .failed {
                inner.sealInCommit = true
            } else if inner.writer.needsSeal {
                queueSeal(&inner)  // commits filled the tail again while the snapshot was saved
            } else if !inner.lock.isLeased {
                sealIfLeftLong(&inner)  // the burst ended while this seal ran
            }
        }
    }

    private enum BackgroundSeal {
        case done
        /// Another process sealed or replaced the tail first.
        case overtaken
        /// The next seal runs in a commit, which reports what goes wrong.
        case failed
    }

    /// Seals the tail as `mark` saw it and merges, again while commits made meanwhile fill the
    /// tail past the threshold, then saves the snapshot. Each step holds the lock only to
    /// rename files already written and synced (and, for a seal, to copy what was appended
    /// meanwhile into the fresh tail), so commits wait little.
    private func sealInBackground(of replica: ReplicaID, from first: TailMark) -> BackgroundSeal {
        var mark: TailMark? = first
        do {
            while let source = mark {
                guard let prepared = TailWriter.prepareSeal(layout: layout, replica: replica, files: options.fileSystem, of: source) else { return .failed }
                let next = try inner.withLock { (inner) throws(StoreError) -> TailMark?? in
                    try holdingLock(&inner) { (inner) throws(StoreError) -> TailMark?? in
                        do throws(StoreError) {
                            try synchroniseOwnTail(&inner)
                        } catch {
                            prepared.discard(options.fileSystem)
                            throw error
                        }
                        guard try inner.writer.completeSeal(prepared) else { return nil }
                        noteTailHeld(&inner)
                        return .some(inner.writer.needsSeal ? inner.writer.mark : nil)
                    }
                }
                guard let next else { return .overtaken }
                mark = next
                let barrier = inner.withLock { $0.writer.sharedThrough }
                if let merge = try TailWriter.prepareMerge(
                    layout: layout, replica: replica, files: options.fileSystem, target: options.mergeTarget, everything: false, keepingApartAt: barrier)
                {
                    try inner.withLock { (inner) throws(StoreError) in
                        try holdingLock(&inner) { (inner) throws(StoreError) in
                            if inner.writer.replica == replica { _ = try inner.writer.completeMerge(merge) }
                        }
                    }
                }
            }
            // The snapshot is encoded from a copy of the state and written outside the locks;
            // it replaces the old one only if no fork resolution rewrote the logs meanwhile.
            let (copied, identity) = inner.withLock { ($0.state.map { copy $0 }, $0.identityVersion) }
            if let state = copied {
                let snapshot = Snapshot.encode(state)
                let temp = try Posix.writeTemporary(beside: layout.snapshotFile, snapshot, cached: false)
                let installed = try inner.withLock { (inner) throws(StoreError) -> Bool in
                    try holdingLock(&inner) { (inner) throws(StoreError) -> Bool in
                        // Not over a newer one (`compact` may have saved one meanwhile).
                        guard inner.identityVersion == identity, Posix.version(of: layout.identityFile) == identity,
                            state.version.includes(inner.snapshotVersion)
                        else {
                            unlink(temp)
                            return false
                        }
                        try Posix.install(temp, as: layout.snapshotFile)
                        inner.snapshotVersion = state.version
                        return true
                    }
                }
                if installed { savePlan(ofSnapshot: snapshot) }
            }
            return .done
        } catch {
            inner.withLock { $0.warnings.append(StoreWarning(path: layout.logDirectory(replica), message: "a background seal failed (\(error)); the next commit will seal instead")) }
            return .failed
        }
    }
}
