import Foundation
import Testing

/// Imports larger than one log record may hold (64 MiB of payload), through the real binary.
@Suite struct LargeImportTests {
    /// A todo.txt of `lines` tasks whose titles are `titleBytes` long: few lines, so the file
    /// passes 64 MiB of commit payload with the least work.
    static func todoTxt(lines: Int, titleBytes: Int) -> Data {
        var text = Data()
        text.reserveCapacity(lines * (titleBytes + 40))
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: titleBytes - 10)
        for i in 0..<lines {
            text.append(contentsOf: Array(String(format: "(B) T%08d ", i).utf8))
            text.append(contentsOf: filler)
            text.append(contentsOf: Array(" +big due:2026-12-24\n".utf8))
        }
        return text
    }

    /// The `sync --json` object's `sent.operations`.
    static func sentOperations(_ output: String) throws -> Int {
        let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        return (object?["sent"] as? [String: Any])?["operations"] as? Int ?? -1
    }

    @Test("An import past the 64 MiB one log record holds reads back whole: verify, compact and sync keep every task")
    func anImportPastOneRecordReadsBackWhole() throws {
        let dir = TemporaryDirectory()
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "before the import")
        let lines = 1_050
        let file = dir.sub("big.txt")
        // 1,050 titles of 66,000 bytes: 69 MB of payload in one change.
        try Self.todoTxt(lines: lines, titleBytes: 66_000).write(to: URL(fileURLWithPath: file))
        let imported = try store.ok("import", file)
        #expect(imported.contains("imported \(lines) tasks: \(lines) created"), "\(imported)")
        // The first task is an add and a title; each imported one adds a priority, a due date
        // and a tag.
        let operations = 2 + lines * 5
        try store.ok("replay", "--verify")
        let status = try JSONSerialization.jsonObject(with: Data(try store.ok("status", "--json").utf8)) as? [String: Any]
        #expect(status?["ops"] as? Int == operations)
        try store.ok("compact")
        try store.ok("replay", "--verify")
        #expect(try store.tasks().count == lines + 1)
        let synced = try store.ok("sync", try dir.folder("shared"), "--json")
        #expect(try Self.sentOperations(synced) == operations, "\(synced)")
        let other = CLIStore(path: dir.sub("other"))
        try other.ok("sync", dir.sub("shared"))
        #expect(try other.tasks().count == lines + 1)
        let served = CLIStore(path: dir.sub("served"))
        try served.ok("init")
        let server = try ServerProcess(store: served.path, dir: dir)
        defer { _ = server.stop() }
        let pushed = try store.ok("sync", server.url, "--token", "sekrit", "--json")
        #expect(try Self.sentOperations(pushed) == operations, "\(pushed)")
        #expect(try served.tasks().count == lines + 1)
        // The store goes on: a later commit follows the imported ones.
        try store.ok("add", "after the import")
        try store.ok("replay", "--verify")
    }

    @Test("A single commit larger than the usual push bundle still travels to an HTTP peer")
    func aCommitPastTheUsualBundleIsPushed() throws {
        let dir = TemporaryDirectory()
        let store = CLIStore(path: dir.sub("store"))
        // 9 MiB of base64 text, which LZ4 hardly shrinks: one operation, so one commit.
        var random = [UInt8](repeating: 0, count: 7 << 20)
        for i in random.indices { random[i] = UInt8.random(in: 0...255) }
        let title = Data(random).base64EncodedString()
        let file = dir.sub("one.json")
        try Data("[{\"title\": \"\(title)\"}]".utf8).write(to: URL(fileURLWithPath: file))
        try store.ok("import", file)
        let served = CLIStore(path: dir.sub("served"))
        try served.ok("init")
        let server = try ServerProcess(store: served.path, dir: dir)
        defer { _ = server.stop() }
        try store.ok("sync", server.url, "--token", "sekrit")
        #expect(try served.tasks().map { $0["title"] as? String } == [title])
    }

    @Test("A value longer than one log record may hold is refused in one line, and nothing is written")
    func aValuePastOneRecordIsRefusedWithNothingWritten() throws {
        let dir = TemporaryDirectory()
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("add", "before the import")
        let before = TemporaryDirectory.contents(store.path)
        let file = dir.sub("huge.json")
        var json = Data("[{\"title\": \"".utf8)
        json.append(contentsOf: [UInt8](repeating: UInt8(ascii: "y"), count: (64 << 20) + 1))
        json.append(contentsOf: Array("\"}]".utf8))
        try json.write(to: URL(fileURLWithPath: file))
        let r = try store.run("import", file)
        #expect(r.status == 1)
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r)")
        #expect(r.stderr.contains("more than the 64 MiB one log record may hold"), "\(r)")
        #expect(r.stderr.contains("nothing was imported"), "\(r)")
        #expect(TemporaryDirectory.contents(store.path) == before)
        try store.ok("replay", "--verify")
    }
}
