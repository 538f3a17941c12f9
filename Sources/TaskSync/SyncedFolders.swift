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

    public var isEncrypted: Bool { epoch != nil }
}

extension FolderSync {
    /// The folders `store` has synced with, in the order first synced.
    public static func syncedFolders(of store: TaskStore) -> [SyncedFolder] {
        guard let bytes = try? Posix.readFile(listPath(store)) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let space = line.firstIndex(of: " "), let epoch = UInt32(line[..<space]) else { return nil }
            return SyncedFolder(path: String(line[line.index(after: space)...]), epoch: epoch == 0 ? nil : epoch)
        }
    }

    /// `<store>/folders`: one `<epoch> <path>` line per folder, 0 for plaintext.
    private static func listPath(_ store: TaskStore) -> String { Posix.join(store.path, "folders") }

    /// Records this folder and its epoch, if that changed. A failure to record loses only status.
    func noteSynced() {
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let path = realpath(folder, &resolved) != nil ? String(cString: resolved) : folder
        let entry = SyncedFolder(path: path, epoch: seal?.keyring.epoch)
        var folders = Self.syncedFolders(of: store)
        guard !folders.contains(entry), !path.contains("\n") else { return }
        if let i = folders.firstIndex(where: { $0.path == path }) { folders[i] = entry } else { folders.append(entry) }
        let text = folders.map { "\($0.epoch ?? 0) \($0.path)\n" }.joined()
        try? Posix.writeAtomically(Self.listPath(store), Array(text.utf8))
    }
}
