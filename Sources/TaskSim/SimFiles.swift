#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// The few file operations the simulator makes on the real folders of a run (stores,
/// shared-folder views, backups, case folders). None fsyncs: a run's files are scratch.
enum SimFiles {
    static func join(_ a: String, _ b: String) -> String { Posix.join(a, b) }

    static func isDirectory(_ path: String) -> Bool { Posix.isDirectory(path) }

    static func exists(_ path: String) -> Bool { Posix.exists(path) }

    static func size(_ path: String) -> Int? { Posix.fileSize(path) }

    /// Names in a folder, sorted (empty if it does not exist).
    static func list(_ dir: String) -> [String] { ((try? Posix.list(dir)) ?? []).sorted() }

    static func read(_ path: String) -> [UInt8]? { (try? Posix.readFile(path)) ?? nil }

    static func makeDirectories(_ path: String) { try? Posix.makeDirectories(path) }

    /// Writes `bytes` to `path` in place (a reader may see a partial file meanwhile).
    static func write(_ path: String, _ bytes: [UInt8]) {
        makeDirectories(Posix.directory(of: path))
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        try? Posix.writeAll(fd: fd, bytes, at: 0, path: path)
    }

    /// Appends `bytes` to `path`, creating it.
    static func append(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        #if canImport(Glibc)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        #else
        _ = bytes.withUnsafeBytes { Darwin.write(fd, $0.baseAddress, $0.count) }
        #endif
    }

    /// Writes `bytes` to `path` through a rename, as a careful sync client does.
    static func writeAtomically(_ path: String, _ bytes: [UInt8]) {
        makeDirectories(Posix.directory(of: path))
        try? Posix.writeAtomically(path, bytes, sync: false)
    }

    static func truncate(_ path: String, to size: Int) {
        #if canImport(Glibc)
        _ = Glibc.truncate(path, off_t(size))
        #else
        _ = Darwin.truncate(path, off_t(size))
        #endif
    }

    static func remove(_ path: String) { unlink(path) }

    /// Removes a file or a folder with everything in it.
    static func removeTree(_ path: String) {
        guard isDirectory(path) else {
            unlink(path)
            return
        }
        for name in list(path) { removeTree(join(path, name)) }
        rmdir(path)
    }

    /// Copies a folder (or file) to `destination`, which must not exist yet.
    static func copyTree(_ source: String, to destination: String) {
        if isDirectory(source) {
            makeDirectories(destination)
            for name in list(source) where name != "lock" || !isStoreRoot(source) {
                copyTree(join(source, name), to: join(destination, name))
            }
        } else if let bytes = read(source) {
            write(destination, bytes)
        }
    }

    private static func isStoreRoot(_ dir: String) -> Bool { exists(join(dir, "tasklog-store")) }

    /// Every file under `dir`, as paths relative to it, sorted.
    static func files(under dir: String) -> [String] {
        var out: [String] = []
        for name in list(dir) {
            let path = join(dir, name)
            if isDirectory(path) {
                out += files(under: path).map { join(name, $0) }
            } else {
                out.append(name)
            }
        }
        return out.sorted()
    }
}
