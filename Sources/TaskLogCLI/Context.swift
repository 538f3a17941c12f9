#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import Synchronization
@_spi(Engine) import TaskStore

/// A failure that is not a usage error: exit status 1.
package struct CommandFailure: Error {
    package var message: String
    package init(message: String) { self.message = message }
}

/// Stores a command hands over to process exit (see ``Context/keepUntilExit(_:)``).
private let storesKeptUntilExit = Mutex<[TaskStore]>([])

/// What one command runs with: the store folder, its parsed arguments, and the HTTP
/// commands when this executable has them.

package struct Context: Sendable {
    package let storePath: String
    package let arguments: ParsedArguments
    let http: (any HTTPCommands)?

    var json: Bool { arguments.has(Flags.json) }

    /// How the CLI opens stores: a command's process may exit right after its commit, so
    /// seals happen in the commit rather than on a background thread, and the lock is released
    /// at once (a lease would only start a timer thread). The process is idle as soon as its
    /// command ends, so it seals at the idle threshold, as a long-running store does when a
    /// burst ends: the next commands read a short tail, not the whole of a large import.
    static var storeOptions: TaskStore.Options {
        var options = TaskStore.Options()
        options.sealsInBackground = false
        options.lockLease = .zero
        options.sealThreshold = options.idleSealThreshold
        return options
    }

    /// Opens the store for writing, creating it on first write. The store lives until the
    /// process exits (``keepUntilExit(_:)``).
    package func writableStore() throws -> TaskStore {
        let store = try TaskStore.open(at: storePath, create: true, options: Self.storeOptions)
        keepUntilExit(store)
        return store
    }

    /// Opens the store for a long-running command (`serve`) with the library's defaults:
    /// seals and merges run on a background thread and a burst of writes takes the lock once.
    /// The command brings the store to rest (``TaskStore/waitForMaintenance()``) before it exits.
    package func longRunningStore() throws -> TaskStore { try TaskStore.open(at: storePath, create: true) }

    /// Keeps `store` alive until the process exits. Its memory then goes back with the process
    /// in one step, which for a large state is much cheaper than releasing it object by object
    /// (a `list` of 10,000 tasks spent 6% of its time tearing the state down, a `done` 5%).
    /// The CLI's stores keep no lease, so the lock is not held meanwhile.
    private func keepUntilExit(_ store: TaskStore) { storesKeptUntilExit.withLock { $0.append(store) } }

    /// Opens the store for reading; nil if it does not exist yet (reads then see no tasks).
    /// The store lives until the process exits (``keepUntilExit(_:)``).
    func readableStore() throws -> TaskStore? {
        do {
            let store = try TaskStore.open(at: storePath, create: false, options: Self.storeOptions)
            keepUntilExit(store)
            return store
        } catch StoreError.storeNotFound(_) {
            return nil
        }
    }

    package func positionals(_ range: ClosedRange<Int>, _ what: String) throws(UsageError) -> [String] {
        let p = arguments.positionals
        guard range.contains(p.count) else {
            throw UsageError(message: p.count < range.lowerBound ? "missing \(what)" : "unexpected argument '\(p[range.upperBound])'")
        }
        return p
    }

    func ids(_ store: TaskStore, includeDeleted: Bool = false) throws -> [TaskID] {
        let p = try positionals(1...Int.max, "task ID")
        return try p.map { text in
            do {
                return try store.resolve(text, includeDeleted: includeDeleted)
            } catch StoreError.taskNotFound(_) where !includeDeleted {
                if let deleted = try? store.resolve(text, includeDeleted: true) {
                    throw CommandFailure(message: "task \(deleted) was deleted; run 'tasklog restore \(deleted)' to bring it back")
                }
                throw StoreError.taskNotFound(text)
            }
        }
    }

    /// Hands the tasks the positionals name to `lean`, a store call that reads only the tasks
    /// it is given and returns false when one of them is not live: first the ids as typed, when
    /// all are whole ids (the usual case: nothing is resolved), else as resolved (resolving
    /// says what is wrong with one). Returns the resolved ids when `lean` turned them down too,
    /// for the call that loads the state; nil when `lean` did the work.
    func leanly(_ store: TaskStore, _ lean: ([TaskID]) throws -> Bool) throws -> [TaskID]? {
        let whole = try positionals(1...Int.max, "task ID").compactMap(TaskID.init)
        if whole.count == arguments.positionals.count, try lean(whole) { return nil }
        let list = try ids(store)
        return try lean(list) ? nil : list
    }

    package func report(_ store: TaskStore) {
        for w in store.warnings { Output.warning(w.description) }
    }

    /// Prints the store's warnings not in `noted` (for commands that run until stopped).
    package func reportNew(_ store: TaskStore, noted: inout Set<String>) {
        for w in store.warnings where noted.insert(w.description).inserted { Output.warning(w.description) }
    }
}
