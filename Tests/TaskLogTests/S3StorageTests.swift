import Foundation
import Synchronization
import Testing
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncRemote

/// S3Storage against real S3 servers: SeaweedFS and `rclone serve s3`, started once for the suite.
@Suite("S3 storage", .s3Servers)
struct S3StorageTests {
    static let writer = "tasklog-" + String(repeating: "ab", count: 16)

    /// A segment-like key in the writer's namespace.
    static func segmentKey(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        let first = String(repeating: "0", count: 16 - hex.count) + hex
        return "\(writer)/\(String(repeating: "cd", count: 16))-\(first)-\(first).tlog"
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed } }

    @Test("publish, list, read and remove round-trip; a missing key reads as nil and removes without error", arguments: S3TestServer.Kind.allCases)
    func roundTrip(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        #expect(try storage.list().isEmpty)
        let segment = Self.bytes(3000)
        try storage.publish(segment, as: Self.segmentKey(1))
        try storage.publish(Array("epoch".utf8), as: "tasklog-epoch-00000001")
        let listed = try storage.list().sorted { $0.key < $1.key }
        #expect(listed.map(\.key) == [Self.segmentKey(1), "tasklog-epoch-00000001"].sorted() && listed.map(\.size) == [3000, 5])
        #expect(listed.allSatisfy { $0.kind == .file && !$0.identity.isEmpty }, "each object known by its ETag")
        #expect(try storage.read(Self.segmentKey(1), largest: 3000) == segment)
        #expect(try storage.read(Self.segmentKey(2), largest: 10) == nil)
        #expect(try storage.readPrefix(Self.segmentKey(1), count: 12) == Array(segment.prefix(12)))
        #expect(try storage.readPrefix("tasklog-epoch-00000001", count: 12) == Array("epoch".utf8))
        #expect(try storage.readPrefix(Self.segmentKey(2), count: 12) == nil)
        try storage.remove([Self.segmentKey(1), Self.segmentKey(2)])
        #expect(try storage.list().map(\.key) == ["tasklog-epoch-00000001"])
    }

    @Test("createIfAbsent makes an object once; a second call with other bytes leaves the first", arguments: S3TestServer.Kind.allCases)
    func createIfAbsentOnce(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        #expect(try storage.createIfAbsent(Array("first".utf8), as: "tasklog-epoch-00000002"))
        #expect(try !storage.createIfAbsent(Array("second".utf8), as: "tasklog-epoch-00000002"))
        #expect(try storage.read("tasklog-epoch-00000002", largest: 100) == Array("first".utf8))
    }

    @Test("a listing of more than 1000 objects follows every page, and lists only two levels", arguments: S3TestServer.Kind.allCases)
    func listingFollowsPages(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        let count = 1_050
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            for n in stride(from: lane, to: count, by: 8) {
                do { try storage.put([UInt8(n & 0xFF)], as: Self.segmentKey(n + 1)) } catch { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        try storage.put([1], as: "\(Self.writer)/deeper/not-listed")
        let listed = try storage.list()
        #expect(listed.count == count)
        #expect(Set(listed.map(\.key)) == Set((1...count).map(Self.segmentKey)))
    }

    @Test("a wrong secret fails at once with one line about the signature", arguments: S3TestServer.Kind.allCases)
    func wrongSecret(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage(secret: "not-the-secret")
        let started = Date()
        let error = try #require(throws: SyncError.self) { try storage.list() }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect("\(error)".contains("secret key") && !"\(error)".contains("\n"), "\(error)")
        #expect(!"\(error)".contains("not-the-secret"))
    }

    @Test("a missing bucket is a missing folder (SeaweedFS makes a bucket on a PUT, so only rclone refuses one)", arguments: S3TestServer.Kind.allCases)
    func missingBucket(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage(prefix: "p", bucket: "no-such-bucket")
        #expect(throws: SyncError.folderMissing("s3://no-such-bucket/p/")) { try storage.list() }
        #expect(throws: SegmentFile.Invalid.self) { try storage.read("tasklog-epoch-00000001", largest: 10) }
        if kind == .rclone {
            #expect(throws: SyncError.folderMissing("s3://no-such-bucket/p/")) { try storage.publish([1], as: "tasklog-epoch-00000001") }
        }
    }

    @Test("a server that is down fails with one line naming the endpoint, within the retry layer's bounds")
    func serverDown() throws {
        let port = try S3TestServer.freePorts(1)[0]
        let credentials = S3Credentials(accessKeyID: "k", secretAccessKey: "s", endpoint: "http://127.0.0.1:\(port)")
        let storage = S3Storage(S3Location(bucket: "tasklog", prefix: "p/"), credentials: credentials)
        let started = Date()
        let error = try #require(throws: SyncError.self) { try storage.list() }
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds > 1 && seconds < 20, "retried for \(seconds) s")
        #expect("\(error)" == "http://127.0.0.1:\(port) refused the connection; check the endpoint and that the S3 server is running")
        #expect(throws: SegmentFile.Invalid.self) { try storage.read("x", largest: 10) }
    }

    @Test("an object larger than `largest` is refused with its size: by its Content-Length past 64 KiB, after reading below", arguments: S3TestServer.Kind.allCases)
    func largeObjectRefused(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        try storage.publish(Self.bytes(256 << 10), as: Self.segmentKey(3))
        #expect(throws: SegmentFile.Invalid.tooLarge(bytes: 256 << 10, operations: 0)) { try storage.read(Self.segmentKey(3), largest: 1000) }
        #expect(try storage.read(Self.segmentKey(3), largest: 256 << 10)?.count == 256 << 10)
        try storage.publish(Self.bytes(2000), as: Self.segmentKey(6))
        #expect(throws: SegmentFile.Invalid.tooLarge(bytes: 2000, operations: 0)) { try storage.read(Self.segmentKey(6), largest: 1000) }
    }

    @Test("the change marker stays while nothing is marked and moves at each markChanged; listings never show it", arguments: S3TestServer.Kind.allCases)
    func changeMarkerMoves(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        let empty = try storage.changeMarker()
        try storage.publish([1, 2, 3], as: Self.segmentKey(4))
        #expect(try storage.changeMarker() == empty)
        try storage.markChanged()
        let marked = try storage.changeMarker()
        #expect(marked != empty && marked != nil)
        #expect(try storage.changeMarker() == marked)
        try storage.markChanged()
        #expect(try storage.changeMarker() != marked)
        #expect(try storage.list().map(\.key) == [Self.segmentKey(4)])
    }

    @Test("two stores converge through a bucket with the folder protocol, and an idle sync changes nothing", arguments: S3TestServer.Kind.allCases)
    func storesConverge(kind: S3TestServer.Kind) throws {
        let server = try S3ServersTrait.server(kind)
        let dir = TemporaryDirectory()
        let (a, b) = (try TaskStore.open(at: dir.sub("a")), try TaskStore.open(at: dir.sub("b")))
        let prefix = "converge-\(UInt32.random(in: 0...UInt32.max))"
        let (syncA, syncB) = (try FolderSync(store: a, storage: server.storage(prefix: prefix), keyring: nil), try FolderSync(store: b, storage: server.storage(prefix: prefix), keyring: nil))
        let milk = try a.add(NewTask(title: "Buy milk"))
        _ = try b.add(NewTask(title: "Call Mum"))
        for sync in [syncA, syncB, syncA] { _ = try sync.sync() }
        try b.edit(milk.id, [.title("Buy oat milk")])
        for sync in [syncB, syncA] { _ = try sync.sync() }
        #expect(try Set(a.tasks().map(\.title)) == ["Buy oat milk", "Call Mum"])
        #expect(try a.tasks().map(\.title).sorted() == b.tasks().map(\.title).sorted())
        let before = try server.storage(prefix: prefix).list()
        for sync in [syncA, syncB] { _ = try sync.sync() }
        #expect(try server.storage(prefix: prefix).list().map(\.key).sorted() == before.map(\.key).sorted())
    }

    @Test("a clock two hours slow is corrected from the server's Date and the request signed again")
    func clockSkewCorrected() throws {
        let storage = try S3ServersTrait.server(.seaweedfs).storage()
        storage.client.clockOffset.withLock { $0 = -7200 }
        try storage.publish([9], as: Self.segmentKey(5))
        #expect(try storage.list().count == 1)
        #expect(abs(storage.client.clockOffset.withLock { $0 }) < 60)
    }
}
