@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Exchanges log segments between a store and a shared folder that something else copies
/// between devices (Spec/sync-folder.md).
public struct FolderSync: Sendable {
    public let store: TaskStore
    /// Where the folder's files live.
    @_spi(Engine) public let storage: any FolderStorage
    /// Merge this replica's published files for one origin once it has this many.
    public var mergeThreshold = 8
    /// With a storage that keeps a change marker, how long an idle sync may go on trusting
    /// the last full listing (Spec/sync-folder.md, "Idle syncs").
    public var relistAfter: Duration = .seconds(180)
    /// Files already compared with the store, first bytes read, and the last full listing;
    /// kept in the store too when the storage keeps a change marker.
    let memory = FolderMemory()

    /// Seals and checks files when the folder is encrypted.
    let seal: FolderSeal?

    /// Where the folder is: its path, or its storage's location.
    public var folder: String { storage.location }

    /// A sync with a plaintext folder on this machine.
    public init(store: TaskStore, folder: String) {
        self.init(store: store, storage: LocalFolderStorage(folder: folder))
    }

    /// A sync with a plaintext folder in `storage`.
    @_spi(Engine) public init(store: TaskStore, storage: any FolderStorage) {
        self.store = store
        self.storage = storage
        seal = nil
    }

    /// A sync with a folder on this machine encrypted under `keyring` (plaintext when it is nil).
    /// - Throws: when this device's signing key or signer pins cannot be read or made.
    public init(store: TaskStore, folder: String, keyring: FolderKeyring?) throws(EncryptionError) {
        try self.init(store: store, storage: LocalFolderStorage(folder: folder), keyring: keyring)
    }

    /// A sync with a folder in `storage` encrypted under `keyring` (plaintext when it is nil).
    /// - Throws: when this device's signing key or signer pins cannot be read or made.
    @_spi(Engine) public init(store: TaskStore, storage: any FolderStorage, keyring: FolderKeyring?) throws(EncryptionError) {
        self.store = store
        self.storage = storage
        seal = try keyring.map { k throws(EncryptionError) in try FolderSeal(keyring: k, store: store) }
    }

    /// One full exchange in both directions: import every valid segment the folder holds that
    /// the store lacks, then publish (and relay) what the folder lacks. With a storage that
    /// keeps a change marker, a sync that finds nothing changed lists nothing (``relistAfter``).
    public func sync() throws(SyncError) -> SyncReport {
        // Kept in the store for storages with a marker, so each process need not list again.
        memory.loadOnce(from: memoryFile, location: folder)
        defer { memory.saveIfChanged(to: memoryFile, location: folder) }
        if memory.owesMark { try announceChanges() }
        let marker = try storage.changeMarker()
        let started = Posix.wallClockMilliseconds()
        if let idle = try idleReport(marker: marker, now: started) { return idle }
        let objects = try storage.list()
        // Only once the folder answered a listing: a sync refused before it writes nothing.
        if marker != nil { memory.persist() }
        // The folder's epochs, checked at every exchange: a folder encrypted or rekeyed since
        // this engine was made must not get files it cannot read, or sealed under an old key.
        let epochs: [EpochFile]
        do { epochs = try EpochFiles.read(storage, listing: objects) } catch { throw .encryption(error) }
        if let seal {
            let keyring = seal.keyring
            guard epochs.contains(where: { $0.epoch == keyring.epoch && $0.isKey(keyring.keys[keyring.epoch]!) }) else {
                throw .encryption(.keyFilesMissing(folder: folder))
            }
            if EpochFiles.hasEndorsedSuccessor(of: keyring.epoch, in: epochs, keys: keyring.keys) {
                throw .encryption(.rekeyed(folder: folder, known: keyring.epoch))
            }
        } else if !epochs.isEmpty {
            throw .encryption(.passphraseNeeded(folder: folder))
        } else if Self.record(of: folder, in: store)?.isEncrypted == true {
            throw .encryption(.keyFilesMissing(folder: folder))
        }
        do {
            let pass = try exchange(objects)
            noteSynced()
            try noteListing(pass, marker: marker, at: started)
            return pass.report
        } catch let e as SyncError {
            memory.note(nil)
            throw e
        } catch let e as StoreError {
            memory.note(nil)
            throw .store(e)
        } catch {
            memory.note(nil)
            throw .store(.invalidArgument("\(error)"))
        }
    }

    /// What one exchange has seen so far: the files listed, those that failed, the report.
    struct Pass {
        var report = SyncReport()
        var entries: [Entry] = []
        var failed = Set<String>()
        /// A fork was met that could not be settled: this namespace is then left as it is.
        var unresolved = false
        /// This replica's plaintext or old-epoch files in an encrypted folder: removed once
        /// copies sealed under the newest epoch are out.
        var ownStale: [Entry] = []
        /// Every segment file of the first listing, stale ones too (tidy looks at its own).
        var listed: [Entry] = []
        /// Keys this exchange published, and removed.
        var published = Set<String>()
        var removed = Set<String>()
    }

