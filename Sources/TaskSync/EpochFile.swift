#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Engine) import TaskStore

/// One key epoch of an encrypted folder: the file `tasklog-epoch-<8 hex digits>` at the folder's
/// top, written once by the store that made the epoch (Spec/encryption.md, "Key epochs").
/// It holds what derives the key from the passphrase and checks it, never the key.
struct EpochFile: Equatable {
    static let prefix = "tasklog-epoch-"
    static let largest = 4096

    var folderID: [UInt8]
    var epoch: UInt32
    var opsLimit: UInt64
    var memLimit: Int
    var salt: [UInt8]
    /// MAC of the folder id and epoch under the check subkey: tells a right passphrase from a wrong one.
    var check: [UInt8]
    /// The previous epoch's key, sealed under this one's chain subkey (epochs after the first).
    var previous: [UInt8]?
    /// MAC of the lines above under the previous epoch's endorsement subkey: only a holder of
    /// the previous key can start a new epoch that its holders accept.
    var endorsement: [UInt8]?

    static func name(_ epoch: UInt32) -> String {
        let digits = String(epoch, radix: 16)
        return prefix + String(repeating: "0", count: 8 - digits.count) + digits
    }

    static func epoch(ofName name: String) -> UInt32? {
        guard name.hasPrefix(prefix), let n = UInt32(name.dropFirst(prefix.count), radix: 16), Self.name(n) == name, n >= 1
        else { return nil }
        return n
    }

    /// The subkeys of an epoch key (`crypto_kdf`, context "tasklog1").
    enum Subkey: UInt64 {
        case segments = 1
        case check = 2
        case chain = 3
        case endorsement = 4
    }

    /// A new epoch under `key`; `previousKey` is the epoch before it, if any, sealed under a
    /// fresh random nonce unless one is given.
    static func make(
        folderID: [UInt8], epoch: UInt32, cost: KeyCost, salt: [UInt8], key: [UInt8], previousKey: [UInt8]?,
        nonce: [UInt8] = Sodium.random(24)
    ) -> EpochFile {
        var file = EpochFile(
            folderID: folderID, epoch: epoch, opsLimit: cost.opsLimit, memLimit: cost.memLimit, salt: salt,
            check: [], previous: nil, endorsement: nil)
        file.check = Sodium.mac(file.checkedBytes, key: Sodium.subkey(key, id: Subkey.check.rawValue))
        if let previousKey {
            file.previous = nonce + Sodium.seal(previousKey, additional: file.checkedBytes, nonce: nonce, key: Sodium.subkey(key, id: Subkey.chain.rawValue))
            file.endorsement = Sodium.mac(Array(file.endorsedText.utf8), key: Sodium.subkey(previousKey, id: Subkey.endorsement.rawValue))
        }
        return file
    }

    var cost: KeyCost { KeyCost(opsLimit: opsLimit, memLimit: memLimit) }

    /// Whether `key` is this epoch's key.
    func isKey(_ key: [UInt8]) -> Bool {
        Sodium.equal(check, Sodium.mac(checkedBytes, key: Sodium.subkey(key, id: Subkey.check.rawValue)))
    }

    /// The previous epoch's key, given this epoch's.
    func previousKey(under key: [UInt8]) -> [UInt8]? {
        guard let previous, previous.count == 24 + 32 + 16 else { return nil }
        return Sodium.open(
            Array(previous[24...]), additional: checkedBytes, nonce: Array(previous[..<24]),
            key: Sodium.subkey(key, id: Subkey.chain.rawValue))
    }

    /// Whether the holder of `previousKey` started this epoch.
    func isEndorsed(by previousKey: [UInt8]) -> Bool {
        guard let endorsement else { return false }
        return Sodium.equal(endorsement, Sodium.mac(Array(endorsedText.utf8), key: Sodium.subkey(previousKey, id: Subkey.endorsement.rawValue)))
    }

    /// Counts the keys ``derive(_:)`` derives in the task that sets it, each a full Argon2id run
    /// (for tests: what a hostile folder can make a device spend).
    @TaskLocal package static var derivations: DerivationCount?

