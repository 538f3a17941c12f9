@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
import Testing

/// `TaskStore.integrate(segment:)`: a segment as it arrived, applied while it decodes.
@Suite("integrating a segment as it arrived")
struct SegmentIntegrationTests {
    let dir = TemporaryDirectory()

    func open(_ name: String) throws -> TaskStore {
        var o = TaskStore.Options()
        o.durable = false
        return try TaskStore.open(at: dir.sub(name), options: o)
    }

    /// `count` tasks with notes that do not compress much, so that their segment is long
    /// enough (over 64 KiB) to be decoded on a second thread.
    func fill(_ store: TaskStore, tasks count: Int, seed: UInt64) throws {
        var x = seed
        func word() -> String {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return String(x >> 20, radix: 36)
        }
        for i in 0..<count {
            let id = try store.add(title: "task \(i) \(word())").id
            try store.commit([.set(id, .notes((0..<6).map { _ in word() }.joined(separator: " ")))])
            if i % 7 == 0 { try store.commit([.set(id, .done(true))]) }
        }
    }

    func logFiles(_ store: TaskStore, of replica: ReplicaID) throws -> [Data] {
        let folder = store.path + "/logs/" + replica.hex
        guard FileManager.default.fileExists(atPath: folder) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tlog") && $0 != "tail.tlog" }
            .map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
    }

    @Test("a segment new to the store is kept byte for byte, and gives the state its decoded commits give")
    func newSegmentIsKeptAndGivesTheSameState() throws {
        let a = try open("a")
        try fill(a, tasks: 2_000, seed: 1)
        let segment = SegmentFile.encode(replica: a.replica, commits: try a.commits(of: a.replica, after: 0))
        #expect(segment.count > 64 << 10)
        let b = try open("b"), c = try open("c")
        try fill(b, tasks: 50, seed: 2)
        try fill(c, tasks: 0, seed: 2)
        try c.integrate(try b.commits(of: b.replica, after: 0), from: b.replica)
        let before = try b.state()

        let streamed = try b.integrate(segment: segment)
        let decoded = try c.integrate(try a.commits(of: a.replica, after: 0), from: a.replica)
        #expect(streamed.operations == decoded.operations)
        #expect(streamed.operations == (try a.version[a.replica]))
        #expect(try logFiles(b, of: a.replica) == [Data(segment)])
        let merged = try b.state()
        #expect(merged == before.merging(try a.state()))
        #expect(try TaskStore.open(at: b.path).state() == merged)  // as read back from the files
        #expect(try c.state().liveTasks == merged.liveTasks)
        // Again: nothing new.
        #expect(try b.integrate(segment: segment).operations == 0)
        #expect(try b.state() == merged)
    }

    @Test("a segment whose later record does not decode imports nothing, though an earlier record was applied first")
    func segmentFailingToDecodeImportsNothing() throws {
        let a = try open("a")
        try fill(a, tasks: 40, seed: 3)
        let commits = try a.commits(of: a.replica, after: 0)
        let half = commits.count / 2
        func ops(_ part: ArraySlice<Commit>) -> UInt64 { part.reduce(0) { $0 + UInt64($1.operations.count) } }
        // Checksums hold, but the second record claims one operation more than its payload holds.
        var damaged = SegmentHeader(kind: .sealed, replica: a.replica.bytes, firstSeq: 1).encoded()
        damaged += RecordFraming.encode(
            type: .commits, firstSeq: 1, opCount: ops(commits[..<half]), payload: CommitCodec.encode(Array(commits[..<half])))
        damaged += RecordFraming.encode(
            type: .commits, firstSeq: commits[half].firstSeq, opCount: ops(commits[half...]) + 1,
            payload: CommitCodec.encode(Array(commits[half...])))
        let b = try open("b")
        try fill(b, tasks: 10, seed: 4)
        let before = try b.state()

        #expect(throws: StoreError.self) { try b.integrate(segment: damaged) }
        #expect(try b.state() == before)
        #expect(try b.version[a.replica] == 0)
        #expect(try logFiles(b, of: a.replica).isEmpty)
        // The store goes on: its own commits, then the undamaged segment.
        try b.add(title: "after the refusal")
        let whole = SegmentFile.encode(replica: a.replica, commits: commits)
        #expect(try b.integrate(segment: whole).operations == ops(commits[...]))
        #expect(try TaskStore.open(at: b.path).state() == b.state())
    }

    @Test("a segment whose first commit is not later than the last one held is refused, and nothing is imported")
    func segmentGoingBackInTimeIsRefused() throws {
        let a = try open("a")
        try fill(a, tasks: 5, seed: 5)
        let commits = try a.commits(of: a.replica, after: 0)
        let b = try open("b")
        try b.integrate(segment: SegmentFile.encode(replica: a.replica, commits: commits))
        let before = try b.state()
        let held = try b.version[a.replica]
        let task = commits[0].operations.first!.task!
        let stale = Commit(firstSeq: held + 1, time: commits[0].time, operations: [.set(task, .title("from the past"))])
        #expect(throws: StoreError.self) { try b.integrate(segment: SegmentFile.encode(replica: a.replica, commits: [stale])) }
        #expect(try b.state() == before)
    }

    @Test("bytes that are not an undamaged sealed segment are refused with the reason")
    func notASegmentIsRefused() throws {
        let a = try open("a")
        try fill(a, tasks: 3, seed: 6)
        var segment = SegmentFile.encode(replica: a.replica, commits: try a.commits(of: a.replica, after: 0))
        segment[segment.count - 3] ^= 0xFF
        let b = try open("b")
        let error = #expect(throws: StoreError.self) { try b.integrate(segment: segment) }
        #expect(error.map { "\($0)" }?.contains("checksum") == true)
        #expect(throws: StoreError.self) { try b.integrate(segment: Array("not a segment".utf8)) }
        #expect(try b.version[a.replica] == 0)
    }

    @Test("observers hear of every commit of a segment applied while it decodes")
    func observersHearEveryCommit() async throws {
        let a = try open("a")
        try fill(a, tasks: 2_000, seed: 7)
        let commits = try a.commits(of: a.replica, after: 0)
        let b = try open("b")
        _ = try b.state()
        var changes = b.observeChanges().makeAsyncIterator()
        try b.integrate(segment: SegmentFile.encode(replica: a.replica, commits: commits))
        var heard: [Commit] = []
        for _ in commits.indices {
            guard let change = await changes.next() else { break }
            #expect(change.replica == a.replica && !change.isLocal)
            heard.append(change.commit)
        }
        #expect(heard == commits)
    }

    @Test("a folder sync keeps a file new to the store as it lies in the folder")
    func folderSyncKeepsNewFilesAsTheyAre() throws {
        let folder = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let a = try open("a")
        try fill(a, tasks: 300, seed: 8)
        _ = try FolderSync(store: a, folder: folder).sync()
        let published = try FileManager.default.contentsOfDirectory(atPath: folder + "/tasklog-" + a.replica.hex)
            .map { try Data(contentsOf: URL(fileURLWithPath: folder + "/tasklog-" + a.replica.hex + "/" + $0)) }
        let b = try open("b")
        let report = try FolderSync(store: b, folder: folder).sync()
        #expect(report.operationsIn == (try a.version[a.replica]))
        #expect(Set(try logFiles(b, of: a.replica)) == Set(published))
        #expect(try b.state().liveTasks == a.state().liveTasks)
    }
}
