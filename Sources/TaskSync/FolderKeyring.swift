#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// The keys of one encrypted folder, as a store holds them (Spec/encryption.md, "Keys"):
/// every epoch's key it knows, remembered in `<store>/folder-keys/<folder id>` (mode 0600), so
/// later syncs need no passphrase. One device encrypts the folder; the others unlock it:
///
/// ```swift
/// let passphrase = Array("correct horse battery staple".utf8)
/// let phone = try TaskStore.open(at: phonePath)
/// _ = try phone.add(NewTask(title: "Call Mum"))
/// let keyring = try FolderKeyring.encrypt(folder: shared, store: phone, passphrase: passphrase)
/// _ = try FolderSync(store: phone, folder: shared, keyring: keyring).sync()
///
/// let laptop = try TaskStore.open(at: laptopPath)
/// let joined = try FolderKeyring.unlock(folder: shared, store: laptop, passphrase: passphrase)
/// _ = try FolderSync(store: laptop, folder: shared, keyring: joined).sync()
/// print(try laptop.tasks(TaskQuery(status: .all)).map(\.title))
/// ```
public struct FolderKeyring: Sendable {
    /// The folder's random id, from its first epoch file.
    public let folderID: [UInt8]
    /// The newest epoch: what this store seals with.
    public let epoch: UInt32
    /// Each known epoch's key.
    let keys: [UInt32: [UInt8]]

    /// The segment key of `epoch`, if this keyring knows it.
    func segmentKey(_ epoch: UInt32) -> [UInt8]? {
        keys[epoch].map { Sodium.subkey($0, id: EpochFile.Subkey.segments.rawValue) }
    }

    /// The folder's keyring, or nil when the folder is not encrypted. Keys the store remembers
    /// come first; a passphrase is needed only for an epoch it does not know, and what it opens
    /// is remembered.
    /// - Throws: ``EncryptionError`` when the folder needs a passphrase that was not given, the
    ///   passphrase is wrong or old, or a file is unreadable.
    public static func unlock(folder: String, store: TaskStore, passphrase: [UInt8]? = nil) throws(EncryptionError) -> FolderKeyring? {
        try unlock(storage: LocalFolderStorage(folder: folder), store: store, passphrase: passphrase)
    }

    /// The keyring this store remembers for the folder in `storage`, found without a request;
    /// nil when it knows the folder as plaintext, or not at all. A sync with it still checks
    /// the folder's epoch files at every listing, so a rekey or lost key files are noticed.
    @_spi(Engine) public static func remembered(for storage: any FolderStorage, store: TaskStore) throws(EncryptionError) -> FolderKeyring? {
        guard let record = FolderSync.record(of: storage.location, in: store), let id = record.folderID, let epoch = record.epoch else {
            return nil
        }
        let keys = try remembered(store: store.path, folderID: id)
        guard keys[epoch] != nil else { return nil }
        return FolderKeyring(folderID: id, epoch: epoch, keys: keys)
    }

    /// The keyring of the folder in `storage`, as ``unlock(folder:store:passphrase:)`` gives it.
    @_spi(Engine) public static func unlock(
        storage: any FolderStorage, store: TaskStore, passphrase: [UInt8]? = nil
    ) throws(EncryptionError) -> FolderKeyring? {
        let folder = storage.location
        let epochs = try EpochFiles.read(storage)
        let record = FolderSync.record(of: folder, in: store)
        guard let first = epochs.first else {
            if record?.isEncrypted == true { throw .keyFilesMissing(folder: folder) }
            return nil
        }
        if let id = record?.folderID, id != first.folderID { throw .keyFilesMissing(folder: folder) }
        var keys = try remembered(store: store.path, folderID: first.folderID)
        // A remembered epoch's file must still be there: deleting the newest must not undo a rekey.
        if let known = keys.keys.max(), !epochs.contains(where: { $0.epoch == known && $0.isKey(keys[known]!) }) {
            throw .keyFilesMissing(folder: folder)
        }
        var newest = EpochFiles.newestAccepted(epochs, keys: keys)
        if newest == nil || EpochFiles.hasEndorsedSuccessor(of: newest!, in: epochs, keys: keys) {
            let known = newest
            guard let passphrase = passphrase.flatMap({ $0.isEmpty ? nil : $0 }) else {
                if let known { throw .rekeyed(folder: folder, known: known) }
                throw .passphraseNeeded(folder: folder)
            }
            // A store that knows an epoch tries only those after it: a passphrase that opens none
            // of them is an old one, or wrong.
            guard let opened = try open(epochs, from: (known ?? 0) + 1, passphrase: passphrase) else {
                if let known { throw .rekeyed(folder: folder, known: known) }
                throw .wrongPassphrase(folder: folder)
            }
            keys.merge(opened) { a, _ in a }
            newest = EpochFiles.newestAccepted(epochs, keys: keys)
            guard let newest, !EpochFiles.hasEndorsedSuccessor(of: newest, in: epochs, keys: keys) else {
                throw .rekeyed(folder: folder, known: opened.keys.max() ?? 0)
            }
            try remember(keys, store: store.path, folderID: first.folderID)
        }
        return FolderKeyring(folderID: first.folderID, epoch: newest!, keys: keys)
    }

