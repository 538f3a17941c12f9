@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Why a store operation failed. Every message says what happened and what to do next.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed on a file of the store.
    case io(operation: String, path: String, errno: Int32)
    /// The folder exists but is not a TaskLog store (or its identity file is damaged).
    case notAStore(path: String, reason: String)
    /// The store was written by a newer version of TaskLog.
    case newerFormat(path: String, found: Int, newestKnown: Int)
    /// The store has not been created yet.
    case storeNotFound(path: String)
    /// No task has this id (or unique prefix).
    case taskNotFound(String)
    /// More than one task starts with this prefix.
    case ambiguousID(prefix: String, candidates: [String])
    /// The id does not match `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`.
    case invalidTaskID(String)
    /// The store's own tail is damaged in the middle, so new writes are refused.
    case damagedTail(path: String, offset: Int, reason: String)
    /// The snapshot turned out damaged while tasks were being listed straight from it
    /// (``TaskStore/scanTasks(_:_:)``), after some had been handed out. It was removed.
    case damagedSnapshot(path: String, reason: String)
    /// `replay --verify` found the saved state differs from the logs.
    case verificationFailed(differences: [String])
    /// A value given to the API is out of range.
    case invalidArgument(String)
    /// Two different operations claim the same replica and sequence number (a store restored
    /// from a backup or copied to a second device kept writing) and the fork could not be
    /// resolved. Nothing was imported.
    case fork(replica: String, seq: UInt64, detail: String)
    /// Arriving operations of a replica differ from those held from their first commit on, so
    /// where the two branches part is not known: the sender must send that replica's log from
    /// its start (transports do this themselves).
    case forkNeedsEarlierOperations(replica: ReplicaID, seq: UInt64)
    /// A parent or dependency that would tie `task` to itself: `other` is `task`, or
    /// already under it (a parent) or depending on it (a dependency).
    case circularLink(task: String, other: String, dependency: Bool)
    /// The newest change on the undo stack cannot be reverted (its operations are gone from
    /// the logs); it was taken off the stack.
    case undoUnavailable(name: String, reason: String)

    public var description: String {
        switch self {
        case .io(let op, let path, let e):
            "\(op) \(path) failed: \(systemErrorText(e)); check the path, its permissions and free disk space"
        case .notAStore(let path, let reason):
            "\(path) is not a TaskLog store (\(reason)); choose another folder"
        case .newerFormat(let path, let found, let known):
            "\(path) uses store format \(found), newer than this build knows (\(known)); upgrade tasklog"
        case .storeNotFound(let path):
            "no store at \(path); run 'tasklog init' or add a task to create it"
        case .taskNotFound(let id):
            "no task matches '\(id)'; give a whole id or at least 4 of its first characters"
        case .ambiguousID(let prefix, let candidates):
            "'\(prefix)' matches \(candidates.count) tasks (\(candidates.prefix(5).joined(separator: ", "))\(candidates.count > 5 ? ", …" : "")); give more characters of the id"
        case .invalidTaskID(let id):
            "'\(id)' is not a valid task id (letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters)"
        case .damagedTail(let path, let offset, let reason):
            "\(path) is damaged at byte \(offset) (\(reason)); reads still work, but writes are refused: run 'tasklog compact' to keep every readable operation and start a fresh tail"
        case .damagedSnapshot(let path, let reason):
            "\(path) is damaged (\(reason)), found after part of the listing was written; it is only a cache of the logs, which are intact, and has been removed: run the command again"
        case .verificationFailed(let diffs):
            "the saved state differs from the logs (\(diffs.count) difference\(diffs.count == 1 ? "" : "s"): \(diffs.prefix(3).joined(separator: "; "))); run 'tasklog compact' to rebuild it from the logs"
        case .invalidArgument(let what):
            what
        case .fork(let replica, let seq, let detail):
            "fork: replica \(replica) has two different operations at sequence number \(seq) (\(detail)); the other side's operations from there on were not imported. A copied or restored store kept writing under the same replica id; see Spec/sync-folder.md, section Forks"
        case .forkNeedsEarlierOperations(let replica, let seq):
            "fork: the operations of replica \(replica.hex) arriving from sequence number \(seq) differ from those held here, and where the two branches part is earlier; the fork is resolved once that replica's log arrives from its start (the next sync asks for it; see Spec/sync-folder.md, section Forks)"
        case .circularLink(let task, let other, let dependency) where task == other:
            "task \(task) cannot be its own \(dependency ? "dependency" : "parent"); name another task"
        case .circularLink(let task, let other, false):
            "task \(other) is under \(task), so \(task) cannot go under it (that would make a cycle); move \(other) first"
        case .circularLink(let task, let other, true):
            "task \(other) depends on \(task), so \(task) cannot depend on it (that would make a cycle); remove that dependency first"
        case .undoUnavailable(let name, let reason):
            "cannot undo '\(name)': \(reason); it was taken off the undo stack, so undoing again reverts the change before it"
        }
    }
}

/// A problem found while reading that did not stop the read (a damaged or foreign file).
public struct StoreWarning: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String

    public var description: String { "\(path): \(message)" }
}

package func systemErrorText(_ e: Int32) -> String {
    String(cString: strerror(e))
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
