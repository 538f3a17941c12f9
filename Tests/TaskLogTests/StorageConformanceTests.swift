import Foundation
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) @testable import TaskSync
import Testing

/// The folder protocol over every storage (StorageUnderTest.all): the hostile-folder cases of
/// the local suites (foreign, truncated, damaged, huge and vanishing objects, escapes in names,
/// forks, encrypted folders holding no plaintext), expressed through the storage seam alone.
/// Cases only a file system can pose (links, FIFOs, permissions) stay in HostileFolderTests.
@Suite("storage conformance", .s3Servers, .webDAVServer(.apache))
struct StorageConformanceTests {
    let scratch = TemporaryDirectory()

    func store(_ name: String) throws -> TaskStore { try TaskStore.open(at: scratch.sub(name)) }

    func titles(_ s: TaskStore) throws -> [String] { try s.tasks(TaskQuery(status: .all)).map(\.title).sorted() }

    /// A store that added `title` and published it; the key of its one segment object.
    func publisher(_ name: String, _ title: String, _ backend: StorageUnderTest.Backend) throws -> (TaskStore, String) {
        let s = try store(name)
        _ = try s.add(NewTask(title: title))
        _ = try FolderSync(store: s, storage: backend.storage).sync()
        let prefix = SharedFolder.namespace(of: s.replica) + "/"
        let key = try #require(try backend.storage.list().map(\.key).first { $0.hasPrefix(prefix) && $0.hasSuffix(".tlog") })
        return (s, key)
    }