    private func exchange(_ objects: [StoredObject]) throws -> Pass {
        var pass = Pass()
        pass.entries = scan(objects, &pass.report)
        pass.listed = pass.entries
        memory.keep(only: Set(pass.entries.compactMap { FolderMemory.key($0.relative, $0.identity) }))
        if seal != nil { setAsideStale(&pass) } else { try refuseSealed(pass.entries) }
        // Only after every check that may refuse the sync: a refused sync changes nothing.
        try store.seal()
        do {
            try probeForks(&pass)
            try importMissing(&pass)
            if !pass.report.forks.isEmpty {
                keepForkProofs(pass.report.forks, pass.entries)
                try settleForkedFiles(pass.report.forks, &pass)
            }
            try publishMissing(&pass)
        } catch {
            // Others' idle probes must still see what was published before the failure.
            if !pass.published.isEmpty || !pass.removed.isEmpty { try? announceChanges() }
            throw error
        }
        if !pass.published.isEmpty || !pass.removed.isEmpty { try announceChanges() }
        return pass
    }

    /// Forks: a copy of a replica's store (a copied folder, a restored backup) that kept
    /// writing shows up as files of that replica that differ from what this store holds,
    /// possibly inside what it already holds. The furthest such file of each namespace is
    /// compared before importing (Spec/sync-folder.md, "Forks"), this replica's own first.
    private func probeForks(_ pass: inout Pass) throws {
        let version = try store.version
        let probes = Dictionary(grouping: pass.entries.filter { $0.name.last <= version[$0.name.origin] }) {
            "\($0.writer.hex)/\($0.name.origin.hex)"
        }.values.compactMap { $0.max(by: { $0.name.last < $1.name.last }) }
        let ownFirst = { (e: Entry) in (e.name.origin == store.replica ? 0 : 1, e.path) }
        for probe in probes.sorted(by: { ownFirst($0) < ownFirst($1) }) {
            let key = FolderMemory.key(probe.relative, probe.identity)
            if let key, memory.isAgreed(key) { continue }
            guard let bytes = readChecked(probe, failed: &pass.failed, report: &pass.report) else { continue }
            let forksBefore = pass.report.forks.count
            if importing(bytes, of: probe, among: pass.entries, failed: &pass.failed, report: &pass.report, unresolved: &pass.unresolved),
                pass.report.forks.count == forksBefore, let key
            {
                memory.noteAgreed(key)
            }
        }
    }

    /// Imports what the folder holds that the store lacks: this replica's own operations
    /// first (a store restored from a backup must not reuse sequence numbers), then
    /// everyone else's, each origin's furthest-reaching usable file at a time.
    private func importMissing(_ pass: inout Pass) throws {
        var rescanned = false
        var version = try store.version
        let origins = Set(pass.entries.map(\.name.origin)).sorted { a, b in
            a == store.replica ? b != store.replica : b == store.replica ? false : a < b
        }
        for origin in origins {
            while true {
                let have = version[origin]
                let candidates = pass.entries.filter {
                    $0.name.origin == origin && $0.name.first <= have + 1 && $0.name.last > have && !pass.failed.contains($0.path)
                }
                guard let pick = candidates.max(by: { $0.name.last != $1.name.last ? $0.name.last < $1.name.last : $0.size > $1.size }) else { break }
                let fetched = fetch(pick, failed: &pass.failed, report: &pass.report)
                if case .gone = fetched {
                    // Removed between listing and reading (its writer merged it): list again once.
                    if !rescanned {
                        rescanned = true
                        var ignored = SyncReport()
                        pass.entries = try scan(&ignored)
                    }
                    continue
                }
                guard case .bytes(let bytes) = fetched,
                    importing(bytes, of: pick, among: pass.entries, failed: &pass.failed, report: &pass.report, unresolved: &pass.unresolved)
                else { continue }
                version = try store.version
                version[origin] = max(version[origin], pick.name.last)
            }
        }
    }

