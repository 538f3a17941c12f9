@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// The idle probe (Spec/sync-folder.md, "Idle syncs"): with a storage that keeps a change
/// marker, a sync that finds the marker as it was before its last full listing, and nothing
/// new in the store, skips the listing and reads nothing else.
extension FolderSync {
    /// The report of a sync that may skip its listing, or nil when it must list.
    /// `now` is in wall-clock milliseconds, which a listing remembered by an earlier process shares.
    func idleReport(marker: String?, now: UInt64) throws(SyncError) -> SyncReport? {
        guard let marker else { return nil }
        let version: VersionVector
        do { version = try store.version } catch { throw .store(error) }
        guard memory.isIdle(marker: marker, version: version, now: now, within: relistAfter) else { return nil }
        var report = SyncReport()
        // The folder held all of this replica's log at the last full listing, and it has not changed.
        report.peerHeldOwnThrough = version[store.replica]
        return report
    }

    /// Remembers this sync's listing for the idle probe when every file it needed was read
    /// and nothing is left unsettled; otherwise forgets the last one, so the next sync lists.
    /// The marker is the one read before listing: this sync's own changes made a new one, so
    /// the next sync lists once more and sees whatever others published meanwhile.
    func noteListing(_ pass: Pass, marker: String?, at start: UInt64) throws(SyncError) {
        guard let marker, pass.failed.isEmpty, !pass.unresolved, pass.report.forks.isEmpty else {
            memory.note(nil)
            return
        }
        do {
            memory.note(FolderMemory.Listing(marker: marker, version: FolderMemory.fingerprint(try store.version), at: start))
        } catch {
            throw .store(error)
        }
    }

    /// Where the store keeps this sync's memory; used only when the storage keeps a marker.
    var memoryFile: String { FolderMemory.path(store: store.path, location: folder) }

    /// Changes the marker after this sync published or removed something. Until that succeeds,
    /// every later sync of this engine tries again first, so others' probes never miss a change.
    func announceChanges() throws(SyncError) {
        memory.owesMark = true
        try storage.markChanged()
        memory.owesMark = false
    }
}
