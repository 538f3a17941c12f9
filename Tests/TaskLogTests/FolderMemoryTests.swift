import Foundation
import Testing
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) @testable import TaskSync
@_spi(Engine) import TaskSyncRemote
import TaskSim

/// The idle probe's memory kept in the store (Spec/sync-folder.md, "Requests"): each
/// one-shot sync is a new process, standing here as a new FolderSync on the same store.
@Suite("folder memory across processes")
struct FolderMemoryTests {
    let scratch = TemporaryDirectory()

    func store(_ name: String) throws -> TaskStore { try TaskStore.open(at: scratch.sub(name)) }

    func titles(_ s: TaskStore) throws -> [String] { try s.tasks(TaskQuery(status: .all)).map(\.title).sorted() }

    /// One sync by a new engine, as a new process makes it.
    @discardableResult
    func processSync(_ s: TaskStore, _ storage: any FolderStorage, relistAfter: Duration = .seconds(180)) throws -> SyncReport {
        var engine = FolderSync(store: s, storage: storage)
        engine.relistAfter = relistAfter
        return try engine.sync()
    }

    /// `count` devices that each added a task and synced once through `storage`.
    func devices(_ count: Int, _ storage: any FolderStorage) throws -> [TaskStore] {
        try (0..<count).map { i in
            let s = try store("device-\(i)")
            _ = try s.add(NewTask(title: "task \(i)"))
            try processSync(s, storage)
            return s
        }
    }

    func memoryFile(_ s: TaskStore, _ storage: any FolderStorage) -> String {
        FolderMemory.path(store: s.path, location: storage.location)
    }

    @Test("with six devices on a bucket, an idle sync by a new process makes one request: the marker read")
    func idleNewProcessReadsOnlyTheMarker() throws {
        let bucket = CountingStorage(MemoryFolderStorage(seed: 1))
        let stores = try devices(6, bucket)
        let first = stores[0]
        try processSync(first, bucket)  // lists: the others published after its listing
        #expect(try titles(first).count == 6)
        #expect(bucket.requests { _ = try? processSync(first, bucket) } == ["marker": 1])
        #expect(bucket.requests { _ = try? processSync(first, bucket) } == ["marker": 1])
        #expect(FileManager.default.fileExists(atPath: memoryFile(first, bucket)))
    }

    @Test("after another device publishes, a new process lists, imports, and reads only the new object's first bytes")
    func newObjectsAreListedAndImported() throws {
        let bucket = CountingStorage(MemoryFolderStorage(seed: 2))
        let stores = try devices(4, bucket)
        try processSync(stores[0], bucket)
        _ = try stores[2].add(NewTask(title: "later"))
        try processSync(stores[2], bucket)
        var report = SyncReport()
        let made = try bucket.requests { report = try processSync(stores[0], bucket) }
        #expect(report.operationsIn > 0 && report.filesIn == 1)
        #expect(try titles(stores[0]).contains("later"))
        // The new object, and once each the namespaces the last process imported (the fork probe).
        #expect(made == ["marker": 1, "list": 1, "prefix": 1, "segment": 4])
        #expect(bucket.requests { _ = try? processSync(stores[0], bucket) } == ["marker": 1])
    }

    @Test("a damaged memory file makes the next sync list; it still converges and rewrites the file")
    func damagedMemoryLists() throws {
        let bucket = CountingStorage(MemoryFolderStorage(seed: 3))
        let stores = try devices(3, bucket)
        try processSync(stores[0], bucket)
        let path = memoryFile(stores[0], bucket)
        var bytes = try #require(try Posix.readFile(path))
        bytes[bytes.count / 2] ^= 0x01
        try Posix.writeAtomically(path, bytes)
        _ = try stores[1].add(NewTask(title: "while damaged"))
        try processSync(stores[1], bucket)
        let made = try bucket.requests { try processSync(stores[0], bucket) }
        #expect(made["list"] == 1)
        #expect(try titles(stores[0]) == titles(stores[1]))
        let rewritten = try #require(try Posix.readFile(path))
        #expect(FolderMemory.decode(rewritten, location: bucket.location) != nil)
        try Posix.writeAtomically(path, Array("junk".utf8))
        #expect(try bucket.requests { try processSync(stores[0], bucket) }["list"] == 1)
        #expect(bucket.requests { _ = try? processSync(stores[0], bucket) } == ["marker": 1])
    }

    @Test("a memory older than the relist interval, or from the future, makes a new process list")
    func staleMemoryLists() throws {
        let bucket = CountingStorage(MemoryFolderStorage(seed: 4))
        let stores = try devices(2, bucket)
        try processSync(stores[0], bucket)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(try bucket.requests { try processSync(stores[0], bucket, relistAfter: .milliseconds(20)) }["list"] == 1)
        let path = memoryFile(stores[0], bucket)
        let saved = try #require(try Posix.readFile(path))
        var kept = try #require(FolderMemory.decode(saved, location: bucket.location))
        kept.listing?.at = Posix.wallClockMilliseconds() + 3_600_000
        try Posix.writeAtomically(path, FolderMemory.encode(kept, location: bucket.location))
        #expect(try bucket.requests { try processSync(stores[0], bucket) }["list"] == 1)
        #expect(bucket.requests { _ = try? processSync(stores[0], bucket) } == ["marker": 1])
    }

    @Test("a marker change owed by one process is made first by the next")
    func owedMarkSurvives() throws {
        let memory = MemoryFolderStorage(seed: 5)
        let bucket = CountingStorage(memory)
        let stores = try devices(2, bucket)
        _ = try stores[0].add(NewTask(title: "unannounced"))
        var faults = BucketFaults()
        faults.lostMarkerChanges = 1
        memory.faults = faults
        #expect(throws: SyncError.self) { try processSync(stores[0], bucket) }
        memory.faults = .none
        let made = try bucket.requests { try processSync(stores[0], bucket) }
        #expect(made["mark"] == 1)
    }

    @Test("a local folder keeps its memory in the process only: nothing new is written to the store")
    func localFolderWritesNoMemory() throws {
        let s = try store("local")
        _ = try s.add(NewTask(title: "here"))
        let folder = try scratch.folder("shared")
        for _ in 0..<2 { _ = try FolderSync(store: s, folder: folder).sync() }
        #expect(!FileManager.default.fileExists(atPath: Posix.join(s.path, "folder-memory")))
    }

    @Test("over SeaweedFS S3, an idle sync by a new process makes one request however many devices share the prefix")
    func idleOverSeaweedFS() throws {
        let server = try S3TestServer(.seaweedfs)
        defer { server.stop() }
        let bucket = CountingStorage(server.storage(prefix: "shared"))
        let stores = try devices(5, bucket)
        try processSync(stores[0], bucket)
        #expect(bucket.requests { _ = try? processSync(stores[0], bucket) } == ["marker": 1])
        _ = try stores[3].add(NewTask(title: "from three"))
        try processSync(stores[3], bucket)
        let report = try processSync(stores[0], bucket)
        #expect(report.operationsIn > 0)
        #expect(try titles(stores[0]) == titles(stores[3]))
        #expect(bucket.requests { _ = try? processSync(stores[0], bucket) } == ["marker": 1])
    }
}
