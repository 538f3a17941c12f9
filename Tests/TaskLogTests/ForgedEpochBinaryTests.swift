import Foundation
import Testing

/// Forged key epochs in an encrypted folder: anyone who can write there can add epoch files,
/// and a joining device must not pay a key derivation for each.
@Suite("forged key epochs, through the binary")
struct ForgedEpochBinaryTests {
    let dir = TemporaryDirectory()

    /// A folder encrypted by a store under "correct horse", holding `count` forged epoch files
    /// above its real one, each asking Argon2id for `passes` passes over `memory` bytes.
    func forgedFolder(count: Int, passes: Int, memory: Int) throws -> (folder: String, right: String, wrong: String) {
        let shared = try dir.folder("shared")
        let (right, wrong) = (dir.sub("right"), dir.sub("wrong"))
        try "correct horse\n".write(toFile: right, atomically: true, encoding: .utf8)
        try "wrong horse\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let owner = CLIStore(path: dir.sub("owner"))
        try owner.ok("add", "from the owner")
        try owner.ok("sync", shared, "--encrypt", "--passphrase-file", right)
        let first = try String(contentsOfFile: shared + "/tasklog-epoch-00000001", encoding: .utf8)
        let folderLine = try #require(first.split(separator: "\n").first { $0.hasPrefix("folder ") })
        func hex(_ bytes: Int) -> String { (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }
        for epoch in 2..<(2 + count) {
            let text = "tasklog-folder-epoch 1\n\(folderLine)\nepoch \(epoch)\nargon2id \(passes) \(memory)\nsalt \(hex(16))\n"
                + "check \(hex(32))\nprevious \(hex(72))\nendorsement \(hex(32))\n"
            try text.write(toFile: shared + String(format: "/tasklog-epoch-%08x", epoch), atomically: true, encoding: .utf8)
        }
        return (shared, right, wrong)
    }

    /// Runs a join of a new store with `passphrase`; its result and seconds taken.
    func join(_ folder: String, _ passphrase: String, as name: String) throws -> (CLIResult, Double) {
        let start = Date()
        let r = try CLIStore(path: dir.sub(name)).run(["sync", folder, "--passphrase-file", passphrase], stdin: "")
        return (r, Date().timeIntervalSince(start))
    }

    @Test("a sync refused because the folder lost its epoch files leaves the store byte for byte as it was")
    func refusedSyncChangesNothing() throws {
        let (folder, _, _) = try forgedFolder(count: 0, passes: 2, memory: 64 << 20)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasPrefix("tasklog-epoch-") {
            try FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        let newcomer = CLIStore(path: dir.sub("newcomer"))
        try newcomer.ok("add", "written before the sync")
        let before = TemporaryDirectory.contents(newcomer.path)
        let r = try newcomer.run(["sync", folder], stdin: "")
        #expect(r.status == 1 && r.stderr.contains("nothing was synced"), "\(r)")
        #expect(TemporaryDirectory.contents(newcomer.path) == before)
    }

    @Test("forged epochs at the folder's own cost cost one derivation each at most, and the right passphrase still joins")
    func cheapForgedEpochsAreBounded() throws {
        let (folder, right, wrong) = try forgedFolder(count: 15, passes: 2, memory: 64 << 20)
        let (joined, _) = try join(folder, right, as: "joined")
        #expect(joined.status == 0, "\(joined)")
        let (refused, _) = try join(folder, wrong, as: "refused")
        #expect(refused.status == 1 && refused.stderr.contains("does not open"), "\(refused)")
    }
}