    /// Turns a plaintext folder into an encrypted one under `passphrase`, or joins it if it
    /// is encrypted already (another device won the race, or it was encrypted before).
    public static func encrypt(
        folder: String, store: TaskStore, passphrase: [UInt8], cost: KeyCost = .interactive
    ) throws(EncryptionError) -> FolderKeyring {
        try encrypt(storage: LocalFolderStorage(folder: folder), store: store, passphrase: passphrase, cost: cost)
    }

    /// Encrypts the folder in `storage`, as ``encrypt(folder:store:passphrase:cost:)`` does.
    @_spi(Engine) public static func encrypt(
        storage: any FolderStorage, store: TaskStore, passphrase: [UInt8], cost: KeyCost = .interactive
    ) throws(EncryptionError) -> FolderKeyring {
        let folder = storage.location
        guard !passphrase.isEmpty else { throw .passphraseNeeded(folder: folder) }
        if try EpochFiles.read(storage).isEmpty {
            let folderID = Sodium.random(16)
            let salt = Sodium.random(16)
            guard let key = Sodium.argon2id(passphrase, salt: salt, opsLimit: cost.opsLimit, memLimit: cost.memLimit)
            else { throw .keyDerivationFailed(memLimit: cost.memLimit) }
            let file = EpochFile.make(folderID: folderID, epoch: 1, cost: cost, salt: salt, key: key, previousKey: nil)
            if try EpochFiles.create(file, in: storage) { try remember([1: key], store: store.path, folderID: folderID) }
        }
        guard let keyring = try unlock(storage: storage, store: store, passphrase: passphrase) else {
            throw .epochFileInvalid(Posix.join(folder, EpochFile.name(1)))
        }
        return keyring
    }

    /// Starts a new epoch under `passphrase`. What is sealed from now on needs it (or a store
    /// that remembers the new key); every earlier epoch's key is sealed inside the new epoch
    /// file, so the new passphrase also reads what came before.
    public func rekey(folder: String, store: TaskStore, passphrase: [UInt8], cost: KeyCost = .interactive) throws(EncryptionError) -> FolderKeyring {
        try rekey(storage: LocalFolderStorage(folder: folder), store: store, passphrase: passphrase, cost: cost)
    }

