/// Which of a replica's sealed segments to merge: a decision made from names and sizes alone,
/// so it can be tested without files.
///
/// Size-tiered: the newest segments merge while each older one is at most twice the size of
/// everything newer in the run. A big segment is then rewritten only once enough has piled up
/// after it (amortised O(log n) rewrites per operation).
struct MergePlan: Equatable, Sendable {
    /// The segments to merge into one, in sequence order (at least two).
    var run: [SealedName]

    /// The run to merge among `segments` (in reading order), or nil when fewer than two qualify.
    /// Sizes are asked for only from the newest segment back to where the run stops.
    /// - Parameters:
    ///   - target: the run's total size stays under this many bytes (a run of one may pass it).
    ///   - everything: merge every adjacent segment up to the target, ignoring the tiers
    ///     (compaction).
    ///   - barrier: never join segments ending at or before this sequence number to later ones
    ///     (what peers were last sent stays a segment of its own).
    static func choose(
        from segments: [SealedName], size: (SealedName) -> Int, target: Int, everything: Bool,
        keepingApartAt barrier: UInt64?
    ) -> MergePlan? {
        var run: [SealedName] = []
        var total = 0
        for s in segments.reversed() {
            let bytes = size(s)
            if total + bytes > target && !run.isEmpty { break }
            if let first = run.first, s.last + 1 != first.first { break }
            if !everything && !run.isEmpty && bytes > 2 * total { break }
            if let barrier, s.last <= barrier, let earliest = run.first, earliest.first > barrier { break }
            run.insert(s, at: 0)
            total += bytes
        }
        return run.count >= 2 ? MergePlan(run: run) : nil
    }

    /// The segments another one fully covers (leftovers of an interrupted merge), given the
    /// segments in reading order. A segment counts as covering only if `readsCleanly` says so.
    static func covered(
        in segments: [SealedName], readsCleanly: (SealedName) throws(StoreError) -> Bool
    ) throws(StoreError) -> [SealedName] {
        var kept: [SealedName] = []
        var found: [SealedName] = []
        for s in segments {
            if let k = kept.last, s.last <= k.last, try readsCleanly(k) {
                found.append(s)
            } else {
                kept.append(s)
            }
        }
        return found
    }
}