    /// Publishes whatever this store holds that the folder lacks, its own and relayed, then
    /// merges this replica's small files.
    private func publishMissing(_ pass: inout Pass) throws {
        var covered = VersionVector()
        for origin in Set(pass.entries.map(\.name.origin)) {
            var upTo: UInt64 = 0
            let ranges = pass.entries.filter { $0.name.origin == origin && !pass.failed.contains($0.path) }
                .map { ($0.name.first, $0.name.last) }.sorted { $0.0 < $1.0 }
            for (f, l) in ranges where f <= upTo + 1 { upTo = max(upTo, l) }
            covered[origin] = upTo
        }
        pass.report.peerHeldOwnThrough = covered[store.replica]
        let namespace = SharedFolder.namespace(of: store.replica)
        try storage.prepare(namespace: namespace)
        for (origin, held) in try store.version.sortedEntries where held > covered[origin] {
            let commits = try store.commitsToSend(of: origin, after: covered[origin])
            guard !commits.isEmpty else { continue }
            let bytes = sealed(SegmentFile.encode(replica: origin, commits: commits))
            let name = SharedFolder.SegmentName(origin: origin, first: commits.first!.firstSeq, last: commits.last!.endSeq - 1)
            try storage.publish(bytes, as: namespace + "/" + name.fileName)
            pass.published.insert(namespace + "/" + name.fileName)
            pass.report.operationsOut += commits.filter { $0.firstSeq > covered[origin] }.reduce(0) { $0 + UInt64($1.operations.count) }
            pass.report.bytesOut += bytes.count
            pass.report.filesOut += 1
        }
        // Peers syncing through the folder now hold this replica's log up to here.
        store.notePeersHold(through: try store.version[store.replica])
        // With an unresolved fork, this namespace may hold the other copy's files: leave them alone.
        guard !pass.unresolved else { return }
        try removeStale(&pass)
        try tidy(namespace, &pass)
    }

    /// Integrates one file as it lies (``TaskStore/integrate(segment:)``: a file wholly new to
    /// the store is decoded while it is applied, and kept as it is). When its commits differ
    /// from those held from their first commit on, the branch is completed from the same
    /// namespace's earlier files (and this store's own operations before them) so the fork can
    /// be settled.
    /// - Returns: whether the file was imported.
    private func importing(
        _ bytes: [UInt8], of entry: Entry, among entries: [Entry], failed: inout Set<String>,
        report: inout SyncReport, unresolved: inout Bool
    ) -> Bool {
        var completed: [Commit]?  // the branch, once completed
        for attempt in 0..<2 {
            do {
                let result = if let completed {
                    try store.integrate(completed, from: entry.name.origin)
                } else {
                    try store.integrate(segment: bytes)
                }
                report.operationsIn += result.operations
                report.note(result.fork.map { fork in
                    var f = fork
                    f.source = entry.path
                    return f
                })
                if result.operations > 0 {
                    report.bytesIn += bytes.count
                    report.filesIn += 1
                }
                return true
            } catch StoreError.forkNeedsEarlierOperations where attempt == 0 {
                guard let commits = try? SegmentFile.decode(bytes).commits,
                    let branch = branch(endingWith: commits, of: entry, among: entries, failed: &failed, report: &report)
                else { break }
                completed = branch
            } catch {
                failed.insert(entry.path)
                report.skipped.append((entry.path, "\(error)"))
                if case StoreError.fork = error { unresolved = true }
                return false
            }
        }
        failed.insert(entry.path)
        unresolved = true
        report.skipped.append((entry.path, "\(StoreError.forkNeedsEarlierOperations(replica: entry.name.origin, seq: entry.name.first))"))
        return false
    }

    /// `commits` preceded by the files of the same namespace and origin that lead up to
    /// them, and this store's own operations before the earliest of those.
    private func branch(
        endingWith commits: [Commit], of entry: Entry, among entries: [Entry], failed: inout Set<String>, report: inout SyncReport
    ) -> [Commit]? {
        var branch = commits
        let siblings = entries.filter { $0.writer == entry.writer && $0.name.origin == entry.name.origin && $0.path != entry.path }
            .sorted { $0.name.first < $1.name.first }
        while branch[0].firstSeq > 1 {
            let start = branch[0].firstSeq
            // A file that overlaps the branch and agrees on the overlap is certainly of it; one
            // that only touches it is taken only if it is the one candidate (after a fork the
            // namespace may hold both branches' files for a while).
            var extended = false
            var touching: [Entry] = []
            for candidate in siblings where candidate.name.first < start && candidate.name.last >= start - 1 {
                if candidate.name.last == start - 1 {
                    touching.append(candidate)
                    continue
                }
                guard let earlier = readSegment(candidate, failed: &failed, report: &report) else { continue }
                let overlap = earlier.filter { $0.firstSeq >= start }
                guard !overlap.isEmpty, Array(branch.prefix(overlap.count)) == overlap else { continue }
                branch = earlier.filter { $0.firstSeq < start } + branch
                extended = true
                break
            }
            if !extended {
                guard touching.count == 1, let earlier = readSegment(touching[0], failed: &failed, report: &report) else { break }
                branch = earlier + branch
            }
        }
        if branch[0].firstSeq > 1 {
            guard let held = try? store.commits(of: entry.name.origin, after: 0).filter({ $0.firstSeq < branch[0].firstSeq }),
                held.last?.endSeq == branch[0].firstSeq
            else { return nil }
            branch = held + branch
        }
        return branch
    }

