@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// What one exchange with a shared folder moved.
public struct SyncReport: Sendable, Equatable {
    public var operationsIn: UInt64 = 0
    public var bytesIn = 0
    public var filesIn = 0
    public var operationsOut: UInt64 = 0
    public var bytesOut = 0
    public var filesOut = 0
    /// Files that were not imported, with why. They are tried again on the next sync.
    public var skipped: [(path: String, reason: String)] = []
    /// Forks met and settled (Spec/sync-folder.md, "Forks").
    public var forks: [ResolvedFork] = []
    /// How much of this replica's own log the other side held before the exchange: the
    /// writes after it were news there, so no edit from the other side can have seen them.
    package var peerHeldOwnThrough: UInt64 = 0

    /// Adds a settled fork unless the same one is already listed.
    public mutating func note(_ fork: ResolvedFork?) {
        if let fork, !forks.contains(where: { $0.replica == fork.replica && $0.seq == fork.seq }) { forks.append(fork) }
    }

    public init() {}

    public static func == (a: SyncReport, b: SyncReport) -> Bool {
        a.operationsIn == b.operationsIn && a.bytesIn == b.bytesIn && a.operationsOut == b.operationsOut
            && a.bytesOut == b.bytesOut && a.skipped.map(\.path) == b.skipped.map(\.path)
    }
}

/// Why a sync could not run at all.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    case folderMissing(String)
    case folderUnwritable(path: String, errno: Int32)
    /// This replica's namespace in the folder is a symbolic link or a file.
    case namespaceNotAFolder(String)
    case store(StoreError)
    /// The folder is encrypted and its keys could not be had, or were not given.
    case encryption(EncryptionError)
    /// A remote storage (S3, WebDAV) failed: why, and what to check, in one line.
    case storageFailed(String)
    /// A remote storage refused the user name and password, or asked for them (`status`).
    case credentialsRefused(location: String, status: Int)
    /// A remote storage could not be reached, or stopped answering.
    case unreachable(location: String, reason: String)
    /// A remote storage refused a request: what its answer means, in words.
    case storageRefused(location: String, reason: String)

    /// Whether a remote storage failed to answer as it should (down, refusing with a server
    /// error, a listing it cannot give): a watching sync that was answered before waits for it.
    public var isStorageFailure: Bool {
        switch self {
        case .storageFailed, .unreachable, .storageRefused: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .folderMissing(let p) where p.contains("://"): "the sync folder \(p) does not exist; create its bucket or folder first"
        case .folderMissing(let p): "the sync folder \(p) does not exist; create it (or mount it) first"
        case .folderUnwritable(let p, let e):
            "cannot write into the sync folder \(p): \(systemErrorText(e)); check its permissions and free space"
        case .namespaceNotAFolder(let p):
            "\(p) is a symbolic link or a file, not a folder, so nothing was written through it; remove it and sync again"
        case .store(let e): e.description
        case .encryption(let e): e.description
        case .storageFailed(let reason): reason
        case .credentialsRefused(let l, let s): "\(l) refused the user name or password (\(s)); check them"
        case .unreachable(let l, let r): "cannot reach \(l): \(r)"
        case .storageRefused(let l, let r): "\(l) \(r)"
        }
    }
}
