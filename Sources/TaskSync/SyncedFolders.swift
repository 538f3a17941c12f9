#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// A shared folder a store has synced with, as `tasklog status` shows it.
public struct SyncedFolder: Sendable, Equatable {
    /// The folder's absolute path when it was last synced.
    public var path: String
    /// The key epoch the store seals with, or nil for a plaintext folder.
    public var epoch: UInt32?
    /// The encrypted folder's id (Spec/encryption.md, "Key epochs").
    var folderID: [UInt8]?

    public var isEncrypted: Bool { epoch != nil }
}

extension FolderSync {
    /// The folders `store` has synced with, in the order first synced.
    public static func syncedFolders(of store: TaskStore) -> [SyncedFolder] {
        guard let bytes = try? Posix.readFile(listPath(store)) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let epoch = UInt32(parts[0]) else { return nil }
            return SyncedFolder(path: String(parts[2]), epoch: epoch == 0 ? nil : epoch, folderID: Sodium.bytes(hex: parts[1], count: 16))
        }
    }

    /// What `store` recorded of `folder` when it last synced with it.
    static func record(of folder: String, in store: TaskStore) -> SyncedFolder? {
        let path = absolute(folder)
        return syncedFolders(of: store).first { $0.path == path }
    }

    /// `<store>/folders`: one `<epoch> <folder id or -> <path>` line per folder, epoch 0 for plaintext.
    private static func listPath(_ store: TaskStore) -> String { Posix.join(store.path, "folders") }

    private static func absolute(_ folder: String) -> String {
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        return realpath(folder, &resolved) != nil ? String(cString: resolved) : folder
    }

    /// Records this folder and its epoch, if that changed. A failure to record loses only status.
    func noteSynced() {
        let path = Self.absolute(folder)
        let entry = SyncedFolder(path: path, epoch: seal?.keyring.epoch, folderID: seal?.keyring.folderID)
        var folders = Self.syncedFolders(of: store)
        guard !folders.contains(entry), !path.contains("\n") else { return }
        if let i = folders.firstIndex(where: { $0.path == path }) { folders[i] = entry } else { folders.append(entry) }
        let text = folders.map { "\($0.epoch ?? 0) \($0.folderID.map(Sodium.hex) ?? "-") \($0.path)\n" }.joined()
        try? Posix.writeAtomically(Self.listPath(store), Array(text.utf8))
    }
}
