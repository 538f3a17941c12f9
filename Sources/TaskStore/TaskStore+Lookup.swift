@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Looking up a few tasks by id or id prefix in the snapshot, through its task index, merged
/// with the log after it: the blocks read are checked, and nothing else of the snapshot is
/// read, so a command naming one task takes the same time in a store of any size.
extension TaskStore {
    /// The snapshot opened for lookups and the state of the log after it.
    typealias SavedLookup = (file: SnapshotFile, after: TaskState)

    /// The most saved tasks a prefix is resolved among through the index; past it the state
    /// resolves it.
    static let prefixCandidateLimit = 256

    /// Runs `read` on the snapshot opened for lookups. Nil when there is none (the state is
    /// loaded, or the snapshot is missing, of another version, or damaged at its start) or
    /// `read` cannot answer. When `read` finds the snapshot damaged, this store object stops
    /// using it, and nil is returned: the caller reads the state, which loading rebuilds from
    /// the logs with a warning.
    func readingSaved<R>(_ read: (SavedLookup) throws(DecodeError) -> R?) throws(StoreError) -> R? {
        guard let saved = try savedLookup() else { return nil }
        do {
            return try read(saved)
        } catch {
            inner.withLock { inner in
                if inner.verifiedSnapshot?.file === saved.file { inner.verifiedSnapshot?.damaged = true }
            }
            return nil
        }
    }

    /// The tasks among `ids` that the snapshot merged with the log after it holds: the live
    /// ones with their dots and, when `includingDeleted`, the deleted ones ever added (dots
    /// nil). The index lists every saved task, so an id that neither it nor the log names is
    /// unknown. Nil when the snapshot cannot answer so (the state then answers).
    func lookedUp(_ ids: Set<TaskID>, includingDeleted: Bool) throws(StoreError) -> [TaskID: (task: TaskItem, dots: LiveDots?)]? {
        try readingSaved { (saved) throws(DecodeError) in
            guard let index = saved.file.taskIndex else { return nil }
            var offsets: [Int] = []
            for id in ids { if let offset = try index.offset(of: id, in: saved.file) { offsets.append(offset) } }
            return try Self.merged(ids, reading: offsets, saved, includingDeleted: includingDeleted)
        }
    }

    /// The tasks among `ids` that the saved tasks at `offsets` merged with the log after the
    /// snapshot give, as ``lookedUp(_:includingDeleted:)`` gives them.
    private static func merged(
        _ ids: Set<TaskID>, reading offsets: [Int], _ saved: SavedLookup, includingDeleted: Bool
    ) throws(DecodeError) -> [TaskID: (task: TaskItem, dots: LiveDots?)] {
        saved.after.tasks(
            ids, saved: try records(at: offsets, saved), savedTombstones: try savedTombstones(for: ids, saved),
            includingDeleted: includingDeleted)
    }

    /// The saved records of `ids`, with their live dots, found through the task index (an id
    /// it lacks is not saved); nil when the snapshot has no index.
    static func savedRecords(_ ids: Set<TaskID>, _ saved: SavedLookup) throws(DecodeError) -> [TaskID: NamedRecord]? {
        guard let index = saved.file.taskIndex else { return nil }
        var offsets: [Int] = []
        for id in ids { if let offset = try index.offset(of: id, in: saved.file) { offsets.append(offset) } }
        return try records(at: offsets, saved)
    }

    /// The saved tasks at `offsets`, by id.
    private static func records(at offsets: [Int], _ saved: SavedLookup) throws(DecodeError) -> [TaskID: NamedRecord] {
        var read: [TaskID: NamedRecord] = [:]
        for offset in offsets {
            let task = try saved.file.task(at: offset)
            read[task.id] = (task.record, task.live)
        }
        return read
    }

    /// The saved tombstones when merging `ids` needs them: only a task the log after the
    /// snapshot adds to does, and they grow with the store.
    static func savedTombstones(for ids: Set<TaskID>, _ saved: SavedLookup) throws(DecodeError) -> Set<OperationID> {
        saved.after.addsDots(to: ids) && saved.file.head.tombstoneCount > 0 ? try saved.file.tombstones() : []
    }

    /// ``resolve(_:includeDeleted:)`` answered through the snapshot's task index, the exact
    /// error included; nil when it cannot be answered so (the state then answers).
    func resolveSaved(_ text: String, includeDeleted: Bool) throws(StoreError) -> Result<TaskID, StoreError>? {
        try readingSaved { (saved) throws(DecodeError) -> Result<TaskID, StoreError>? in
            guard let index = saved.file.taskIndex else { return nil }
            let admits = { (found: (task: TaskItem, dots: LiveDots?)) in includeDeleted || found.dots != nil }
            if let exact = TaskID(text) {
                let offsets = try index.offset(of: exact, in: saved.file).map { [$0] } ?? []
                if let found = try Self.merged([exact], reading: offsets, saved, includingDeleted: true)[exact], admits(found) {
                    return .success(exact)
                }
            }
            guard text.utf8.count >= 4 else { return .failure(.taskNotFound(text)) }
            let prefix = Array(text.utf8)
            guard let offsets = try index.offsets(withPrefix: prefix, limit: Self.prefixCandidateLimit, in: saved.file) else {
                return nil
            }
            var ids = Set<TaskID>()
            for offset in offsets { ids.insert(try saved.file.taskID(at: offset)) }
            for (id, _) in saved.after.records where id.textStarts(with: prefix) { ids.insert(id) }
            let candidates = try Self.merged(ids, reading: offsets, saved, includingDeleted: true).filter { admits($0.value) }.keys.sorted()
            guard let first = candidates.first else { return .failure(.taskNotFound(text)) }
            guard candidates.count == 1 else { return .failure(.ambiguousID(prefix: text, candidates: candidates.map(\.rawValue))) }
            return .success(first)
        }
    }
}
