import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// A snapshot checked a block at a time (Spec/log-format.md, "Block checksums"): a command
/// naming one task checks only the blocks it reads, never answers from a damaged one, and
/// refuses an unknown id without reading the saved tasks.
@Suite("Snapshot blocks")
struct SnapshotBlockTests {
    let dir = TemporaryDirectory()

    /// A compacted store of 3,000 tasks with titles long enough that the body spans several
    /// blocks, the last three subtasks of the eighth, and its snapshot's parts.
    func largeStore() throws -> (store: CLIStore, parts: SnapshotParts, ids: [TaskID]) {
        let path = dir.sub("store")
        let store = try TaskStore.open(at: path)
        let ids = (0..<3_000).map { TaskID(uuidHigh: UInt64($0 + 1) &* 0x9E37_79B9_7F4A_7C15, low: UInt64($0)) }
        for first in stride(from: 0, to: ids.count, by: 500) {
            try store.commit(ids[first..<(first + 500)].enumerated().flatMap { i, id -> [TaskOperation] in
                [.add(id), .set(id, .title("task \(first + i) with a title long enough to fill the blocks"))]
            })
        }
        try store.commit(ids.suffix(3).map { .set($0, .parent(ids[7])) })
        _ = try store.compact()
        let parts = SnapshotParts(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + "/snapshot"))))
        #expect(parts.bodyBlocks.count >= 5)
        return (CLIStore(path: path), parts, ids)
    }

    /// Writes `parts`' bytes with the byte at `at` changed, the block table left as it was.
    func damage(_ store: CLIStore, _ parts: SnapshotParts, at: Int) throws {
        var bytes = parts.bytes
        bytes[at] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: store.full("snapshot")))
    }

    @Test("a damaged block in the body is found by the one-task command that reads it, which answers from the logs with a warning; other blocks go unread")
    func damagedBodyBlock() throws {
        let (store, parts, _) = try largeStore()
        let offsets = parts.offsets
        // A task in the middle of the third block (which holds only tasks), damaged in its
        // title; another in the second block.
        let last = try #require(offsets.first { $0.value >> (parts.blockShift - 1) == 5 })
        let other = try #require(offsets.first { parts.block(of: $0.value) == 1 }).key
        let expected = try [last.key, other].map { try store.ok("show", $0.rawValue) }
        let title = Array("with a title".utf8)
        let start = parts.body.lowerBound + last.value
        let at = try #require((start..<parts.body.upperBound).first { Array(parts.bytes[$0..<($0 + title.count)]) == title })
        try damage(store, parts, at: at + 1)
        let unread = try store.run("show", other.rawValue)
        #expect(unread.status == 0 && unread.stderr.isEmpty && unread.stdout == expected[1], "\(unread)")
        let found = try store.run("show", last.key.rawValue)
        #expect(found.status == 0 && found.stdout == expected[0], "\(found)")
        #expect(found.stderr.contains("checksum mismatch") && found.stderr.contains("rebuilding the state from the logs"), "\(found)")
        _ = try store.ok("done", last.key.rawValue)
        #expect(try store.ok("show", last.key.rawValue, "--json").contains("\"done\":true"))
        // Loading the state saved a fresh snapshot; a listing checks every block of it.
        let fresh = SnapshotParts(try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.full("snapshot")))))
        try damage(store, fresh, at: fresh.body.lowerBound + fresh.bodyBlocks[2].lowerBound + 100)
        let listed = try store.run("list", "--all")
        #expect(listed.status == 0 && listed.stderr.contains("checksum mismatch"), "\(listed)")
    }

    @Test("a damaged block of the task index is found by a lookup through it, and the store answers from the logs")
    func damagedIndexBlock() throws {
        let (store, parts, ids) = try largeStore()
        let id = ids[1_234]
        let expected = try store.ok("show", id.rawValue)
        // The task's own entry: any lookup of it reads it.
        let entry = try #require(parts.entryPosition(of: parts.offsets[id]!))
        try damage(store, parts, at: entry + 2)
        let shown = try store.run("show", id.rawValue)
        #expect(shown.status == 0 && shown.stdout == expected && shown.stderr.contains("checksum mismatch"), "\(shown)")
        _ = try store.ok("rm", id.rawValue)
        let removed = try store.run("show", id.rawValue)
        #expect(removed.status == 1 && removed.stderr.contains("was deleted; run 'tasklog restore"), "\(removed)")
        #expect(try store.tasks("--all").count == ids.count - 1)
    }

    @Test("an unknown id is refused with the same message from the snapshot as from the logs, without reading the saved tasks")
    func unknownIDWithoutReadingTheBody() throws {
        let (store, parts, ids) = try largeStore()
        // Damage a middle block of the body: a refusal that read every task would find it.
        try damage(store, parts, at: parts.body.lowerBound + parts.bodyBlocks[2].lowerBound + 100)
        let unknown = ["00000000-0000-4000-8000-000000000000", "ffffffff-0000-4000-8000-000000000000", "nosuchtask", "zzzz", "abc"]
        var fromSnapshot: [String] = []
        for text in unknown {
            let library = try TaskStore.open(at: store.path, create: false)
            #expect(throws: StoreError.taskNotFound(text)) { try library.resolve(text) }
            #expect(library.warnings.isEmpty, "the damaged block was not read for \(text)")
            for command in [["show", text], ["done", text], ["edit", text, "--title", "x"], ["rm", text]] {
                let r = try store.run(command)
                #expect(r.status == 1, "\(command): \(r)")
                fromSnapshot.append(r.stderr)
            }
        }
        let elsewhere = try #require(ids.first { parts.block(of: parts.offsets[$0]!) == 3 })
        #expect(try store.run("show", elsewhere.rawValue).stderr.isEmpty)
        try FileManager.default.removeItem(atPath: store.full("snapshot"))
        var fromLogs: [String] = []
        for text in unknown {
            for command in [["show", text], ["done", text], ["edit", text, "--title", "x"], ["rm", text]] {
                fromLogs.append(try store.run(command).stderr)
            }
        }
        #expect(fromSnapshot == fromLogs)
    }

    @Test("show and done find a task's subtasks through the child index, reading none of the blocks between")
    func subtasksThroughTheChildIndex() throws {
        let (store, parts, ids) = try largeStore()
        let offsets = parts.offsets
        #expect(parts.childIndexEntries.map(\.offset).sorted() == ids.suffix(3).map { offsets[$0]! }.sorted())
        try damage(store, parts, at: parts.body.lowerBound + parts.bodyBlocks[parts.bodyBlocks.count / 2].lowerBound + 100)
        let shown = try store.run("show", ids[7].rawValue)
        #expect(shown.status == 0 && shown.stderr.isEmpty, "\(shown)")
        for child in ids.suffix(3) { #expect(shown.stdout.contains(String(child.rawValue.prefix(8))), "\(shown)") }
        let refused = try store.run("done", ids[7].rawValue)
        #expect(refused.status == 1 && refused.stderr.contains("has 3 open subtasks"), "\(refused)")
        let parent = try store.run("show", ids[2_999].rawValue)
        #expect(parent.status == 0 && parent.stderr.isEmpty && parent.stdout.contains(String(ids[7].rawValue.prefix(8))), "\(parent)")
    }

    @Test("a snapshot of an earlier version is rebuilt from the logs without a warning, and saved again in this version")
    func earlierVersionIsRebuilt() throws {
        let store = CLIStore(path: dir.sub("old"))
        for i in 0..<20 { _ = try store.ok("add", "task \(i)") }
        _ = try store.ok("compact")
        let ids = try store.tasks().map { $0["id"] as! String }
        let listed = try store.ok("list", "--all", "--json")
        // Version 2: a 20-byte header, then the body, as builds before block checksums wrote it.
        let body = SnapshotParts(try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.full("snapshot"))))).bodyBytes
        var old: [UInt8] = Array("TSNP".utf8) + [2, 1, 0, 0]
        for v in [UInt32(body.count), UInt32(body.count), Checksum.xxh32(body)] { withUnsafeBytes(of: v.littleEndian) { old += $0 } }
        try Data(old + body).write(to: URL(fileURLWithPath: store.full("snapshot")))
        #expect(try store.ok("list", "--all", "--json") == listed)
        let shown = try store.run("show", ids[3])
        #expect(shown.status == 0 && shown.stderr.isEmpty && shown.stdout.contains("task 3"), "\(shown)")
        let done = try store.run("done", ids[4])
        #expect(done.status == 0 && done.stderr.isEmpty, "\(done)")
        #expect(try store.ok("replay", "--verify").contains("no saved state"))
        _ = try store.ok("compact")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.full("snapshot")))[4] == FormatConstants.snapshotVersion)
        #expect(try store.ok("replay", "--verify").contains("verified"))
    }
}

