#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

extension Context {
    /// Opens the store for `sync`, making it if it is missing, and runs `first` (the first
    /// exchange) on it. A store made here is taken away again when `first` fails, so a sync
    /// to a server that is down leaves nothing at a mistyped `--store` path.
    package func storeForSync<T>(_ first: (TaskStore) throws -> T) throws -> (TaskStore, T) {
        let made = !Posix.exists(Posix.join(storePath, "tasklog-store"))
        let folderExisted = Posix.exists(storePath)
        let earlier = Set((try? Posix.list(storePath)) ?? [])
        let store = try writableStore()
        do {
            let value = try first(store)
            if made {
                // The implicit default store is a common slip: say where the tasks are going.
                Output.warning("no store at \(storePath) yet; made one there (give --store DIR or set TASKLOG_STORE to sync another)")
            }
            return (store, value)
        } catch {
            if made {
                for name in (try? Posix.list(storePath)) ?? [] where !earlier.contains(name) {
                    Self.removeTree(Posix.join(storePath, name))
                }
                if !folderExisted { rmdir(storePath) }
            }
            throw error
        }
    }

    /// Removes `path` and, if it is a folder, everything under it (links are not followed).
    private static func removeTree(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in (try? Posix.list(path)) ?? [] { removeTree(Posix.join(path, name)) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
