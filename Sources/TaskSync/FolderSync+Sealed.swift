@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// The parts of an exchange that differ for an encrypted folder (Spec/encryption.md).
extension FolderSync {
    /// A listed segment file's checked segment (opened from its envelope in an encrypted
    /// folder); nil if it is gone.
    func readFile(_ entry: Entry) throws -> CheckedSegment? {
        guard let seal else { return try storage.readSegment(entry.relative, operations: entry.name.operations) }
        return try seal.readSegment(in: storage, entry.relative, writer: entry.writer, operations: entry.name.operations)
    }

    /// What is published for a segment: the segment itself, or sealed in an encrypted folder.
    func sealed(_ segment: [UInt8]) -> [UInt8] { seal?.seal(segment) ?? segment }

    /// Takes what the current key cannot vouch for out of an encrypted folder's listing:
    /// plaintext files, and files sealed under an epoch before the newest. They count as
    /// nothing. Other replicas' are noted; this replica's own are kept to be removed once
    /// copies sealed under the newest epoch are out.
    func setAsideStale(_ pass: inout Pass) {
        guard let seal else { return }
        var kept: [Entry] = []
        for entry in pass.entries {
            guard let reason = staleness(entry, current: seal.keyring.epoch) else {
                kept.append(entry)
                continue
            }
            if entry.writer == store.replica {
                pass.ownStale.append(entry)
            } else {
                pass.report.skipped.append((entry.path, reason.description))
            }
        }
        pass.entries = kept
    }

    /// A plaintext sync must not meet sealed files: the folder is encrypted, and its epoch
    /// files were lost. Publishing plaintext there would undo the encryption.
    func refuseSealed(_ entries: [Entry]) throws(SyncError) {
        if entries.contains(where: { head($0).map { SealedEnvelope.looksSealed($0[...]) } ?? false }) {
            throw .encryption(.keyFilesMissing(folder: folder))
        }
    }

    /// Removes this replica's stale files whose operations the store holds (and so were just
    /// published under the newest epoch). A file already replaced by its new copy (published
    /// under the same name in this exchange) stays.
    func removeStale(_ pass: inout Pass) throws {
        guard seal != nil, !pass.ownStale.isEmpty else { return }
        let version = try store.version
        let done = pass.ownStale.filter { version[$0.name.origin] >= $0.name.last && !pass.published.contains($0.relative) }
        try storage.remove(done.map(\.relative))
        pass.removed.formUnion(done.map(\.relative))
    }

    /// Keeps the proof of each fork met in an encrypted folder: every sealed file of the forked
    /// replica that covers the fork point and passes every check, copied verbatim into
    /// `<store>/fork-proofs/<replica>-<seq>/`. Two such files that differ, signed by the key
    /// pinned for their writer, show who wrote both branches.
    func keepForkProofs(_ forks: [ResolvedFork], _ entries: [Entry]) {
        guard let seal, !forks.isEmpty else { return }
        for fork in forks {
            let dir = Posix.join(Posix.join(store.path, "fork-proofs"), "\(fork.replica.hex)-\(fork.seq)")
            for e in entries where e.name.origin == fork.replica && e.name.first <= fork.seq && e.name.last >= fork.seq {
                let largest = FolderSeal.largestSealed(FolderFiles.largestSegment(operations: e.name.operations))
                guard let bytes = try? storage.read(e.relative, largest: largest),
                    (try? seal.open(bytes, namespace: e.writer)) != nil
                else { continue }
                try? Posix.makeDirectories(dir)
                try? Posix.writeAtomically(Posix.join(dir, String(e.relative.map { $0 == "/" ? "_" : $0 })), bytes)
            }
        }
    }

    /// Why a file is stale (plaintext, or sealed under an older epoch); nil if it is not.
    private func staleness(_ entry: Entry, current: UInt32) -> SealError? {
        guard let head = head(entry) else { return nil }
        guard SealedEnvelope.looksSealed(head[...]) else { return .plaintextInEncryptedFolder }
        let epoch = head[8..<12].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return epoch < current ? .staleEpoch(epoch, current: current) : nil
    }

    /// The first twelve bytes of a listed file (an envelope's magic to its epoch), or its
    /// first four when they are no envelope's magic; nil if it is shorter or cannot be read.
    /// A file's first bytes never change, so they are read once per identity.
    private func head(_ entry: Entry) -> [UInt8]? {
        let key = FolderMemory.key(entry.relative, entry.identity)
        var read = key.flatMap(memory.head)
        if read == nil {
            read = try? storage.readPrefix(entry.relative, count: 12)
            if let key, let read { memory.noteHead(key, read) }
        }
        guard let read else { return nil }
        if read.count >= 4, !SealedEnvelope.looksSealed(read[..<4]) { return Array(read[..<4]) }
        return read.count == 12 ? read : nil
    }
}
