@_spi(Engine) import CRDTCore
import Synchronization

/// What one ``FolderSync`` remembers between its syncs: the files found to agree with the
/// store, the first bytes of files (to tell sealed from plaintext), and its last full
/// listing (for the idle probe). Objects are known by key and identity, and an object whose
/// storage gives no identity is never remembered. Only objects of the newest listing are
/// kept, so memory follows the folder's size.
final class FolderMemory: Sendable {
    /// The last full listing of a storage with a change marker, taken after a sync that read
    /// every listed file it needed.
    struct Listing: Sendable {
        var marker: String
        /// The store's version when that sync ended.
        var version: VersionVector
        var at: ContinuousClock.Instant
    }

    private struct State {
        var agreed = Set<String>()
        var heads: [String: [UInt8]] = [:]
        var listing: Listing?
        var owesMark = false
    }

    private let state = Mutex(State())

    /// The key under which an object is remembered; nil when it has no identity.
    static func key(_ relative: String, _ identity: String) -> String? {
        identity.isEmpty ? nil : relative + "\u{0}" + identity
    }

    func isAgreed(_ key: String) -> Bool { state.withLock { $0.agreed.contains(key) } }
    func noteAgreed(_ key: String) { _ = state.withLock { $0.agreed.insert(key) } }

    func head(_ key: String) -> [UInt8]? { state.withLock { $0.heads[key] } }
    func noteHead(_ key: String, _ head: [UInt8]) { state.withLock { $0.heads[key] = head } }

    /// Forgets every object not among `keys` (those of the newest listing).
    func keep(only keys: Set<String>) {
        state.withLock {
            $0.agreed.formIntersection(keys)
            $0.heads = $0.heads.filter { keys.contains($0.key) }
        }
    }

    /// Whether a full listing may be skipped: the marker is the one read before the last
    /// full listing, the store holds what it held then, and that listing is recent.
    func isIdle(marker: String, version: VersionVector, now: ContinuousClock.Instant, within: Duration) -> Bool {
        state.withLock {
            guard let last = $0.listing else { return false }
            return last.marker == marker && last.version == version && now - last.at < within
        }
    }

    /// Remembers a full listing, or forgets the last one (nil).
    func note(_ listing: Listing?) { state.withLock { $0.listing = listing } }

    /// Whether this sync changed the folder and has not yet changed its marker.
    var owesMark: Bool {
        get { state.withLock { $0.owesMark } }
        set { state.withLock { $0.owesMark = newValue } }
    }
}
