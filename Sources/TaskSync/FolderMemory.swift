@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
import Synchronization

/// What a ``FolderSync`` remembers between its syncs: the files found to agree with the
/// store, the first bytes of files (to tell sealed from plaintext), and its last full
/// listing (for the idle probe). Objects are known by key and identity, and an object whose
/// storage gives no identity is never remembered. Only objects of the newest listing are
/// kept, so memory follows the folder's size. With a storage that keeps a change marker,
/// the memory is also kept in the store, so a later process starts from it
/// (FolderMemory+File.swift).
final class FolderMemory: Sendable {
    /// The last full listing of a storage with a change marker, taken after a sync that read
    /// every listed file it needed.
    struct Listing: Sendable, Equatable {
        var marker: String
        /// The store's version when that sync ended (``FolderMemory/fingerprint(_:)``).
        var version: String
        /// When that sync began, in wall-clock milliseconds: a later process can compare it.
        var at: UInt64
    }

    struct State {
        var agreed = Set<String>()
        var heads: [String: [UInt8]] = [:]
        var listing: Listing?
        var owesMark = false
        /// Changed since last read from or written to the store.
        var dirty = false
        /// Read from the store already (or found absent).
        var loaded = false
        /// Kept in the store: the storage keeps a change marker.
        var persists = false
    }

    let state = Mutex(State())

    /// The key under which an object is remembered; nil when it has no identity.
    static func key(_ relative: String, _ identity: String) -> String? {
        identity.isEmpty ? nil : relative + "\u{0}" + identity
    }

    /// A short digest that tells one version of the store from another.
    static func fingerprint(_ version: VersionVector) -> String {
        let hash = ContentHash.xxh3_128(Array(version.description.utf8))
        return String(hash.high, radix: 16) + "-" + String(hash.low, radix: 16)
    }

    func isAgreed(_ key: String) -> Bool { state.withLock { $0.agreed.contains(key) } }
    func noteAgreed(_ key: String) { state.withLock { if $0.agreed.insert(key).inserted { $0.dirty = true } } }

    func head(_ key: String) -> [UInt8]? { state.withLock { $0.heads[key] } }
    func noteHead(_ key: String, _ head: [UInt8]) {
        state.withLock {
            guard $0.heads[key] != head else { return }
            $0.heads[key] = head
            $0.dirty = true
        }
    }

    /// Forgets every object not among `keys` (those of the newest listing).
    func keep(only keys: Set<String>) {
        state.withLock {
            let before = ($0.agreed.count, $0.heads.count)
            $0.agreed.formIntersection(keys)
            $0.heads = $0.heads.filter { keys.contains($0.key) }
            if before != ($0.agreed.count, $0.heads.count) { $0.dirty = true }
        }
    }

    /// Whether a full listing may be skipped: the marker is the one read before the last
    /// full listing, the store holds what it held then, and that listing began less than
    /// `within` ago (`now` in wall-clock milliseconds; a listing from the future is stale).
    func isIdle(marker: String, version: VersionVector, now: UInt64, within: Duration) -> Bool {
        state.withLock {
            guard let last = $0.listing, now >= last.at, .milliseconds(now - last.at) < within else { return false }
            return last.marker == marker && last.version == Self.fingerprint(version)
        }
    }

    /// Remembers a full listing, or forgets the last one (nil).
    func note(_ listing: Listing?) {
        state.withLock {
            guard $0.listing != listing else { return }
            $0.listing = listing
            $0.dirty = true
        }
    }

    /// Whether this sync changed the folder and has not yet changed its marker.
    var owesMark: Bool {
        get { state.withLock { $0.owesMark } }
        set {
            state.withLock {
                guard $0.owesMark != newValue else { return }
                $0.owesMark = newValue
                $0.dirty = true
            }
        }
    }
}
