#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskStore

/// This device's Ed25519 signing key: a 32-byte seed in `<store>/device-key`, readable only by
/// its owner. The store makes it when it is made; an older store gets one on first need.
struct DeviceKey: Sendable {
    let publicKey: [UInt8]
    let secretKey: [UInt8]

    /// The store's key, made now if it has none.
    static func of(_ store: TaskStore) throws(EncryptionError) -> DeviceKey {
        let path = store.deviceKeyPath
        do {
            if let seed = try Posix.readFile(path) {
                guard seed.count == 32 else { throw EncryptionError.damagedStoreFile(path) }
                return DeviceKey(seed: seed)
            }
            // Made beside and linked into place: of two processes racing here, one key wins.
            let temp = try Posix.writeTemporary(beside: path, Sodium.random(32))
            defer { unlink(temp) }
            guard link(temp, path) == 0 || errno == EEXIST else { throw EncryptionError.storeUnwritable(path, errno) }
            guard let seed = try Posix.readFile(path), seed.count == 32 else { throw EncryptionError.damagedStoreFile(path) }
            return DeviceKey(seed: seed)
        } catch let e as EncryptionError {
            throw e
        } catch {
            throw .storeUnwritable(path, EIO)
        }
    }

    init(seed: [UInt8]) {
        (publicKey, secretKey) = Sodium.signingKeys(seed: seed)
    }
}

/// Which public key writes each replica id, pinned in the store (`<store>/signers`, one
/// `<replica hex> <key hex>` line each): the first key seen for a replica wins.
final class SignerPins: Sendable {
    private let path: String
    private let pinned: Mutex<[ReplicaID: [UInt8]]>

    init(store: String) throws(EncryptionError) {
        path = Posix.join(store, "signers")
        pinned = Mutex(try Self.read(path))
    }

    private static func read(_ path: String) throws(EncryptionError) -> [ReplicaID: [UInt8]] {
        var keys: [ReplicaID: [UInt8]] = [:]
        guard let bytes = try? Posix.readFile(path) else { return keys }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let r = ReplicaID(hex: parts[0]), let k = Sodium.bytes(hex: parts[1], count: 32)
            else { throw .damagedStoreFile(path) }
            keys[r] = k
        }
        return keys
    }

    /// Whether `key` may sign for `writer`: it is the pinned key, or none is pinned yet (and
    /// then it is pinned, durably, before anything it signed is imported).
    func admits(_ key: [UInt8], for writer: ReplicaID) throws(EncryptionError) -> Bool {
        try pinned.withLock { (keys) throws(EncryptionError) -> Bool in
            if let known = keys[writer] { return Sodium.equal(known, key) }
            // Another process may have pinned meanwhile: what is on disk wins.
            keys.merge(try Self.read(path)) { _, onDisk in onDisk }
            if let known = keys[writer] { return Sodium.equal(known, key) }
            keys[writer] = key
            let text = keys.sorted { $0.key < $1.key }.map { "\($0.key.hex) \(Sodium.hex($0.value))\n" }.joined()
            do { try Posix.writeAtomically(path, Array(text.utf8)) } catch { throw .storeUnwritable(path, EIO) }
            return true
        }
    }
}