    @Test("the storage keeps its contract: whole reads, bounded sizes, no replacing create, quiet removals, a marker that moves", arguments: StorageUnderTest.all)
    func contract(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let storage = backend.storage
        let key = "tasklog-" + String(repeating: "a", count: 32) + "/" + String(repeating: "b", count: 32) + "-0000000000000001-0000000000000001.tlog"
        let marker = try storage.changeMarker()
        try storage.publish(Array("whole".utf8), as: key)
        try storage.markChanged()
        if let marker { #expect(try storage.changeMarker() != marker) }
        #expect(try storage.read(key, largest: 5) == Array("whole".utf8))
        #expect(try storage.readPrefix(key, count: 3) == Array("who".utf8))
        #expect(throws: SegmentFile.Invalid.self) { try storage.read(key, largest: 4) }
        #expect(try storage.read("tasklog-epoch-00000009", largest: 10) == nil)
        #expect(try storage.createIfAbsent(Array("first".utf8), as: "tasklog-epoch-00000001"))
        #expect(try !storage.createIfAbsent(Array("second".utf8), as: "tasklog-epoch-00000001"))
        #expect(try storage.read("tasklog-epoch-00000001", largest: 100) == Array("first".utf8))
        let listed = try storage.list().filter { $0.kind == .file }
        #expect(Set(listed.map(\.key)) == [key, "tasklog-epoch-00000001"])
        #expect(listed.allSatisfy { !$0.identity.isEmpty && $0.size == 5 })
        try storage.remove([key, key + ".missing"])
        #expect(try storage.read(key, largest: 5) == nil)
    }

    @Test("foreign objects and junk names are skipped with a note; valid segments import; nothing else changes", arguments: StorageUnderTest.all)
    func foreignObjects(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let (a, key) = try publisher("a", "from a", backend)
        let ns = SharedFolder.namespace(of: a.replica)
        let junk = ["desktop.ini", "notes/README.txt", "\(ns)/.x.tlog.icloud", "\(ns)/~lock.tlog",
                    "\(ns)/seg (conflicted copy 2026-11-30).tlog", "\(ns)/seg.sync-conflict-20261130-1.tlog"]
        for j in junk { try backend.put(Array("junk".utf8), j) }
        let before = try backend.storage.list().map(\.key).sorted()
        let b = try store("b")
        let report = try FolderSync(store: b, storage: backend.storage).sync()
        for j in junk.filter({ $0 != "notes/README.txt" }) {
            #expect(report.skipped.contains { $0.path.hasSuffix(j) }, "\(j): \(report.skipped)")
        }
        #expect(report.skipped.contains { $0.path.hasSuffix("notes") && $0.reason == "not a TaskLog replica folder" })
        #expect(try titles(b) == ["from a"])
        let after = try backend.storage.list().map(\.key)
        #expect(Set(before).isSubset(of: after) && after.contains(key))
        #expect(try backend.storage.read("desktop.ini", largest: 10) == Array("junk".utf8))
    }

    @Test("a truncated object is skipped with a note, and imported once it is complete", arguments: StorageUnderTest.all)
    func truncatedObject(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let (_, key) = try publisher("a", "from a", backend)
        let full = try #require(try backend.storage.read(key, largest: 1 << 20))
        try backend.put(Array(full.dropLast(7)), key)
        let b = try store("b")
        let sync = FolderSync(store: b, storage: backend.storage)
        let report = try sync.sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(key) && $0.reason.contains("next sync") }, "\(report.skipped)")
        #expect(try titles(b).isEmpty)
        try backend.put(full, key)
        _ = try sync.sync()
        #expect(try titles(b) == ["from a"])
    }

    @Test("a damaged object is skipped with a note naming it; the others import; it is left as it was", arguments: StorageUnderTest.all)
    func damagedObject(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        _ = try publisher("a", "from a", backend)
        let (_, cKey) = try publisher("c", "from c", backend)
        var bytes = try #require(try backend.storage.read(cKey, largest: 1 << 20))
        bytes[bytes.count - 3] ^= 0x40
        try backend.put(bytes, cKey)
        let b = try store("b")
        let report = try FolderSync(store: b, storage: backend.storage).sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(cKey) && $0.reason.contains("damaged") }, "\(report.skipped)")
        #expect(try titles(b) == ["from a"])
        #expect(try backend.storage.read(cKey, largest: 1 << 20) == bytes)
    }

    @Test("an object holding another replica's segment under a name it does not match is not imported", arguments: StorageUnderTest.all)
    func objectUnderAnotherName(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let (a, key) = try publisher("a", "from a", backend)
        let forger = ReplicaID.random()
        let forged = SharedFolder.namespace(of: forger) + "/" + SharedFolder.SegmentName(origin: forger, first: 1, last: 2).fileName
        try backend.put(try #require(try backend.storage.read(key, largest: 1 << 20)), forged)
        let b = try store("b")
        let report = try FolderSync(store: b, storage: backend.storage).sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(forged) && $0.reason.contains("do not match its name") }, "\(report.skipped)")
        #expect(try b.version[forger] == 0 && b.version[a.replica] == 2)
    }

    @Test("names holding terminal escapes are noted as they are and import nothing", arguments: StorageUnderTest.all)
    func escapesInNames(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let hostile = "\u{1b}]0;pwned\u{07}\u{1b}[31mRED"
        let ns = SharedFolder.namespace(of: ReplicaID.random())
        try backend.put(Array("x".utf8), hostile + "/file")
        try backend.put(Array("x".utf8), ns + "/" + hostile + ".tlog")
        let b = try store("b")
        let report = try FolderSync(store: b, storage: backend.storage).sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(hostile) && $0.reason == "not a TaskLog replica folder" }, "\(report.skipped)")
        #expect(report.skipped.contains { $0.path.hasSuffix(hostile + ".tlog") && $0.reason == "not a TaskLog segment file" })
        #expect(try titles(b).isEmpty)
    }

    @Test("an object larger than a segment of its name's operations can be is skipped with a note", arguments: StorageUnderTest.all)
    func hugeObject(_ kind: StorageUnderTest) throws {
        let backend = try kind.make(scratch)
        defer { backend.stop() }
        let forger = ReplicaID.random()
        let key = SharedFolder.namespace(of: forger) + "/" + SharedFolder.SegmentName(origin: forger, first: 1, last: 1).fileName
        try backend.put([UInt8](repeating: 0, count: FolderFiles.largestSegment(operations: 1) + 1), key)
        let b = try store("b")
        let report = try FolderSync(store: b, storage: backend.storage).sync()
        #expect(report.skipped.contains { $0.path.hasSuffix(key) && $0.reason.contains("more than a segment of 1 operation can take") }, "\(report.skipped)")
        #expect(try b.version[forger] == 0)
    }
}
