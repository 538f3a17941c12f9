import Foundation
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// Many replicas through one object-store bucket held in memory: each adds `--tasks-each`
/// tasks, then all sync in turn, round after round, until every replica holds every
/// operation and a round moves nothing. Reports the rounds that took and the requests an
/// S3 client would send, per device, in each round and in one idle sync after. The stores'
/// own work grows faster than the square of `--replicas` (each of N replicas integrates N
/// files and checks N origins), so 1,000 replicas take hours on 2 cores; 100 take a minute.
func runBucket(_ a: Arguments) throws -> [String: Any] {
    try repeated(a, "bucket") { _ in
        let base = temporaryBase(a, "bucket", memory: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let n = a.int("replicas", 100)
        let bucket = CountingBucket()
        var options = TaskStore.Options()
        options.durable = false
        options.sealsInBackground = false
        var engines: [FolderSync] = []
        for i in 0..<n {
            let store = try TaskStore.open(at: base + "/r\(i)", options: options)
            for t in 0..<a.int("tasks-each", 1) { _ = try store.add(NewTask(title: "task \(t) of replica \(i)")) }
            engines.append(FolderSync(store: store, storage: bucket))
        }
        let clock = ContinuousClock()
        var rounds = 0, converged = 0
        var perRound: [Double] = []
        let took = try clock.measure {
            while rounds < 2 * n + 4 {
                rounds += 1
                let before = bucket.requests
                let moved = try engines.reduce(UInt64(0)) { sum, e in
                    let r = try e.sync()
                    return sum + r.operationsIn + r.operationsOut
                }
                perRound.append(Double(bucket.requests - before) / Double(n))
                if converged == 0, try Set(engines.map { try $0.store.version }).count == 1 { converged = rounds }
                if converged > 0 && moved == 0 { break }
            }
        }
        let before = bucket.requests
        for e in engines { _ = try e.sync() }
        return [
            "replicas": n,
            "rounds_until_converged": converged,
            "rounds_until_quiet": rounds,
            "requests_per_device_by_round": perRound,
            "requests_per_device_idle_sync": Double(bucket.requests - before) / Double(n),
            "objects_in_bucket": bucket.count,
            "converge_s": seconds(took),
        ]
    }
}

/// A bucket in memory that counts requests as an S3 client sends them: one per call, and a
/// listing one per 1,000 keys. No faults (the simulator's bucket has them).
final class CountingBucket: FolderStorage {
    private let objects = Mutex([String: (bytes: [UInt8], generation: Int)]())
    private let counters = Mutex((requests: 0, generation: 0, marker: 0))

    var location: String { "memory://bench" }
    var requests: Int { counters.withLock { $0.requests } }
    var count: Int { objects.withLock { $0.count } }

    private func count(_ n: Int = 1) -> Int {
        counters.withLock {
            $0.requests += n
            $0.generation += 1
            return $0.generation
        }
    }

    func list() throws(SyncError) -> [StoredObject] {
        let listed = objects.withLock { $0.map { StoredObject(key: $0.key, kind: .file, size: $0.value.bytes.count, identity: "g\($0.value.generation)") } }
        _ = count(max(1, (listed.count + 999) / 1000))
        return listed
    }

    func changeMarker() throws(SyncError) -> String? {
        _ = count()
        return "m\(counters.withLock { $0.marker })"
    }

    func markChanged() throws(SyncError) {
        _ = count()
        counters.withLock { $0.marker += 1 }
    }

    func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        _ = count()
        guard let bytes = objects.withLock({ $0[key]?.bytes }) else { return nil }
        guard bytes.count <= largest else { throw .tooLarge(bytes: bytes.count, operations: 0) }
        return bytes
    }

    func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        let generation = count()
        objects.withLock { $0[key] = (bytes, generation) }
    }

    func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        let generation = count()
        return objects.withLock {
            guard $0[key] == nil else { return false }
            $0[key] = (bytes, generation)
            return true
        }
    }

    func remove(_ keys: [String]) throws(SyncError) {
        _ = count(max(1, (keys.count + 999) / 1000))
        objects.withLock { for k in keys { $0[k] = nil } }
    }
}