    /// The passphrase's key for this epoch (Argon2id with the epoch's salt and cost).
    func derive(_ passphrase: [UInt8]) throws(EncryptionError) -> [UInt8] {
        Self.derivations?.count.add(1, ordering: .relaxed)
        guard let key = Sodium.argon2id(passphrase, salt: salt, opsLimit: opsLimit, memLimit: memLimit) else {
            throw .keyDerivationFailed(memLimit: memLimit)
        }
        return key
    }

    private var checkedBytes: [UInt8] {
        var out = Array("tasklog folder key check".utf8) + folderID
        withUnsafeBytes(of: epoch.littleEndian) { out += $0 }
        return out
    }

    private var endorsedText: String {
        var text = "tasklog-folder-epoch 1\nfolder \(Sodium.hex(folderID))\nepoch \(epoch)\n"
        text += "argon2id \(opsLimit) \(memLimit)\nsalt \(Sodium.hex(salt))\ncheck \(Sodium.hex(check))\n"
        if let previous { text += "previous \(Sodium.hex(previous))\n" }
        return text
    }

    var text: String { endorsedText + (endorsement.map { "endorsement \(Sodium.hex($0))\n" } ?? "") }

    /// Reads an epoch file's text; nil if it is not one (damaged, or written by something else).
    init?(text: String) {
        var fields: [Substring: Substring] = [:]
        for line in text.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { return nil }
            fields[line[..<space]] = line[line.index(after: space)...]
        }
        let cost = fields["argon2id"]?.split(separator: " ") ?? []
        guard fields["tasklog-folder-epoch"] == "1", let folder = fields["folder"].flatMap({ Sodium.bytes(hex: $0, count: 16) }),
            let epoch = fields["epoch"].flatMap({ UInt32($0) }), epoch >= 1, cost.count == 2,
            let ops = UInt64(cost[0]), let mem = Int(cost[1]), KeyCost(opsLimit: ops, memLimit: mem).isAcceptable,
            let salt = fields["salt"].flatMap({ Sodium.bytes(hex: $0, count: 16) }),
            let check = fields["check"].flatMap({ Sodium.bytes(hex: $0, count: 32) })
        else { return nil }
        self.init(folderID: folder, epoch: epoch, opsLimit: ops, memLimit: mem, salt: salt, check: check, previous: nil, endorsement: nil)
        if epoch > 1 {
            guard let p = fields["previous"].flatMap({ Sodium.bytes(hex: $0, count: 24 + 32 + 16) }),
                let e = fields["endorsement"].flatMap({ Sodium.bytes(hex: $0, count: 32) })
            else { return nil }
            previous = p
            endorsement = e
        }
        guard self.text == text else { return nil }
    }

    init(folderID: [UInt8], epoch: UInt32, opsLimit: UInt64, memLimit: Int, salt: [UInt8], check: [UInt8], previous: [UInt8]?, endorsement: [UInt8]?) {
        self.folderID = folderID
        self.epoch = epoch
        self.opsLimit = opsLimit
        self.memLimit = memLimit
        self.salt = salt
        self.check = check
        self.previous = previous
        self.endorsement = endorsement
    }
}

/// Argon2id's cost: passes over memory, and memory in bytes.
public struct KeyCost: Sendable, Equatable {
    public var opsLimit: UInt64
    public var memLimit: Int

    /// libsodium's interactive cost: 2 passes over 64 MiB (about 0.1 s to 0.3 s).
    public static let interactive = KeyCost(opsLimit: 2, memLimit: 64 << 20)

    public init(opsLimit: UInt64, memLimit: Int) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// Within what a reader agrees to spend: a hostile folder cannot ask for 1 TiB.
    var isAcceptable: Bool { opsLimit >= 1 && opsLimit <= 16 && memLimit >= 8 << 10 && memLimit <= 1 << 30 }

    /// Whether deriving under this cost takes no more passes nor memory than under `other`.
    func isAtMost(_ other: KeyCost) -> Bool { opsLimit <= other.opsLimit && memLimit <= other.memLimit }
}

/// How many keys were derived (``EpochFile/derivations``).
package final class DerivationCount: Sendable {
    let count = Atomic<Int>(0)
    package var value: Int { count.load(ordering: .relaxed) }
    package init() {}
}
