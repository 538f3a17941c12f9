import Foundation
import Testing
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncRemote

/// The retry layer and the listing guards, through `Tests/Fixtures/faults/proxy.py` in front
/// of a real SeaweedFS.
@Suite("S3 storage through faults", .s3Servers)
struct S3FaultTests {
    /// The proxy in `mode`, on a free loopback port; stopped by pid.
    final class FaultProxy {
        let fixture: PythonFixture
        var port: Int { fixture.port }

        init(_ mode: String, upstream: S3TestServer, dir: TemporaryDirectory) throws {
            fixture = try PythonFixture(
                "faults/proxy.py", ["\(upstream.port)", mode, dir.sub("\(mode).requests")], log: dir.sub("\(mode).requests"),
                output: URL(fileURLWithPath: dir.sub("proxy-\(mode)")), what: "fault proxy")
        }

        /// Each request, as `METHOD PATH STATUS FAULT`.
        var requests: [String] { fixture.requests }

        /// A storage under a fresh prefix, reached through the proxy.
        func storage(_ server: S3TestServer, retry: RetryPolicy) -> S3Storage {
            var credentials = server.credentials()
            credentials.endpoint = "http://127.0.0.1:\(port)"
            return S3Storage(S3Location(bucket: S3TestServer.bucket, prefix: "faults-\(UInt32.random(in: 0...UInt32.max))/"), credentials: credentials, retry: retry)
        }

    }

    let dir = TemporaryDirectory()

    /// Quick retries and a two-second stall cut-off, so the proxy's four-second delay trips it.
    static var quickRetry: RetryPolicy {
        var retry = RetryPolicy()
        retry.firstDelay = 0.05
        retry.attempts = 8
        retry.stallSeconds = 2
        return retry
    }

    @Test("500s after the effect, a 429, a reset mid-body, a stalled answer and a short listing: all got through, nothing doubled")
    func retriesGetThroughFaults() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let proxy = try FaultProxy("faults", upstream: server, dir: dir)
        let storage = proxy.storage(server, retry: Self.quickRetry)
        let early = (1...6).map { S3StorageTests.segmentKey($0) }
        for (n, key) in early.enumerated() { try storage.publish(S3StorageTests.bytes(500 + n, seed: UInt8(n)), as: key) }
        sleep(1)  // the next object is newer by LastModified's whole second
        try storage.publish(S3StorageTests.bytes(700), as: S3StorageTests.segmentKey(7))
        let first = Set(try storage.list().map(\.key))
        let all = Set((1...7).map(S3StorageTests.segmentKey))
        #expect(first.isSubset(of: all) && !first.isEmpty)
        for (n, key) in early.enumerated() { #expect(try storage.read(key, largest: 1 << 20) == S3StorageTests.bytes(500 + n, seed: UInt8(n))) }
        #expect(try storage.createIfAbsent(Array("epoch".utf8), as: "tasklog-epoch-00000001"))
        #expect(try !storage.createIfAbsent(Array("other".utf8), as: "tasklog-epoch-00000001"))
        try storage.remove([S3StorageTests.segmentKey(1)])
        let listed = try storage.list().map(\.key)
        #expect(listed.count == Set(listed).count, "no key listed twice")
        #expect(Set(listed) == all.subtracting([S3StorageTests.segmentKey(1)]).union(["tasklog-epoch-00000001"]))
        let faults = Set(proxy.requests.compactMap { $0.split(separator: " ").dropFirst(3).first.map(String.init) })
        #expect(faults.isSuperset(of: ["429", "500-after-forwarding", "cut-mid-body", "delayed", "omitted-newest"]), "\(proxy.requests)")
        #expect(first != all, "the first listing omitted the newest object: \(first.count) of \(all.count)")
    }

    @Test("a listing whose page token repeats, or that is truncated without a token, or lists a key twice with two sizes, is refused in one line",
          arguments: [("loop", "same page token twice"), ("notoken", "gives no token"), ("twice", "twice, with")])
    func brokenListingsRefused(mode: String, expected: String) throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let proxy = try FaultProxy(mode, upstream: server, dir: dir)
        let storage = proxy.storage(server, retry: Self.quickRetry)
        try storage.put([1, 2], as: S3StorageTests.segmentKey(1))
        let error = try #require(throws: SyncError.self) { try storage.list() }
        #expect("\(error)".contains(expected) && !"\(error)".contains("\n"), "\(error)")
        #expect(proxy.requests.count < 10, "\(proxy.requests)")
    }

    @Test("a change marker asked for again with nothing changed costs one 304")
    func markerAnswers304() throws {
        let server = try S3ServersTrait.server(.seaweedfs)
        let proxy = try FaultProxy("clean", upstream: server, dir: dir)
        let storage = proxy.storage(server, retry: Self.quickRetry)
        try storage.markChanged()
        let marker = try storage.changeMarker()
        #expect(try storage.changeMarker() == marker)
        let last = try #require(proxy.requests.last)
        #expect(last.hasPrefix("GET ") && last.contains(S3Storage.markerKey) && last.contains(" 304"), "\(proxy.requests)")
    }
}
