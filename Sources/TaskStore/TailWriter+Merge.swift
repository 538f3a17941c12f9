@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// Merging: runs of small sealed segments become one (Spec/log-format.md, "Merge"). The run
/// is chosen by ``MergePlan``; only a segment that reads cleanly is ever merged or trusted.
extension TailWriter {
    /// Merges the newest run of this replica's sealed segments whose total size stays under
    /// the merge target, and removes segments another one fully covers.
    mutating func mergeSealed(mergeEverything: Bool = false) throws(StoreError) {
        try removeCoveredSegments()
        if let prepared = try Self.prepareMerge(
            layout: layout, replica: replica, files: files, target: mergeTarget, everything: mergeEverything,
            keepingApartAt: mergeEverything ? nil : sharedThrough)
        {
            _ = try completeMerge(prepared)
        }
    }

    /// Leftovers of an interrupted merge: a segment inside another one's range, removed only
    /// when that other one reads cleanly.
    func removeCoveredSegments() throws(StoreError) {
        let dir = layout.logDirectory(replica)
        let covered = try MergePlan.covered(in: try Self.sealedSegments(in: dir, files)) { (k) throws(StoreError) in
            guard let bytes = try files.read(Posix.join(dir, k.fileName)) else { return false }
            return Self.cleanCommits(bytes, k) != nil
        }
        for s in covered { files.remove(Posix.join(dir, s.fileName)) }
    }

    /// The commits of a sealed segment if it reads completely and matches its name.
    private static func cleanCommits(_ bytes: [UInt8], _ name: SealedName) -> [Commit]? {
        guard let c = try? SegmentCodec.read(bytes), c.damage == nil,
            c.commits.first?.firstSeq == name.first, c.commits.last.map({ $0.endSeq - 1 }) == name.last
        else { return nil }
        return c.commits
    }

    /// The sealed segments in a replica folder, in reading order.
    private static func sealedSegments(in dir: String, _ files: any LogFileSystem) throws(StoreError) -> [SealedName] {
        try files.list(dir).compactMap(SealedName.init(fileName:)).sorted(by: SealedName.readingOrder)
    }

    /// A merge worked out by ``prepareMerge(layout:replica:files:target:everything:keepingApartAt:)``.
    struct PreparedMerge: Sendable {
        var plan: MergePlan
        /// The merged segment, written and synced beside its final name.
        var segmentFile: String
    }

    /// Picks the run of segments to merge and encodes their commits as one segment. Takes no
    /// lock (sealed segments never change); nil if there is nothing to merge or a segment of
    /// the run does not read cleanly (never merge around damage).
    static func prepareMerge(
        layout: StoreLayout, replica: ReplicaID, files: any LogFileSystem, target: Int, everything: Bool,
        keepingApartAt barrier: UInt64?
    ) throws(StoreError) -> PreparedMerge? {
        let dir = layout.logDirectory(replica)
        guard let plan = MergePlan.choose(
            from: try sealedSegments(in: dir, files), size: { files.size(Posix.join(dir, $0.fileName)) ?? 0 }, target: target,
            everything: everything, keepingApartAt: barrier)
        else { return nil }
        var commits: [Commit] = []
        for s in plan.run {
            guard let bytes = try files.read(Posix.join(dir, s.fileName)), let c = cleanCommits(bytes, s) else { return nil }
            commits += c
        }
        let file = try files.writeTemporary(
            beside: layout.sealedFile(replica, first: plan.run.first!.first, last: plan.run.last!.last),
            SegmentCodec.sealed(replica, commits))
        return PreparedMerge(plan: plan, segmentFile: file)
    }

    /// Writes a prepared merge (holding the lock) unless a segment of its run is gone (merged
    /// meanwhile by another process); then deletes the run.
    /// - Returns: whether it was written.
    func completeMerge(_ prepared: PreparedMerge) throws(StoreError) -> Bool {
        let dir = layout.logDirectory(replica)
        let run = prepared.plan.run
        guard run.allSatisfy({ files.exists(Posix.join(dir, $0.fileName)) }) else {
            files.remove(prepared.segmentFile)
            return false
        }
        try files.install(prepared.segmentFile, as: layout.sealedFile(replica, first: run.first!.first, last: run.last!.last))
        for s in run { files.remove(Posix.join(dir, s.fileName)) }
        try files.syncFolder(dir)
        return true
    }
}
