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
        #expect(listed == [StoredObject(key: Self.segmentKey(1), kind: .file, size: 3000), StoredObject(key: "tasklog-epoch-00000001", kind: .file, size: 5)].sorted { $0.key < $1.key })
        #expect(try storage.read(Self.segmentKey(1), largest: 3000) == segment)
        #expect(try storage.read(Self.segmentKey(2), largest: 3000) == nil)
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

    @Test("an object larger than `largest` is refused by its Content-Length, with its size", arguments: S3TestServer.Kind.allCases)
    func largeObjectRefused(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        try storage.publish(Self.bytes(256 << 10), as: Self.segmentKey(3))
        #expect(throws: SegmentFile.Invalid.tooLarge(bytes: 256 << 10, operations: 1)) { try storage.read(Self.segmentKey(3), largest: 1000) }
        #expect(try storage.read(Self.segmentKey(3), largest: 256 << 10)?.count == 256 << 10)
    }

    @Test("the change marker stays while nothing changes and moves on publish and remove", arguments: S3TestServer.Kind.allCases)
    func changeMarkerMoves(kind: S3TestServer.Kind) throws {
        let storage = try S3ServersTrait.server(kind).storage()
        let empty = try storage.changeMarker()
        try storage.publish([1, 2, 3], as: Self.segmentKey(4))
        let afterPublish = try storage.changeMarker()
        #expect(afterPublish != empty)
        #expect(try storage.changeMarker() == afterPublish)
        try storage.remove([Self.segmentKey(4)])
        #expect(try storage.changeMarker() != afterPublish)
        #expect(try !storage.list().contains { $0.key.contains("changed") })
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
