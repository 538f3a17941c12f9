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
    /// not loaded they are read from the snapshot merged with the log after it, so that a
    /// process naming a few tasks (`tasklog show ID`, `done ID`) need not load them all: found
    /// through the snapshot's task index (``lookedUp(_:includingDeleted:)``), or else by
    /// stepping over the saved tasks as ``scanTasks(_:_:)`` does. Otherwise, or when the
    /// snapshot cannot be read so, from the state (which a store object that goes on to read
    /// much had better load: ``tasks(_:)``).
    package func liveTasks(_ ids: Set<TaskID>) throws(StoreError) -> [TaskID: TaskItem] {
        guard !ids.isEmpty else { return [:] }
        if let found = try lookedUp(ids, includingDeleted: false) { return found.mapValues(\.task) }
        if let listing = try savedListing(),
            let stepped = try? listing.after.liveTasks(ids, mergingSaved: listing.saved, head: listing.head) {
            return stepped
        }
        return try withState { state in
            var found: [TaskID: TaskItem] = [:]
            for id in ids { if state.isLive(id), let t = state.task(id) { found[id] = t } }
            return found
        }
    }

    /// The task with this id, live or deleted, through the snapshot's task index; nil when it
    /// cannot be answered so (the state then answers).
    func indexedTask(_ id: TaskID) throws(StoreError) -> TaskItem?? {
        guard let found = try lookedUp([id], includingDeleted: true) else { return nil }
        return .some(found[id]?.task)
    }

    /// Deletes tasks (one commit): removes the membership tags this replica has observed, so a
    /// concurrent edit elsewhere does not bring a task back (``restore(_:)`` does). Tasks on
    /// the list are deleted without loading the state when the snapshot allows
    /// (``removeIfLive(_:)``), and so are others (``withNamedState(_:probing:_:)``).
    public func remove(_ ids: [TaskID]) throws(StoreError) {
        if try removeIfLive(ids) { return }
        let ops = try withNamedState(Set(ids)) { (state) throws(StoreError) -> [TaskOperation] in
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
        guard let found = try lookedUp(Set(ids), includingDeleted: false), ids.allSatisfy({ found[$0] != nil }) else {
            return false
        }
        try commit(ids.map { .remove($0, observed: found[$0]!.dots!.sorted()) })
        return true
    }

    /// A snapshot's body, every block checked, and its head, and the state of the log after
    /// it: what a listing reads instead of the state.
    typealias SavedListing = (saved: SharedBytes, head: StateCodec.Head, after: TaskState, index: TaskIndex?)

    /// What a listing reads instead of the state, or nil when the state is loaded already or
    /// must be loaded (the snapshot is missing, damaged or not in creation order).
    func savedListing() throws(StoreError) -> SavedListing? {
        try inner.withLock { (inner) throws(StoreError) -> SavedListing? in
            guard inner.state == nil, let kept = try prepareScan(&inner, whole: true), let head = kept.head else { return nil }
            return (kept.file.body, head, kept.after!, kept.file.taskIndex)
        }
    }

    /// The snapshot, checked as far as a lookup of a few tasks needs, and the state of the log
    /// after it; nil when the state is loaded already or must be loaded.
    func savedLookup() throws(StoreError) -> SavedLookup? {
        try inner.withLock { (inner) throws(StoreError) -> SavedLookup? in
            guard inner.state == nil, let kept = try prepareScan(&inner, whole: false) else { return nil }
            return (kept.file, kept.after!)
        }
    }

    /// ``savedListing()`` and ``savedLookup()`` under the lock: nil when the snapshot cannot
    /// be read one task at a time or the log after it is long. What the log after the
    /// snapshot holds is kept with the snapshot, so a later lookup reads only what was
    /// written since.
    func prepareScan(_ inner: inout Inner, whole: Bool) throws(StoreError) -> VerifiedSnapshot? {
        try followIdentityFile(&inner)
        try finishInterruptedRewrite(&inner)
        guard var kept = try verifiedSnapshot(&inner, whole: whole) else { return nil }
        let saved = kept.file.head
        var after = kept.after ?? TaskState(continuing: saved.version, latestTime: saved.latestTime)
        let outcome = try LogReader(layout: layout).catchUp(&after, tails: &kept.marks)
        kept.applied += outcome.appliedOperations
        inner.note(outcome.warnings)
        guard kept.applied <= options.snapshotAfterOperations, after.followsInCreationOrder(savedLatest: saved.latestTime) else {
            inner.verifiedSnapshot = nil
            return nil
        }
        kept.after = after
        inner.verifiedSnapshot = kept
        return kept
    }

    /// The tasks whose parent register may name one of `parents`, found through the snapshot's
    /// child index without reading every task; nil when every task must be read to tell.
    package func childCandidates(of parents: Set<TaskID>) throws(StoreError) -> Set<TaskID>? {
        try readingSaved { (saved) throws(DecodeError) -> Set<TaskID>? in
            guard let children = saved.file.childIndex else { return nil }
            var found = Set<TaskID>()
            for parent in parents {
                for offset in try children.offsets(of: parent) { found.insert(try saved.file.taskID(at: offset)) }
            }
            for (id, record) in saved.after.records {
                if let text = record.meta[PlanningKey.parent]?.value ?? nil, let parent = PlanningKey.canonicalID(text), parents.contains(parent) {
                    found.insert(id)
                }
            }
            return found
        }
    }

    /// Where `needle` (not empty) occurs in `haystack`, in order, the first `most` of them.
    /// memchr looks for the needle's first hyphen, if it has one (rare in a saved state, unlike
    /// digits), else its first byte.
    static func positions(of needle: [UInt8], in haystack: UnsafeRawBufferPointer, upTo most: Int) -> [Int] {
        guard let base = haystack.baseAddress, haystack.count >= needle.count, !needle.isEmpty else { return [] }
        let anchor = needle.firstIndex(of: UInt8(ascii: "-")) ?? 0
        let end = base + (haystack.count - needle.count + 1) + anchor
        var at = base + anchor
        var found: [Int] = []
        needle.withUnsafeBytes { n in
            while found.count < most, at < end, let hit = memchr(at, Int32(n[anchor]), end - at) {
                if memcmp(hit - anchor, n.baseAddress!, n.count) == 0 { found.append(UnsafeRawPointer(hit) - anchor - base) }
                at = UnsafeRawPointer(hit) + 1
            }
        }
        return found
    }

    /// The snapshot as last read, when the file and the identity file are the same ones;
    /// else opened afresh (its header, block table and first bytes checked). With `whole`,
    /// every block is checked and the whole head read. Nil when the snapshot is missing,
    /// damaged, or not in creation order.
    private func verifiedSnapshot(_ inner: inout Inner, whole: Bool) throws(StoreError) -> VerifiedSnapshot? {
        // Taken before the file is read: if it is replaced meanwhile, the next call sees
        // another version and reads it again.
        let version = Posix.version(of: layout.snapshotFile)
        var kept = inner.verifiedSnapshot
        if let k = kept, k.version != version || k.identity != inner.identityVersion { kept = nil }
        if kept == nil {
            inner.verifiedSnapshot = nil
            // Mapped a page at a time as read: a lookup touches a few pages.
            guard let version, let bytes = try Posix.mapFile(layout.snapshotFile, populated: false),
                let file = try? SnapshotFile(bytes), file.inCreationOrder
            else { return nil }
            kept = VerifiedSnapshot(version: version, identity: inner.identityVersion, file: file)
        }
        guard var kept, !kept.damaged else { return nil }
        if whole && kept.head == nil {
            guard (try? kept.file.checkAll(mappingIn: true)) != nil, let head = try? StateCodec.head(of: kept.file.body) else {
                kept.damaged = true
                inner.verifiedSnapshot = kept
                return nil
            }
            kept.head = head
        }
        return kept
    }
}

/// A snapshot file read and checked as far as needed, with the state of the log after it,
/// kept so that a process looking up several tasks (`done ID`: before, the write, after)
/// opens the file once, checks each block once, and then reads only what the logs gained.
///
/// Invariants: a snapshot file is never changed in place, only replaced by a rename or
/// removed, and either gives it another inode or change time (``FileVersion``), so the same
/// version is the same bytes. The logs only grow, except when a fork is resolved, which
/// rewrites the identity file: the state after the snapshot is kept for one identity only.
struct VerifiedSnapshot {
    let version: FileVersion
    let identity: FileVersion?
    let file: SnapshotFile
    /// The whole head of the body, once every block is checked (for a listing).
    var head: StateCodec.Head?
    /// A lookup found a block damaged: the state is read instead.
    var damaged = false
    /// The operations after the snapshot read so far, the tails' marks, and how many.
    var after: TaskState?
    var marks: [ReplicaID: TailMark] = [:]
    var applied: UInt64 = 0
}
