#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Engine) import TaskStore

/// What each store has made durable: the bytes of every file at its last fsync (by inode),
/// and the entries of every folder at its last fsync. A power loss puts a store back to
/// exactly that, so a write acknowledged before its fsync is lost, as on a real machine.
final class SimDurability: Sendable {
    private struct Image {
        var files: [UInt64: [UInt8]] = [:]
        var folders: [String: [(name: String, inode: UInt64)]] = [:]
    }

    private let image = Mutex(Image())
    /// Stores currently observed (paths), so other runs in this process do not interfere.
    private let roots: [String]

    init(roots: [String]) { self.roots = roots }

    static func isUnder(_ path: String, _ root: String) -> Bool { path == root || path.hasPrefix(root + "/") }

    /// Every instance alive in this process (simulations run in parallel): the one probe
    /// forwards each fsync to all of them, and each keeps what is under its roots.
    private static let active = Mutex<[ObjectIdentifier: SimDurability]>([:])

    func start() {
        Self.active.withLock { all in
            if all.isEmpty {
                DurabilityProbe.install { fd, path in
                    for d in SimDurability.active.withLock({ Array($0.values) }) { d.observe(fd, path) }
                }
            }
            all[ObjectIdentifier(self)] = self
        }
    }

    func stop() {
        Self.active.withLock { all in
            all[ObjectIdentifier(self)] = nil
            if all.isEmpty { DurabilityProbe.install(nil) }
        }
    }

    func observe(_ fd: Int32, _ path: String) {
        guard roots.contains(where: { Self.isUnder(path, $0) }) else { return }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            let entries = SimFiles.list(path).compactMap { name -> (String, UInt64)? in
                var e = stat()
                return lstat(SimFiles.join(path, name), &e) == 0 ? (name, UInt64(e.st_ino)) : nil
            }
            image.withLock { $0.folders[path] = entries.map { (name: $0.0, inode: $0.1) } }
        } else {
            // The descriptor may be write-only: read the synced bytes through the path, which
            // names the same file at the moment of its fsync.
            let bytes = SimFiles.read(path) ?? []
            image.withLock { $0.files[UInt64(st.st_ino)] = bytes }
        }
    }

    /// Takes everything under `root` as durable as it is now (after the simulator itself
    /// changed the files, as a crash or a restored backup does: what is on disk then is what
    /// a later power loss goes back to, until the store syncs again).
    func rebase(_ root: String) {
        var folders: [String: [(name: String, inode: UInt64)]] = [:]
        var files: [UInt64: [UInt8]] = [:]
        var pending = [root]
        while let dir = pending.popLast() {
            var entries: [(name: String, inode: UInt64)] = []
            for name in SimFiles.list(dir) {
                let path = SimFiles.join(dir, name)
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                entries.append((name, UInt64(st.st_ino)))
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    pending.append(path)
                } else if (st.st_mode & S_IFMT) == S_IFREG {
                    files[UInt64(st.st_ino)] = SimFiles.read(path) ?? []
                }
            }
            folders[dir] = entries
        }
        image.withLock { img in
            for key in img.folders.keys where Self.isUnder(key, root) { img.folders[key] = nil }
            img.folders.merge(folders) { _, new in new }
            img.files.merge(files) { _, new in new }
        }
    }

    /// Puts every folder under `root` whose entries were synced back to them, each file to
    /// its synced bytes (a file renamed into place but never synced comes back empty).
    /// - Returns: the number of files changed or removed.
    @discardableResult
    func powerLoss(_ root: String) -> Int {
        let img = image.withLock { $0 }
        var changed = 0
        for (folder, entries) in img.folders where Self.isUnder(folder, root) {
            let want = Dictionary(entries.map { ($0.name, $0.inode) }, uniquingKeysWith: { a, _ in a })
            for name in SimFiles.list(folder) {
                let path = SimFiles.join(folder, name)
                var st = stat()
                guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                guard let inode = want[name] else {
                    unlink(path)  // created after the folder was last synced
                    changed += 1
                    continue
                }
                let durable = img.files[inode] ?? []
                if SimFiles.read(path) != durable {
                    SimFiles.write(path, durable)
                    changed += 1
                }
            }
        }
        return changed
    }
}