    /// Starts a new epoch of the folder in `storage`, as ``rekey(folder:store:passphrase:cost:)`` does.
    @_spi(Engine) public func rekey(
        storage: any FolderStorage, store: TaskStore, passphrase: [UInt8], cost: KeyCost = .interactive
    ) throws(EncryptionError) -> FolderKeyring {
        let folder = storage.location
        guard !passphrase.isEmpty else { throw .passphraseNeeded(folder: folder) }
        guard epoch < UInt32.max else { throw .epochFileInvalid(Posix.join(folder, EpochFile.name(epoch))) }
        // Readers try no epoch costlier than the first (Spec/encryption.md, "Unlocking").
        if let first = try EpochFiles.read(storage).first, !cost.isAtMost(first.cost) { throw .costAboveFirstEpoch(folder: folder) }
        let salt = Sodium.random(16)
        guard let key = Sodium.argon2id(passphrase, salt: salt, opsLimit: cost.opsLimit, memLimit: cost.memLimit)
        else { throw .keyDerivationFailed(memLimit: cost.memLimit) }
        let file = EpochFile.make(folderID: folderID, epoch: epoch + 1, cost: cost, salt: salt, key: key, previousKey: keys[epoch]!)
        guard try EpochFiles.create(file, in: storage) else {
            // Taken: by another device's rekey, or by a file that is no epoch (which blocks rekeying).
            let taken = try EpochFiles.read(storage).first { $0.epoch == epoch + 1 }
            if taken?.isEndorsed(by: keys[epoch]!) == true { throw .rekeyRace(folder: folder) }
            throw .epochFileInvalid(Posix.join(folder, EpochFile.name(epoch + 1)))
        }
        var all = keys
        all[epoch + 1] = key
        try Self.remember(all, store: store.path, folderID: folderID)
        return FolderKeyring(folderID: folderID, epoch: epoch + 1, keys: all)
    }

    /// The keys `passphrase` opens, trying the epochs from `start` up (Spec/encryption.md,
    /// "Unlocking"). Only epochs that cost no more than epoch 1 are tried, at most
    /// ``triedEpochs`` of them. The first epoch it opens gives every earlier key through the
    /// chain. Above it only an epoch endorsed by the key below can be real, so only such a one
    /// is tried next: forged epochs cost nothing. Nil when it opens none.
    private static func open(_ epochs: [EpochFile], from start: UInt32, passphrase: [UInt8]) throws(EncryptionError) -> [UInt32: [UInt8]]? {
        guard let anchor = epochs.first?.cost else { return nil }
        var keys: [UInt32: [UInt8]] = [:]
        var lastFailure: EncryptionError?
        var candidates = epochs.filter { $0.epoch >= start && $0.cost.isAtMost(anchor) }.prefix(triedEpochs)
        while let file = candidates.popFirst() {
            let key: [UInt8]
            do { key = try file.derive(passphrase) } catch {
                lastFailure = error
                continue
            }
            guard file.isKey(key) else { continue }
            keys[file.epoch] = key
            var current = (file: file, key: key)
            while let previousKey = current.file.previousKey(under: current.key),
                let before = epochs.first(where: { $0.epoch == current.file.epoch - 1 }), before.isKey(previousKey)
            {
                keys[before.epoch] = previousKey
                current = (before, previousKey)
            }
            let next = epochs.first { $0.epoch == file.epoch + 1 && $0.isEndorsed(by: key) && $0.cost.isAtMost(anchor) }
            candidates = next.map { [$0][...] } ?? []
        }
        if keys.isEmpty, let lastFailure { throw lastFailure }
        return keys.isEmpty ? nil : keys
    }

    /// How many epochs, oldest first, a passphrase is tried against.
    static let triedEpochs = 16

    static func memoryPath(store: String, folderID: [UInt8]) -> String {
        Posix.join(Posix.join(store, "folder-keys"), Sodium.hex(folderID))
    }

    static func remembered(store: String, folderID: [UInt8]) throws(EncryptionError) -> [UInt32: [UInt8]] {
        let path = memoryPath(store: store, folderID: folderID)
        guard let bytes = try? Posix.readFile(path) else { return [:] }
        var keys: [UInt32: [UInt8]] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "epoch", let e = UInt32(parts[1]), let k = Sodium.bytes(hex: parts[2], count: 32)
            else { throw .damagedStoreFile(path) }
            keys[e] = k
        }
        return keys
    }

    private static func remember(_ keys: [UInt32: [UInt8]], store: String, folderID: [UInt8]) throws(EncryptionError) {
        let path = memoryPath(store: store, folderID: folderID)
        let text = keys.sorted { $0.key < $1.key }.map { "epoch \($0.key) \(Sodium.hex($0.value))\n" }.joined()
        do {
            let dir = Posix.directory(of: path)
            if !Posix.isDirectory(dir) {
                try Posix.makeDirectories(dir)
                chmod(dir, 0o700)
            }
            try Posix.writeAtomically(path, Array(text.utf8))
        } catch {
            throw .storeUnwritable(path, EACCES)
        }
    }
}
