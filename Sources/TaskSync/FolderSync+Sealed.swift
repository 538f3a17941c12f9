#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// The parts of an exchange that differ for an encrypted folder (Spec/encryption.md).
extension FolderSync {
    /// A listed segment file's checked segment (opened from its envelope in an encrypted
    /// folder); nil if it is gone.
    func readFile(_ entry: Entry) throws -> (bytes: [UInt8], replica: ReplicaID, first: UInt64, last: UInt64)? {
        guard let seal else { return try FolderFiles.readSegment(in: folder, entry.relative, operations: entry.name.operations) }
        return try seal.readSegment(in: folder, entry.relative, writer: entry.writer, operations: entry.name.operations)
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
            guard let reason = staleness(entry.path, current: seal.keyring.epoch) else {
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
        if entries.contains(where: { head($0.path).map { SealedEnvelope.looksSealed($0[...]) } ?? false }) {
            throw .encryption(.keyFilesMissing(folder: folder))
        }
    }

    /// Removes this replica's stale files whose operations the store holds (and so were just
    /// published under the newest epoch). A file already replaced by its new copy stays.
    func removeStale(_ files: [Entry], from namespace: OwnNamespace) throws {
        guard let seal, !files.isEmpty else { return }
        let version = try store.version
        for file in files where version[file.name.origin] >= file.name.last && staleness(file.path, current: seal.keyring.epoch) != nil {
            namespace.remove(file.name.fileName)
        }
        namespace.sync()
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
                guard let bytes = try? FolderFiles.readWhole(in: folder, e.relative, largest: largest, operations: e.name.operations),
                    (try? seal.open(bytes, namespace: e.writer)) != nil
                else { continue }
                try? Posix.makeDirectories(dir)
                try? Posix.writeAtomically(Posix.join(dir, String(e.relative.map { $0 == "/" ? "_" : $0 })), bytes)
            }
        }
    }

    /// Why a file is stale (plaintext, or sealed under an older epoch); nil if it is not.
    private func staleness(_ path: String, current: UInt32) -> SealError? {
        guard let head = head(path) else { return nil }
        guard SealedEnvelope.looksSealed(head[...]) else { return .plaintextInEncryptedFolder }
        let epoch = head[8..<12].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return epoch < current ? .staleEpoch(epoch, current: current) : nil
    }

    /// The first twelve bytes of a regular file (an envelope's magic to its epoch), or its
    /// first four when they are no envelope's magic; nil if it is shorter.
    private func head(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 12)
        let n = pread(fd, &head, 12, 0)
        if n >= 4, !SealedEnvelope.looksSealed(head[..<4]) { return Array(head[..<4]) }
        return n == 12 ? head : nil
    }
}