    /// After forks were settled, one pass over the forked replicas' files: those whose
    /// contents differ from what this store now holds count nowhere as published (so the
    /// branch that kept the id is published whole if need be), and those of the moved branch
    /// are removed from the namespaces this replica writes: its own, and the forked replica's
    /// if this store was one of its copies. A file is removed only when its operations are
    /// held here (under either id): it may be the only copy of them.
    private func settleForkedFiles(_ forks: [ResolvedFork], _ pass: inout Pass) throws {
        let me = store.replica
        for fork in forks {
            let held = try store.commits(of: fork.replica, after: 0)
            let heldEnd = held.last.map { $0.endSeq - 1 } ?? 0
            let moved = Set(try store.commits(of: fork.movedTo, after: 0))
            let writable: Set<ReplicaID> = fork.replica == me || fork.movedTo == me ? [me, fork.replica] : [me]
            // In sequence order, so a moved branch's files are taken into it one after another.
            for e in pass.entries.filter({ $0.name.origin == fork.replica }).sorted(by: { $0.name.first < $1.name.first }) {
                let theirs = (try? readFile(e))
                    .flatMap { try? SegmentFile.decode($0.bytes).commits }
                if e.name.first <= heldEnd {
                    // Only the part the store holds is compared: past it, the file continues the
                    // kept branch (to be imported) if it agrees up to there.
                    let mine = held.filter { $0.firstSeq >= e.name.first && $0.endSeq - 1 <= e.name.last }
                    guard theirs?.filter({ $0.endSeq - 1 <= heldEnd }) != mine else { continue }
                    pass.failed.insert(e.path)
                } else if theirs == nil {
                    continue
                }
                // The file is (or may be) of the moved branch. It goes only once its operations
                // past the fork point are held under the moved id: already, or because the held
                // branch kept the id, so the file continues the other copy's branch, which is
                // taken into the moved id now (files in sequence order). Otherwise it may carry
                // the only copy of some operations, and stays.
                guard let theirs, writable.contains(e.writer), try holdsMoved(theirs, of: fork, moved) else { continue }
                pass.failed.insert(e.path)
                try storage.remove([e.relative])
                pass.removed.insert(e.relative)
            }
        }
    }

    /// Whether this store holds, under the fork's moved id, every commit of `commits` from the
    /// fork point on, taking them into it first when the held branch kept the id.
    private func holdsMoved(_ commits: [Commit], of fork: ResolvedFork, _ moved: Set<Commit>) throws -> Bool {
        let rehomed = ForkRule.rehome(commits.filter { $0.firstSeq >= fork.seq }, of: fork.replica, from: fork.seq, as: fork.movedTo)
        guard !rehomed.isEmpty, commits.allSatisfy({ $0.firstSeq >= fork.seq || $0.endSeq <= fork.seq }) else { return false }
        if moved.isSuperset(of: rehomed) { return true }
        guard fork.keptHeld, (try? store.integrate(rehomed, from: fork.movedTo)) != nil else { return false }
        return try store.version[fork.movedTo] >= rehomed.last!.endSeq - 1
    }

    /// Merges this replica's published files of one origin into one when they pile up. The
    /// merged file is durable before the small ones are removed, so a reader never misses an
    /// operation (at worst it finds a file gone and lists again).
    private func tidy(_ namespace: String, _ pass: inout Pass) throws {
        let listed = pass.listed.filter { $0.relative.hasPrefix(namespace + "/") }.map(\.relative)
        let mine = Set(listed).union(pass.published).subtracting(pass.removed)
            .filter { $0.hasPrefix(namespace + "/") }.compactMap { SharedFolder.SegmentName(fileName: String($0.dropFirst(namespace.count + 1))) }
        for origin in Set(mine.map(\.origin)) {
            let files = mine.filter { $0.origin == origin }.sorted { $0.first < $1.first }
            guard files.count >= mergeThreshold else { continue }
            let first = files.first!.first
            let last = files.map(\.last).max()!
            let commits = try store.commits(of: origin, after: first - 1).filter { $0.endSeq - 1 <= last }
            guard commits.first?.firstSeq == first, commits.last?.endSeq == last + 1 else { continue }
            let merged = SharedFolder.SegmentName(origin: origin, first: first, last: last)
            let mergedKey = namespace + "/" + merged.fileName
            try storage.publish(sealed(SegmentFile.encode(replica: origin, commits: commits)), as: mergedKey)
            pass.published.insert(mergedKey)
            let superseded = files.filter { $0 != merged }.map { namespace + "/" + $0.fileName }
            try storage.remove(superseded)
            pass.removed.formUnion(superseded)
        }
    }
}
