@_spi(Engine) import OpLogFormat
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// Applying a few patches, completions included, reading only the tasks they touch: the tasks
/// they name, and for each completion of a recurring task its next occurrence and the tasks
/// that may already hold it.
extension TaskStore {
    /// The most patches applied by reading only the tasks they touch; more read the state.
    static let mostNamedPatches = 256
    /// The most places a series' text may occur in the saved state for its tasks to be read
    /// one by one; more read the state.
    static let mostSeriesPlaces = 4096

    /// Runs `body` on a state that holds what applying `patches` reads (``apply(_:today:)``,
    /// ``completeAndRecur(_:today:)``): the tasks they name and, for each that completes an
    /// open recurring task, its next occurrence and every task of that series, read through
    /// the snapshot's task index. On the whole state when the index cannot answer (or one of
    /// `required` is unknown to it), or the patches are many.
    func withPatchedState<R>(
        _ patches: [TaskPatch], requiring required: Set<TaskID> = [], today: Int64,
        _ body: (borrowing TaskState) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        let ids = Set(patches.compactMap(\.id))
        guard patches.count <= Self.mostNamedPatches, let named = try namedRecords(ids, requiring: required) else {
            return try withState(body)
        }
        let first = Self.partialState(named)
        var probes = Set<TaskID>()
        for patch in patches {
            guard let (next, fields) = Self.patchedOccurrence(of: patch, in: first, today: today) else { continue }
            guard let series = try seriesCandidates(fields.meta[PlanningKey.series]) else { return try withState(body) }
            probes.insert(next)
            probes.formUnion(series)
        }
        guard !probes.isEmpty else { return try body(first) }
        guard let all = try namedRecords(ids.union(probes), requiring: required) else { return try withState(body) }
        return try body(Self.partialState(all))
    }

    /// The tasks whose series register may hold `series` (``holdsOccurrence(series:due:in:)``),
    /// found without reading every task: those whose saved bytes hold its text, told by the
    /// task index, and those the log after the snapshot writes it to. Nil when the snapshot
    /// cannot tell, or the text occurs in too many places.
    private func seriesCandidates(_ series: String?) throws(StoreError) -> Set<TaskID>? {
        guard let series else { return [] }
        guard !series.isEmpty, let listing = try savedListing() else { return nil }
        let places = listing.saved.withUnsafeBytes { Self.positions(of: Array(series.utf8), in: $0, upTo: Self.mostSeriesPlaces + 1) }
        guard places.count <= Self.mostSeriesPlaces else { return nil }
        let saved = try readingSaved { (saved) throws(DecodeError) -> [TaskID]? in
            guard let index = saved.file.taskIndex else { return nil }
            var ids: [TaskID] = []
            for start in Set(try index.starts(enclosing: places).compactMap { $0 }) { ids.append(try saved.file.taskID(at: start)) }
            return ids
        }
        guard let saved else { return nil }
        var found = Set(saved)
        for (id, record) in listing.after.records where record.meta[PlanningKey.series]?.value == series { found.insert(id) }
        return found
    }
}
