@_spi(Engine) import TaskStore

/// The epoch files at the top of a shared folder: read with the shared folder's reader rules
/// (through the storage: no link followed, bounded size), and written once each, never replaced.
enum EpochFiles {
    /// The folder's epochs: its valid epoch files from epoch 1 up to the first gap, all of one
    /// folder id. Files past a gap or that do not parse are left out, as anyone may write there.
    /// - Throws: ``EncryptionError/epochFileInvalid(_:)`` when epoch files exist but no valid epoch 1.
    static func read(_ storage: any FolderStorage) throws(EncryptionError) -> [EpochFile] {
        let listing: [StoredObject]
        do { listing = try storage.list() } catch { throw .folderUnreadable(storage.location) }
        return try read(storage, listing: listing)
    }

    /// The folder's epochs, as ``read(_:)`` gives them, from a listing already made.
    static func read(_ storage: any FolderStorage, listing: [StoredObject]) throws(EncryptionError) -> [EpochFile] {
        var byEpoch: [UInt32: EpochFile] = [:]
        var any = false
        for object in listing {
            guard let epoch = EpochFile.epoch(ofName: object.key) else { continue }
            any = true
            guard object.kind == .file, let bytes = try? storage.read(object.key, largest: EpochFile.largest),
                let text = String(validating: bytes, as: UTF8.self), let file = EpochFile(text: text), file.epoch == epoch
            else { continue }
            byEpoch[epoch] = file
        }
        guard let first = byEpoch[1] else {
            if any { throw .epochFileInvalid(Posix.join(storage.location, EpochFile.name(1))) }
            return []
        }
        var chain = [first]
        while chain.count < Int(UInt32.max), let next = byEpoch[chain.last!.epoch + 1], next.folderID == first.folderID {
            chain.append(next)
        }
        return chain
    }

    /// The newest epoch whose key `keys` holds (checked against its file), if any.
    static func newestAccepted(_ epochs: [EpochFile], keys: [UInt32: [UInt8]]) -> UInt32? {
        epochs.filter { file in keys[file.epoch].map(file.isKey) ?? false }.map(\.epoch).max()
    }

    /// Whether the epoch after `epoch` exists and was started by a holder of `epoch`'s key: the
    /// folder was rekeyed, and the new passphrase is needed. An epoch file that is not endorsed
    /// is ignored (anyone can write into the folder).
    static func hasEndorsedSuccessor(of epoch: UInt32, in epochs: [EpochFile], keys: [UInt32: [UInt8]]) -> Bool {
        guard let key = keys[epoch], let next = epochs.first(where: { $0.epoch == epoch + 1 }) else { return false }
        return next.isEndorsed(by: key)
    }

    /// Writes `file` unless its epoch's file exists. Returns whether this call made it.
    static func create(_ file: EpochFile, in storage: any FolderStorage) throws(EncryptionError) -> Bool {
        do {
            guard try storage.createIfAbsent(Array(file.text.utf8), as: EpochFile.name(file.epoch)) else { return false }
            try storage.markChanged()
            return true
        } catch .folderMissing {
            throw .folderUnreadable(storage.location)
        } catch {
            throw .folderUnwritable(storage.location)
        }
    }
}

/// Why a folder's keys could not be had; each says what to do.
public enum EncryptionError: Error, Equatable, Sendable, CustomStringConvertible {
    case passphraseNeeded(folder: String)
    case wrongPassphrase(folder: String)
    /// The folder has a newer key epoch than this store or passphrase opens.
    case rekeyed(folder: String, known: UInt32)
    case rekeyRace(folder: String)
    case notEncrypted(folder: String)
    /// The folder was encrypted (this store knows it so, or sealed files are in it) but its
    /// key epoch files are gone or were replaced.
    case keyFilesMissing(folder: String)
    case epochFileInvalid(String)
    case keyDerivationFailed(memLimit: Int)
    /// A new epoch would cost more to derive than the folder's first: readers would not try it.
    case costAboveFirstEpoch(folder: String)
    case folderUnreadable(String)
    case folderUnwritable(String)
    case damagedStoreFile(String)
    case storeUnwritable(String, Int32)

    public var description: String {
        switch self {
        case .passphraseNeeded(let f):
            "the folder \(f) is encrypted and this store does not know its key; unlock it with its passphrase (nothing was synced)"
        case .wrongPassphrase(let f):
            "the passphrase does not open the encrypted folder \(f); check it and sync again (nothing was synced)"
        case .rekeyed(let f, let known):
            "the folder \(f) was rekeyed after key epoch \(known); sync with its new passphrase (nothing was synced)"
        case .rekeyRace(let f): "another device started a new key epoch in \(f) at the same time; sync, then rekey again"
        case .notEncrypted(let f): "the folder \(f) is not encrypted, so it has no key to change; encrypt it first"
        case .keyFilesMissing(let f):
            "the encrypted folder \(f) has lost or changed its tasklog-epoch-* files; restore them from another device's copy (nothing was synced)"
        case .epochFileInvalid(let p): "\(p) is not a valid key epoch file; restore it from another device's copy, or remove it (nothing was synced)"
        case .costAboveFirstEpoch(let f):
            "a new key epoch of \(f) may cost at most what its first epoch costs to derive; choose a cost no higher"
        case .keyDerivationFailed(let m): "Argon2id could not get \(m >> 20) MiB of memory to derive the folder key; free some and retry"
        case .folderUnreadable(let f): "cannot read the sync folder \(f); check that it exists and its permissions"
        case .folderUnwritable(let f): "cannot write into the sync folder \(f); check its permissions and free space"
        case .damagedStoreFile(let p): "\(p) is damaged; remove it, and sync again with the passphrase"
        case .storeUnwritable(let p, let e): "cannot write \(p): \(systemErrorText(e)); check the store's permissions and free space"
        }
    }
}
