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

    /// Takes plaintext files out of an encrypted folder's listing: they count as nothing.
    /// Other replicas' are noted; this replica's own are kept to be removed once sealed
    /// copies of their operations are out.
    func setAsidePlaintext(_ pass: inout Pass) {
        var kept: [Entry] = []
        for entry in pass.entries {
            guard isPlaintext(entry.path) else {
                kept.append(entry)
                continue
            }
            if entry.writer == store.replica {
                pass.ownPlaintext.append(entry)
            } else {
                pass.report.skipped.append((entry.path, SealError.plaintextInEncryptedFolder.description))
            }
        }
        pass.entries = kept
    }

    /// A plaintext sync must not meet sealed files: the folder is encrypted, and its epoch
    /// files were lost. Publishing plaintext there would undo the encryption.
    func refuseSealed(_ entries: [Entry]) throws(SyncError) {
        if entries.contains(where: { isSealed($0.path) }) {
            throw .encryption(.keyFilesMissing(folder: folder))
        }
    }

    /// Removes this replica's plaintext files whose operations the store holds (and so were
    /// just published sealed). A file already replaced by its sealed copy stays.
    func removePlaintext(_ files: [Entry], from namespace: OwnNamespace) throws {
        guard !files.isEmpty else { return }
        let version = try store.version
        for file in files where version[file.name.origin] >= file.name.last && isPlaintext(file.path) {
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

    /// Whether the file at `path` starts like a plaintext segment rather than an envelope.
    private func isPlaintext(_ path: String) -> Bool { magic(path).map { !SealedEnvelope.looksSealed($0[...]) } ?? false }

    private func isSealed(_ path: String) -> Bool { magic(path).map { SealedEnvelope.looksSealed($0[...]) } ?? false }

    /// The first four bytes of a regular file, if it has them.
    private func magic(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 4)
        return pread(fd, &head, 4, 0) == 4 ? head : nil
    }
}
