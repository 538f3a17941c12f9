#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension TaskStore {
    /// Hands the tasks matching `query` to `body` one at a time, like ``forEachTask(_:_:)``,
    /// but reads them straight from the snapshot, merged with the log after it, without
    /// loading the state: for a process that lists the store once (a command-line listing),
    /// which then touches a fraction of the memory. The state is loaded as usual instead
    /// when it is loaded already, the sort is not by creation, the snapshot is missing,
    /// unreadable or not in creation order, or the log after it is long (loading then saves
    /// a fresh snapshot) or adds a task older than the snapshot's latest operation.
    /// - Throws: ``StoreError/damagedSnapshot(path:reason:)`` when the snapshot turns out
    ///   damaged after tasks were handed out (it is removed; listing again loads from the logs).
    @_spi(Engine) public func scanTasks(_ query: TaskQuery, _ body: (TaskItem) -> Void) throws(StoreError) {
        try withoutActuallyEscaping(body) { (body) throws(StoreError) in
            var sink = ItemSink(body)
            try scanTasks(query, into: &sink)
        }
    }

    /// ``scanTasks(_:_:)``, handing the tasks to `sink`: a saved task that no later operation
    /// touched as it is read in place (``SavedTask``, which a listing can write out without
    /// making strings of it), any other as an item.
    package func scanTasks(_ query: TaskQuery, into sink: inout some TaskSink) throws(StoreError) {
        let prepared = query.sort == .created ? try savedListing() : nil
        guard let (saved, head, after, _) = prepared else { return try forEachTask(query) { sink.take($0) } }
        var handedOut = false
        do {
            try withUnsafeMutablePointer(to: &sink) { (sink) throws(DecodeError) in
                var noting = NotingSink(sink: sink)
                defer { handedOut = noting.handedOut }
                try after.forEachTask(query, mergingSaved: saved, head: head, into: &noting)
            }
        } catch {
            guard handedOut else { return try forEachTask(query) { sink.take($0) } }
            unlink(layout.snapshotFile)
            throw .damagedSnapshot(path: layout.snapshotFile, reason: "\(error)")
        }
    }

    /// Hands tasks on to a sink, noting whether it did.
    private struct NotingSink<Sink: TaskSink>: TaskSink {
        let sink: UnsafeMutablePointer<Sink>
        var handedOut = false

        mutating func take(_ task: TaskItem) {
            handedOut = true
            sink.pointee.take(task)
        }

        mutating func take(_ task: borrowing SavedTask) {
            handedOut = true
            sink.pointee.take(task)
        }
    }

    /// The live tasks among `ids` (a deleted or unknown id has no entry). When the state is
    /// not loaded they are read from the snapshot merged with the log after it, as
    /// ``scanTasks(_:_:)`` does, so that a process naming a few tasks (`tasklog show ID`,
    /// `done ID`) need not load them all: found through the snapshot's task index, and an id
    /// the index does not list by stepping over the saved tasks. Otherwise, or when the
    /// snapshot cannot be read so, from the state (which a store object that goes on to read
    /// much had better load: ``tasks(_:)``).
    package func liveTasks(_ ids: Set<TaskID>) throws(StoreError) -> [TaskID: TaskItem] {
        guard !ids.isEmpty else { return [:] }
        if let listing = try savedListing() {
            var found: [TaskID: TaskItem] = [:]
            var unlisted = ids
            if let (indexed, answered) = Self.indexed(ids, listing) {
                found = indexed.mapValues(\.task)
                unlisted = ids.subtracting(answered)
            }
            if unlisted.isEmpty { return found }
            if let stepped = try? listing.after.liveTasks(unlisted, mergingSaved: listing.saved, head: listing.head) {
                return found.merging(stepped) { a, _ in a }
            }
        }
        return try withState { state in
            var found: [TaskID: TaskItem] = [:]
            for id in ids { if state.isLive(id), let t = state.task(id) { found[id] = t } }
            return found
        }
    }

    /// The live tasks among `ids` with their live dots (and the deleted ones, dots nil, when
    /// `includingDeleted`), found through the snapshot's task index, and the ids answered so
    /// (nil without a usable index). The index lists every saved task, so an id it lacks that
    /// the log after the snapshot has is answered; one neither has is not (it may be unknown,
    /// or the index wrong).
    private static func indexed(
        _ ids: Set<TaskID>, _ listing: SavedListing, includingDeleted: Bool = false
    ) -> (found: [TaskID: (task: TaskItem, dots: LiveDots?)], answered: Set<TaskID>)? {
        guard let index = listing.index,
            let read = try? StateCodec.tasks(at: ids.flatMap { id in index.offsets(of: id).map { (id, $0) } }, in: listing.saved)
        else { return nil }
        let answered = ids.filter { read[$0] != nil || listing.after.records.position(of: $0) != nil }
        return (listing.after.tasks(ids, saved: read, head: listing.head, includingDeleted: includingDeleted), answered)
    }

    /// The task with this id, live or deleted, through the snapshot's task index; nil when it
    /// cannot be answered so (the state then answers).
    func indexedTask(_ id: TaskID) throws(StoreError) -> TaskItem?? {
        guard let listing = try savedListing(), let (found, answered) = Self.indexed([id], listing, includingDeleted: true),
            answered.contains(id)
        else { return nil }
        return .some(found[id]?.task)
    }

    /// ``resolve(_:includeDeleted:)`` for a live task without loading the state: read from the
    /// snapshot merged with the log after it. Nil when it cannot say so (the state is loaded,
    /// the snapshot cannot be read so, or no live task matches): the state then gives the
    /// answer, and the exact error.
    func resolveLive(_ text: String) throws(StoreError) -> TaskID? {
        guard let listing = try savedListing() else { return nil }
        if let exact = TaskID(text) {
            // Through the index an id it lacks is answered too: no such saved task.
            if let (found, _) = Self.indexed([exact], listing) {
                if found[exact] != nil { return exact }
            } else if try liveTasks([exact])[exact] != nil {
                return exact
            }
        }
        guard text.utf8.count >= 4,
            let candidates = try? listing.after.liveTaskIDs(withPrefix: text, mergingSaved: listing.saved, head: listing.head).sorted(),
            let first = candidates.first
        else { return nil }
        guard candidates.count == 1 else { throw .ambiguousID(prefix: text, candidates: candidates.map(\.rawValue)) }
        return first
    }

    /// Deletes tasks (one commit): removes the membership tags this replica has observed, so a
    /// concurrent edit elsewhere does not bring a task back (``restore(_:)`` does). Tasks on
    /// the list are deleted without loading the state when the snapshot allows
    /// (``removeIfLive(_:)``).
    public func remove(_ ids: [TaskID]) throws(StoreError) {
        if try removeIfLive(ids) { return }
        let ops = try withState { (state) throws(StoreError) -> [TaskOperation] in
            var ops: [TaskOperation] = []
            for id in ids {
                guard state.task(id) != nil else { throw .taskNotFound(id.rawValue) }
                let seen = state.observedDots(of: id)
                if !seen.isEmpty { ops.append(.remove(id, observed: seen.sorted())) }
            }
            return ops
        }
        if !ops.isEmpty { try commit(ops) }
    }

    /// Deletes tasks, as ``remove(_:)`` does, reading only these tasks (their live dots)
    /// through the snapshot's task index. Returns false, writing nothing, when one of them is
    /// not live, or when it cannot read them so (the state is loaded, or the snapshot has no
    /// usable index): ``remove(_:)`` then reads the state.
    private func removeIfLive(_ ids: [TaskID]) throws(StoreError) -> Bool {
        guard let listing = try savedListing(), let (found, _) = Self.indexed(Set(ids), listing),
            ids.allSatisfy({ found[$0] != nil })
        else { return false }
        try commit(ids.map { .remove($0, observed: found[$0]!.dots!.sorted()) })
        return true
    }

    /// A snapshot's body and head, and the state of the log after it: what is read instead of
    /// the state.
    typealias SavedListing = (saved: SharedBytes, head: StateCodec.Head, after: TaskState, index: Snapshot.TaskIndex?)

    /// What to read instead of the state, or nil when the state is loaded already or must be
    /// loaded.
    private func savedListing() throws(StoreError) -> SavedListing? {
        try inner.withLock { (inner) throws(StoreError) -> SavedListing? in
            inner.state == nil ? try prepareScan(&inner) : nil
        }
    }

    /// ``savedListing()`` under the lock: nil when the snapshot cannot be read one task at a
    /// time or the log after it is long. What the log after the snapshot holds is kept with
    /// the snapshot, so a later lookup reads only what was written since.
    func prepareScan(_ inner: inout Inner) throws(StoreError) -> SavedListing? {
        try followIdentityFile(&inner)
        try finishInterruptedRewrite(&inner)
        guard var kept = try verifiedSnapshot(&inner) else { return nil }
        var after = kept.after ?? TaskState(continuing: kept.head)
        let outcome = try LogReader(layout: layout).catchUp(&after, tails: &kept.marks)
        kept.applied += outcome.appliedOperations
        inner.note(outcome.warnings)
        guard kept.applied <= options.snapshotAfterOperations, after.followsInCreationOrder(kept.head) else {
            inner.verifiedSnapshot = nil
            return nil
        }
        kept.after = after
        inner.verifiedSnapshot = kept
        return (kept.saved, kept.head, after, kept.index)
    }

    /// The tasks whose parent register may name one of `parents`, found without reading every
    /// task; nil when every task must be read to tell. The saved state holds a UUID id as 16
    /// bytes, so when no parent's canonical text occurs in it, no saved register names one,
    /// and only a register written since the snapshot can.
    package func childCandidates(of parents: Set<TaskID>) throws(StoreError) -> Set<TaskID>? {
        guard parents.allSatisfy({ $0.uuid != nil }), let listing = try savedListing() else { return nil }
        let texts = parents.map { Array($0.rawValue.utf8) }
        guard !listing.saved.withUnsafeBytes({ saved in texts.contains { Self.occurs($0, in: saved) } }) else { return nil }
        var found = Set<TaskID>()
        for (id, record) in listing.after.records {
            if let text = record.meta[PlanningKey.parent]?.value ?? nil, let parent = PlanningKey.canonicalID(text), parents.contains(parent) {
                found.insert(id)
            }
        }
        return found
    }

    /// Whether some task may name a parent or a dependency: false only when the snapshot shows
    /// no parent entry and no dependency element in any saved task, and no task written since
    /// holds one. A listing then needs no tree of every task.
    package func mayHoldLinks() throws(StoreError) -> Bool {
        guard let listing = try savedListing() else { return true }
        let marks = [[6] + Array(PlanningKey.parent.utf8), Array(PlanningKey.dependencyPrefix.utf8)]
        if listing.saved.withUnsafeBytes({ saved in marks.contains { Self.occurs($0, in: saved) } }) { return true }
        for (_, record) in listing.after.records {
            if record.meta[PlanningKey.parent] != nil || record.tags.dotsByElement.keys.contains(where: PlanningKey.isReservedTag) { return true }
        }
        return false
    }

    /// Whether `needle` (not empty) occurs in `haystack`. memchr looks for the needle's first
    /// hyphen, if it has one (rare in a saved state, unlike digits), else its first byte.
    private static func occurs(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let base = haystack.baseAddress, haystack.count >= needle.count else { return false }
        let anchor = needle.firstIndex(of: UInt8(ascii: "-")) ?? 0
        let end = base + (haystack.count - needle.count + 1) + anchor
        var at = base + anchor
        return needle.withUnsafeBytes { n in
            while at < end, let hit = memchr(at, Int32(n[anchor]), end - at) {
                if memcmp(hit - anchor, n.baseAddress!, n.count) == 0 { return true }
                at = UnsafeRawPointer(hit) + 1
            }
            return false
        }
    }

    /// The snapshot as last read, when the file and the identity file are the same ones;
    /// else read and checked (framing and checksums) afresh. Nil when the snapshot is
    /// missing, damaged or not in creation order.
    private func verifiedSnapshot(_ inner: inout Inner) throws(StoreError) -> VerifiedSnapshot? {
        // Taken before the file is read: if it is replaced meanwhile, the next call sees
        // another version and reads it again.
        let version = Posix.version(of: layout.snapshotFile)
        if let kept = inner.verifiedSnapshot, kept.version == version, kept.identity == inner.identityVersion { return kept }
        inner.verifiedSnapshot = nil
        guard let version, let bytes = try Posix.mapFile(layout.snapshotFile),
            let (saved, inCreationOrder, index) = try? Snapshot.body(of: bytes), inCreationOrder,
            let head = try? StateCodec.head(of: saved)
        else { return nil }
        return VerifiedSnapshot(
            version: version, identity: inner.identityVersion, saved: saved, head: head, index: index,
            tie: UrgencyPlan.tie(snapshot: bytes, version: head.version))
    }
}

/// A snapshot body a listing read and checked, with the state of the log after it, kept so
/// that a process looking up several tasks (`done ID`: before, the write, after) reads and
/// checks the file once and then reads only what the logs gained.
///
/// Invariants: a snapshot file is never changed in place, only replaced by a rename or
/// removed, and either gives it another inode or change time (``FileVersion``), so the same
/// version is the same bytes. The logs only grow, except when a fork is resolved, which
/// rewrites the identity file: the state after the snapshot is kept for one identity only.
struct VerifiedSnapshot {
    let version: FileVersion
    let identity: FileVersion?
    let saved: SharedBytes
    let head: StateCodec.Head
    let index: Snapshot.TaskIndex?
    /// What ties an urgency plan to this snapshot (``UrgencyPlan/tie(snapshot:version:)``).
    let tie: [UInt8]
    /// The operations after the snapshot read so far, the tails' marks, and how many.
    var after: TaskState?
    var marks: [ReplicaID: TailMark] = [:]
    var applied: UInt64 = 0
}