/// The parts of a snapshot file of this build, as Spec/log-format.md lays them out.
struct SnapshotParts {
    static let headerSize = 24
    let bytes: [UInt8]
    let body: Range<Int>
    let taskIndex: Range<Int>
    let childIndex: Range<Int>
    /// Blocks of `1 << blockShift` bytes from the start of the body.
    let blockShift: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        blockShift = Int(bytes[6])
        func u32(_ at: Int) -> Int { Int(bytes[at..<(at + 4)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian }) }
        body = Self.headerSize..<(Self.headerSize + u32(8))
        taskIndex = body.upperBound..<(body.upperBound + u32(12))
        childIndex = taskIndex.upperBound..<(taskIndex.upperBound + u32(16))
    }

    var bodyBytes: [UInt8] { Array(bytes[body]) }

    /// The task index's entries: each id's key and where its task starts in the body.
    var taskIndexEntries: [(key: UInt64, offset: Int)] { entries(taskIndex) }

    private func entries(_ index: Range<Int>) -> [(key: UInt64, offset: Int)] {
        stride(from: index.lowerBound + 8, to: index.upperBound, by: 12).map { at in
            bytes[at..<(at + 12)].withUnsafeBytes {
                ($0.loadUnaligned(as: UInt64.self).littleEndian, Int($0.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian))
            }
        }
    }

    /// The child index's entries: each parent's key and where its child starts in the body.
    var childIndexEntries: [(key: UInt64, offset: Int)] { entries(childIndex) }

    /// Where each task starts in the body, as the task index lists it.
    var offsets: [TaskID: Int] {
        let saved = SharedBytes(bodyBytes)
        let head = try! StateCodec.lookupHead(of: saved)
        return Dictionary(uniqueKeysWithValues: taskIndexEntries.map { (try! StateCodec.taskID(at: $0.offset, in: saved, head).id, $0.offset) })
    }

    /// Where in the file the index entry for the task at body offset `offset` lies.
    func entryPosition(of offset: Int) -> Int? {
        taskIndexEntries.firstIndex { $0.offset == offset }.map { taskIndex.lowerBound + 8 + 12 * $0 }
    }

    /// The block holding the body's byte at `offset`.
    func block(of offset: Int) -> Int { offset >> blockShift }

    /// The body's bytes in each block that holds some.
    var bodyBlocks: [Range<Int>] {
        stride(from: 0, to: body.count, by: 1 << blockShift).map { $0..<min($0 + 1 << blockShift, body.count) }
    }

    /// `bytes` with the block table written for what the blocks hold now.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        let parts = SnapshotParts(bytes)
        let covered = Array(bytes[parts.body.lowerBound..<parts.childIndex.upperBound])
        return Array(bytes[..<parts.childIndex.upperBound]) + table(covering: covered, blockShift: parts.blockShift)
    }

    /// A snapshot file holding `body` and no indexes, in blocks of 16 KiB.
    static func file(body: [UInt8]) -> [UInt8] {
        var header: [UInt8] = Array("TSNP".utf8) + [FormatConstants.snapshotVersion, 1, 14, 0]
        for v in [UInt32(body.count), 0, 0] { withUnsafeBytes(of: v.littleEndian) { header += $0 } }
        withUnsafeBytes(of: Checksum.xxh32(header).littleEndian) { header += $0 }
        return header + body + table(covering: body, blockShift: 14)
    }

    /// The checksums of the blocks of `covered`, and the table's own.
    static func table(covering covered: [UInt8], blockShift: Int) -> [UInt8] {
        var table: [UInt8] = []
        for start in stride(from: 0, to: covered.count, by: 1 << blockShift) {
            let sum = covered[start..<min(start + 1 << blockShift, covered.count)].withUnsafeBytes { Checksum.xxh3($0) }
            withUnsafeBytes(of: sum.littleEndian) { table += $0 }
        }
        withUnsafeBytes(of: table.withUnsafeBytes { Checksum.xxh3($0) }.littleEndian) { table += $0 }
        return table
    }
}
