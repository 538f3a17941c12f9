@_spi(Engine) import CRDTCore

/// Where each file of a store lives (Spec/log-format.md, "Store folder").
/// The fixed paths are built once: writers use them on every commit.
struct StoreLayout: Sendable {
    let root: String
    let identityFile: String
    let lockFile: String
    let snapshotFile: String
    let logsDirectory: String

    init(root: String) {
        self.root = root
        identityFile = Posix.join(root, "tasklog-store")
        lockFile = Posix.join(root, "lock")
        snapshotFile = Posix.join(root, "snapshot")
        logsDirectory = Posix.join(root, "logs")
    }

    /// Present only while a fork resolution rewrites a replica's log.
    var rewriteJournal: String { Posix.join(root, "fork-rewrite") }
    /// The forks this store settled, one line each.
    var forksFile: String { Posix.join(root, "forks") }
    /// The seed of this device's signing key for encrypted folders (Spec/encryption.md), mode 0600.
    var deviceKeyFile: String { Posix.join(root, "device-key") }
    /// This device's undo stack (``UndoStack``).
    var undoFile: String { Posix.join(root, "undo") }

    func logDirectory(_ replica: ReplicaID) -> String { Posix.join(logsDirectory, replica.hex) }
    /// The name of a replica's tail segment in its log folder.
    static let tailName = "tail.tlog"

    func tailFile(_ replica: ReplicaID) -> String { Posix.join(logDirectory(replica), Self.tailName) }

    func sealedFile(_ replica: ReplicaID, first: UInt64, last: UInt64) -> String {
        Posix.join(logDirectory(replica), SealedName(first: first, last: last).fileName)
    }
}

/// The name of a sealed segment: `<first>-<last>.tlog`, both 16 lowercase hex digits.
struct SealedName: Sendable, Equatable {
    var first: UInt64
    var last: UInt64

    var fileName: String { "\(hex16(first))-\(hex16(last)).tlog" }

    /// The order readers take sealed segments in: by `first`, then the widest first, so a
    /// merged file comes before the small ones it covers (Spec/log-format.md, "Reader rules").
    static func readingOrder(_ a: SealedName, _ b: SealedName) -> Bool {
        a.first != b.first ? a.first < b.first : a.last > b.last
    }

    init(first: UInt64, last: UInt64) {
        self.first = first
        self.last = last
    }

    init?(fileName: String) {
        let u = Array(fileName.utf8)
        guard u.count == 38, u[16] == 45, fileName.hasSuffix(".tlog"),
            let f = UInt64(String(fileName.prefix(16)), radix: 16),
            let l = UInt64(String(fileName.dropFirst(17).prefix(16)), radix: 16),
            f >= 1, l >= f, fileName == SealedName(first: f, last: l).fileName
        else { return nil }
        first = f
        last = l
    }
}

/// The identity file: `tasklog-store <version>` then `replica <hex>`.
enum StoreIdentity {
    static let formatVersion = 1

    static func encode(_ replica: ReplicaID) -> [UInt8] {
        Array("tasklog-store \(formatVersion)\nreplica \(replica.hex)\n".utf8)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> ReplicaID {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        let number = lines.first.map { $0.dropFirst("tasklog-store ".count) } ?? ""
        guard lines.count >= 2, lines[0].hasPrefix("tasklog-store "), !number.isEmpty,
            number.utf8.allSatisfy({ (48...57).contains($0) }), let version = Int(number), version >= 1
        else { throw .notAStore(path: path, reason: "its identity file is unreadable") }
        guard version <= formatVersion else {
            throw .newerFormat(path: path, found: version, newestKnown: formatVersion)
        }
        guard lines[1].hasPrefix("replica "), let r = ReplicaID(hex: lines[1].dropFirst("replica ".count)) else {
            throw .notAStore(path: path, reason: "its identity file names no replica")
        }
        return r
    }
}
