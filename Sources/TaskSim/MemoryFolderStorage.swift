#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// The faults an in-memory bucket injects, each drawn from the bucket's seed.
package struct BucketFaults: Sendable, Equatable {
    /// A publish or a removal is lost: nothing changes, an error is returned.
    package var lostPublishes = 0.0
    /// A change of the marker is lost: it keeps its value, an error is returned.
    package var lostMarkerChanges = 0.0
    /// A publish is stored but its answer is lost: an error is returned all the same.
    package var lostAnswers = 0.0
    /// A read or a listing fails: the storage does not answer.
    package var failedReads = 0.0
    /// A call answers late (by ``slowness``).
    package var slowCalls = 0.0
    package var slowness: Duration = .microseconds(200)
    /// A listing comes in any order.
    package var reorderedListings = false
    /// A listing is stale: it omits up to ``staleDepth`` of the newest objects (eventual consistency).
    package var staleListings = 0.0
    package var staleDepth = 3

    package init() {}

    package static let none = BucketFaults()

    /// Every fault, at rates that leave most calls working.
    package static let all: BucketFaults = {
        var f = BucketFaults()
        f.lostPublishes = 0.08
        f.lostMarkerChanges = 0.08
        f.lostAnswers = 0.05
        f.failedReads = 0.05
        f.slowCalls = 0.05
        f.reorderedListings = true
        f.staleListings = 0.25
        return f
    }()
}

/// A shared folder kept in memory as an object store keeps it: flat keys, no folders, no links,
/// a change marker, requests counted as an S3 client sends them (a listing is one request per
/// 1,000 keys, a removal one per 1,000 keys). Faults (``BucketFaults``) come from its own seed,
/// so a run replays exactly. Several replicas share one bucket, as devices share a bucket.
package final class MemoryFolderStorage: FolderStorage {
    private struct Object {
        var bytes: [UInt8]
        /// When it was published, counted in publishes: the newest are the ones a stale listing omits.
        var generation: Int
    }

    private struct State {
        var objects: [String: Object] = [:]
        var generation = 0
        var marker = 0
        var faults: BucketFaults
        var rng: SimRandom
        var requests = 0
        var injected: [String: Int] = [:]
    }

    package let location: String
    private let state: Mutex<State>

    package init(location: String = "memory://bucket", seed: UInt64, faults: BucketFaults = .none) {
        self.location = location
        state = Mutex(State(faults: faults, rng: SimRandom(seed: seed)))
    }

    /// The faults from now on (``BucketFaults/none`` to heal).
    package var faults: BucketFaults {
        get { state.withLock { $0.faults } }
        set { state.withLock { $0.faults = newValue } }
    }

    /// Requests answered or failed so far.
    package var requests: Int { state.withLock { $0.requests } }

    /// Faults injected so far, by kind.
    package var injected: [String: Int] { state.withLock { $0.injected } }

    /// The keys held now.
    package var keys: [String] { state.withLock { $0.objects.keys.sorted() } }

    /// Puts `bytes` at `key` as anyone with write access could, with no check and no fault.
    package func put(_ bytes: [UInt8], at key: String) {
        state.withLock { s in
            s.generation += 1
            s.objects[key] = Object(bytes: bytes, generation: s.generation)
        }
    }

    /// Removes `key` as anyone with write access could.
    package func drop(_ key: String) { _ = state.withLock { $0.objects.removeValue(forKey: key) } }

    package func list() throws(SyncError) -> [StoredObject] {
        try call { (s) throws(SyncError) in
            s.requests += max(0, (s.objects.count - 1) / 1000)
            if Self.draw(&s, s.faults.failedReads, "failed listing") { throw .folderUnwritable(path: location, errno: EIO) }
            var listed = s.objects.sorted { $0.key < $1.key }
            if Self.draw(&s, s.faults.staleListings, "stale listing") {
                let newest = Set(listed.map(\.value.generation).sorted().suffix(s.rng.int(1...max(1, s.faults.staleDepth))))
                listed.removeAll { newest.contains($0.value.generation) }
            }
            if s.faults.reorderedListings { listed.shuffle(using: &s.rng) }
            return listed.map { StoredObject(key: $0.key, kind: .file, size: $0.value.bytes.count, identity: "g\($0.value.generation)") }
        }
    }

    package func changeMarker() throws(SyncError) -> String? {
        try call { (s) throws(SyncError) in
            if Self.draw(&s, s.faults.failedReads, "failed marker read") { throw .folderUnwritable(path: location, errno: EIO) }
            return "m\(s.marker)"
        }
    }

    package func markChanged() throws(SyncError) {
        try call { (s) throws(SyncError) in
            if Self.draw(&s, s.faults.lostMarkerChanges, "lost marker change") { throw .folderUnwritable(path: location, errno: EIO) }
            s.marker += 1
        }
    }

    package func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        let answer = call { s -> Result<[UInt8]?, SegmentFile.Invalid> in
            if Self.draw(&s, s.faults.failedReads, "failed read") { return .failure(.unavailable("injected: no answer")) }
            guard let object = s.objects[key] else { return .success(nil) }
            guard object.bytes.count <= largest else { return .failure(.tooLarge(bytes: object.bytes.count, operations: 0)) }
            return .success(object.bytes)
        }
        return try answer.get()
    }

    package func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        try call { (s) throws(SyncError) in try Self.store(&s, bytes, at: key, replacing: true, location) }
    }

    package func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        try call { (s) throws(SyncError) in try Self.store(&s, bytes, at: key, replacing: false, location) }
    }

    package func remove(_ keys: [String]) throws(SyncError) {
        try call { (s) throws(SyncError) in
            s.requests += max(0, (keys.count - 1) / 1000)
            if Self.draw(&s, s.faults.lostPublishes, "lost removal") { throw .folderUnwritable(path: location, errno: EIO) }
            for key in keys { s.objects[key] = nil }
        }
    }

    /// One request: counted, sometimes slow.
    private func call<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        let delay: Duration? = state.withLock { s in
            s.requests += 1
            return Self.draw(&s, s.faults.slowCalls, "slow call") ? s.faults.slowness : nil
        }
        if let delay { Self.sleep(delay) }
        return try state.withLock { (s) throws(E) -> R in try body(&s) }
    }

    /// Stores an object unless a fault loses it; an answer may be lost after storing.
    /// Returns whether it was stored (false: an object was there and `replacing` is off).
    @discardableResult
    private static func store(_ s: inout State, _ bytes: [UInt8], at key: String, replacing: Bool, _ location: String) throws(SyncError) -> Bool {
        if draw(&s, s.faults.lostPublishes, "lost publish") { throw .folderUnwritable(path: location + "/" + key, errno: EIO) }
        guard replacing || s.objects[key] == nil else { return false }
        s.generation += 1
        s.objects[key] = Object(bytes: bytes, generation: s.generation)
        if draw(&s, s.faults.lostAnswers, "lost answer") { throw .folderUnwritable(path: location + "/" + key, errno: EIO) }
        return true
    }

    /// Whether a fault of probability `p` happens now (noted by kind when it does).
    private static func draw(_ s: inout State, _ p: Double, _ kind: String) -> Bool {
        guard p > 0, s.rng.chance(p) else { return false }
        s.injected[kind, default: 0] += 1
        return true
    }

    private static func sleep(_ d: Duration) {
        let (seconds, attoseconds) = d.components
        var ts = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        nanosleep(&ts, nil)
    }
}
