import Foundation
@_spi(Engine) import TaskStore
@_spi(Engine) @testable import TaskSync
import Testing

/// Key epoch files forged into an encrypted folder by anyone who can write there.
@Suite struct ForgedEpochTests {
    let dir = TemporaryDirectory()

    /// Writes `count` epoch files after `first` that parse, name the folder's id and ask for the
    /// highest cost a reader accepts, but that no passphrase opens and no key endorsed.
    static func forge(_ count: Int, after first: UInt32, in folder: String) throws {
        let text = try String(contentsOfFile: folder + "/tasklog-epoch-00000001", encoding: .utf8)
        let folderID = try #require(text.split(separator: "\n").first { $0.hasPrefix("folder ") }).dropFirst(7)
        func hex(_ n: Int) -> String { (0..<n).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() }
        for epoch in first + 1...first + UInt32(count) {
            let forged = "tasklog-folder-epoch 1\nfolder \(folderID)\nepoch \(epoch)\nargon2id 16 1073741824\nsalt \(hex(16))\n"
                + "check \(hex(32))\nprevious \(hex(72))\nendorsement \(hex(32))\n"
            let name = String(format: "%@/tasklog-epoch-%08x", folder, epoch)
            try forged.write(toFile: name, atomically: true, encoding: .utf8)
        }
    }

    @Test("Fifteen forged epochs at the highest cost are never derived: one derivation to join, one to refuse a wrong passphrase")
    func forgedEpochsCostNothing() throws {
        let shared = try dir.folder("shared")
        let owner = try TaskStore.open(at: dir.sub("owner"))
        let cheap = KeyCost(opsLimit: 1, memLimit: 8 << 10)
        _ = try FolderKeyring.encrypt(folder: shared, store: owner, passphrase: Array("right".utf8), cost: cheap)
        try Self.forge(15, after: 1, in: shared)
        #expect(try EpochFiles.read(LocalFolderStorage(folder: shared)).count == 16)
        for (name, passphrase, opens) in [("joiner", "right", true), ("stranger", "wrong", false)] {
            let store = try TaskStore.open(at: dir.sub(name))
            let count = DerivationCount()
            let result = EpochFile.$derivations.withValue(count) {
                Result { try FolderKeyring.unlock(folder: shared, store: store, passphrase: Array(passphrase.utf8)) }
            }
            #expect(count.value == 1, "\(name): \(count.value) derivations")
            if opens { #expect(try result.get()?.epoch == 1) } else {
                #expect(throws: EncryptionError.wrongPassphrase(folder: shared)) { try result.get() }
            }
        }
    }

    @Test("After real rekeys, the newest passphrase opens every epoch, trying only the real ones below forged ones")
    func rekeyedFolderWithForgedEpochsJoins() throws {
        let shared = try dir.folder("shared")
        let owner = try TaskStore.open(at: dir.sub("owner"))
        let cheap = KeyCost(opsLimit: 1, memLimit: 8 << 10)
        var keyring = try FolderKeyring.encrypt(folder: shared, store: owner, passphrase: Array("one".utf8), cost: cheap)
        keyring = try keyring.rekey(folder: shared, store: owner, passphrase: Array("two".utf8), cost: cheap)
        keyring = try keyring.rekey(folder: shared, store: owner, passphrase: Array("three".utf8), cost: cheap)
        try Self.forge(13, after: 3, in: shared)
        let count = DerivationCount()
        let joined = try EpochFile.$derivations.withValue(count) {
            try FolderKeyring.unlock(folder: shared, store: try TaskStore.open(at: dir.sub("joiner")), passphrase: Array("three".utf8))
        }
        #expect(joined?.epoch == 3 && joined?.keys == keyring.keys)
        #expect(count.value == 3, "\(count.value) derivations")
        // The old passphrase opens epoch 1 and learns that epoch 2 was endorsed: a rekey.
        #expect(throws: EncryptionError.rekeyed(folder: shared, known: 1)) {
            try FolderKeyring.unlock(folder: shared, store: try TaskStore.open(at: dir.sub("old")), passphrase: Array("one".utf8))
        }
    }

    @Test("A rekey may not ask more of readers than the first epoch did")
    func rekeyCostlierThanTheFirstIsRefused() throws {
        let shared = try dir.folder("shared")
        let owner = try TaskStore.open(at: dir.sub("owner"))
        let keyring = try FolderKeyring.encrypt(
            folder: shared, store: owner, passphrase: Array("one".utf8), cost: KeyCost(opsLimit: 1, memLimit: 8 << 10))
        #expect(throws: EncryptionError.costAboveFirstEpoch(folder: shared)) {
            try keyring.rekey(folder: shared, store: owner, passphrase: Array("two".utf8), cost: KeyCost(opsLimit: 2, memLimit: 8 << 10))
        }
        #expect(try EpochFiles.read(LocalFolderStorage(folder: shared)).count == 1)
    }

    @Test("Through the binary, a folder with fifteen forged epochs at the highest cost: the right passphrase joins, a wrong one is refused")
    func joinThroughTheBinaryWithForgedEpochs() throws {
        let shared = try dir.folder("shared")
        let pass = dir.sub("right")
        let wrong = dir.sub("wrong")
        try "correct horse\n".write(toFile: pass, atomically: true, encoding: .utf8)
        try "wrong horse\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let (a, b, c) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")), CLIStore(path: dir.sub("c")))
        try a.ok("add", "from a")
        try a.ok("sync", shared, "--encrypt", "--passphrase-file", pass)
        try Self.forge(15, after: 1, in: shared)
        try b.ok("sync", shared, "--passphrase-file", pass)
        #expect(try b.tasks().map { $0["title"] as? String } == ["from a"])
        let refused = try c.run("sync", shared, "--passphrase-file", wrong)
        #expect(refused.status == 1 && refused.stderr.contains("does not open"), "\(refused)")
        let asked = try c.run("sync", shared)
        #expect(asked.status == 1 && asked.stderr.contains("--passphrase-file F or TASKLOG_PASSPHRASE"), "\(asked)")
    }
}
