import Foundation
import Testing

/// Encrypted folders (`sync DIR --encrypt`), driven through the real binary on real folders.
/// Every run gets an empty standard input, so no run waits for a passphrase on a terminal.
@Suite("encrypted folders")
struct EncryptedFolderTests {
    let dir = TemporaryDirectory()

    func store(_ name: String) -> CLIStore { CLIStore(path: dir.sub(name)) }

    func folder(_ name: String) throws -> String { try dir.folder(name) }

    /// A passphrase file holding `text` and a newline.
    func passphrase(_ text: String) throws -> String {
        let p = dir.sub("pass-\(text.utf8.count)-\(UUID().uuidString.prefix(8))")
        try (text + "\n").write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }

    @discardableResult
    func sync(_ s: CLIStore, _ args: String...) throws -> CLIResult { try s.run(["sync"] + args, stdin: "") }

    func syncOK(_ s: CLIStore, _ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try s.run(["sync"] + args, stdin: "")
        #expect(r.status == 0, "sync \(args): \(r)", sourceLocation: sourceLocation)
    }

    func titles(_ s: CLIStore) throws -> Set<String> { Set(try s.tasks().map { $0["title"] as! String }) }

    func contents(_ path: String) -> [String: Data] { TemporaryDirectory.contents(path) }

    /// The secrets found in any byte or name of the folder.
    func leaks(_ secrets: [Data], in path: String) -> [Data] {
        let files = contents(path)
        let names = Data(files.keys.joined(separator: "\n").utf8)
        return secrets.filter { s in names.range(of: s) != nil || files.values.contains { $0.range(of: s) != nil } }
    }

    @Test("nothing in an encrypted folder reveals a task, while the same check finds them in a plaintext folder")
    func encryptedFolderRevealsNoTask() throws {
        let a = store("a")
        let id = try a.ok(
            "add", "Quixotic zeppelin rendezvous", "--notes", "Mauve xylophone memorandum", "--tag", "ultraviolet",
            "--list", "kumquatlist", "--meta", "jabberwock=frabjous"
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        let uuid = UUID(uuidString: id)!.uuid
        let rawID = withUnsafeBytes(of: uuid) { Data($0) }
        let secrets = ["Quixotic zeppelin rendezvous", "Mauve xylophone memorandum", "ultraviolet", "kumquatlist", "jabberwock",
                       "frabjous", id, id.replacingOccurrences(of: "-", with: "")].map { Data($0.utf8) } + [rawID]
        let (plain, sealed) = (try folder("plain"), try folder("sealed"))
        try syncOK(a, plain)
        try syncOK(a, sealed, "--encrypt", "--passphrase-file", try passphrase("correct horse"))
        let status = try a.ok("status")
        #expect(status.contains("(plaintext)") && status.contains("(encrypted, key epoch 1)"), "\(status)")
        #expect(leaks(secrets, in: plain).count >= 3)
        #expect(leaks(secrets, in: sealed).isEmpty)
        #expect(contents(sealed).keys.contains { $0.hasSuffix(".tlog") })
    }

    @Test("a second store joins with the passphrase and converges; later syncs of either need none")
    func joiningStoreConvergesAndRemembersTheKey() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, b) = (store("a"), store("b"))
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try syncOK(b, shared, "--passphrase-file", pass)
        try b.ok("add", "from b")
        try syncOK(b, shared)
        try syncOK(a, shared)
        #expect(try titles(a) == ["from a", "from b"] && titles(b) == ["from a", "from b"])
        let keyFiles = try FileManager.default.contentsOfDirectory(atPath: b.path + "/folder-keys")
        let mode = try FileManager.default.attributesOfItem(atPath: b.path + "/folder-keys/" + keyFiles[0])[.posixPermissions] as? Int
        #expect(keyFiles.count == 1 && mode == 0o600)
    }

    @Test("a missing, empty or wrong passphrase exits 1 with one line, and leaves the folder and the store as they were")
    func missingOrWrongPassphraseChangesNothing() throws {
        let shared = try folder("shared")
        let (a, b) = (store("a"), store("b"))
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", try passphrase("correct horse"))
        try b.ok("add", "from b")
        let (folderBefore, storeBefore) = (contents(shared), contents(b.path))
        for extra in [[], ["--passphrase-file", try passphrase("")], ["--passphrase-file", try passphrase("wrong horse")]] {
            let r = try b.run(["sync", shared] + extra, stdin: "")
            #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(extra): \(r)")
            #expect(r.stderr.contains("encrypted folder") || r.stderr.contains("is encrypted"), "\(r)")
        }
        #expect(contents(shared) == folderBefore && contents(b.path) == storeBefore)
        let usage = try sync(store("c"), try folder("fresh"), "--encrypt")
        #expect(usage.status == 2 && usage.stderr.contains("passphrase"), "\(usage)")
    }

    @Test("a new passphrase typed on a terminal is asked twice; two that differ change nothing")
    func typedPassphraseIsConfirmed() throws {
        let shared = try folder("shared")
        let a = store("a")
        try a.ok("add", "from a")
        let before = (contents(shared), contents(a.path))
        let typing = CalDAVServerTests.fixtures + "/terminal/typing.py"
        let command = ["--", CLI.binary, "--store", a.path, "sync", shared, "--encrypt"]
        let differ = try CalDAVServerTests.run("/usr/bin/python3", [typing, "correct horse", "correct hose"] + command)
        #expect(differ.status == 1 && differ.stdout.contains("The same again: ") && differ.stdout.contains("differ"), "\(differ)")
        #expect(contents(shared) == before.0 && contents(a.path) == before.1)
        let same = try CalDAVServerTests.run("/usr/bin/python3", [typing, "correct horse", "correct horse"] + command)
        #expect(same.status == 0, "\(same)")
        let b = store("b")
        try syncOK(b, shared, "--passphrase-file", try passphrase("correct horse"))
        #expect(try titles(b) == ["from a"])
    }

    /// A folder holding a's sealed file and c's, with `damage` applied to c's; then a new store
    /// joins. It must import a's task, warn about the damaged file by name, and take nothing from it.
    func joinAfterDamage(reason: String, _ damage: (_ shared: String, _ cFile: String) throws -> String) throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, c, d) = (store("a"), store("c"), store("d"))
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try c.ok("add", "from c")
        try syncOK(c, shared, "--passphrase-file", pass)
        let cDirectory = "\(shared)/tasklog-\(try replica(c))"
        let cFile = cDirectory + "/" + (try FileManager.default.contentsOfDirectory(atPath: cDirectory).first { $0.hasSuffix(".tlog") }!)
        let named = try damage(shared, cFile)
        let r = try d.run(["sync", shared, "--passphrase-file", pass], stdin: "")
        #expect(r.status == 0 && r.stderr.contains("skipped \(named): \(reason)"), "\(r)")
        #expect(try titles(d) == ["from a"])
    }

    func replica(_ s: CLIStore) throws -> String {
        let status = try JSONSerialization.jsonObject(with: Data(try s.ok("status", "--json").utf8)) as! [String: Any]
        return status["replica"] as! String
    }

    @Test("a byte flipped inside a sealed file: skipped with a warning naming it, the rest imported")
    func flippedByteIsSkipped() throws {
        try joinAfterDamage(reason: "its signature does not verify") { _, file in
            var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            bytes[bytes.count / 2] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    @Test("a truncated sealed file: skipped with a warning naming it, the rest imported")
    func truncatedFileIsSkipped() throws {
        try joinAfterDamage(reason: "its signature does not verify") { _, file in
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            try bytes.prefix(bytes.count - 70).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    @Test("a sealed file copied under another replica's name: skipped with a warning naming it")
    func sealedFileUnderAnotherNameIsSkipped() throws {
        try joinAfterDamage(reason: "it claims to be written by replica") { shared, file in
            let other = "\(shared)/tasklog-\(String(repeating: "ab", count: 16))"
            try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
            let copy = other + "/" + (file as NSString).lastPathComponent
            try FileManager.default.moveItem(atPath: file, toPath: copy)
            return copy
        }
    }

    @Test("a plaintext segment from an outsider's store copied into the folder: skipped with a warning naming it")
    func outsidersPlaintextIsSkipped() throws {
        try joinAfterDamage(reason: "it is a plaintext segment in an encrypted folder") { shared, file in
            let outsider = store("outsider")
            try outsider.ok("add", "from outsider")
            let plain = try folder("plain")
            try syncOK(outsider, plain)
            let namespace = try FileManager.default.contentsOfDirectory(atPath: plain)[0]
            try FileManager.default.moveItem(atPath: "\(plain)/\(namespace)", toPath: "\(shared)/\(namespace)")
            try FileManager.default.removeItem(atPath: file)
            let name = try FileManager.default.contentsOfDirectory(atPath: "\(shared)/\(namespace)")[0]
            return "\(shared)/\(namespace)/\(name)"
        }
    }

    @Test("after --rekey, the old passphrase or the old key never sees what was written after it; the new one sees all")
    func rekeyShutsOutTheOldPassphrase() throws {
        let shared = try folder("shared")
        let (old, new) = (try passphrase("old horse"), try passphrase("new horse"))
        let (a, b) = (store("a"), store("b"))
        try a.ok("add", "before rekey")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", old)
        try b.ok("add", "from b, before rekey")
        try syncOK(b, shared, "--passphrase-file", old)
        try syncOK(a, shared)
        try syncOK(a, shared, "--rekey", "--passphrase-file", new)
        try a.ok("add", "after rekey")
        try syncOK(a, shared)
        let sealedAfter = contents("\(shared)/tasklog-\(try replica(a))").values.filter { $0[8] == 2 }
        #expect(!sealedAfter.isEmpty && sealedAfter.allSatisfy { $0[9] == 0 && $0[10] == 0 && $0[11] == 0 })
        for (s, extra) in [(b, [String]()), (b, ["--passphrase-file", old]), (store("c"), ["--passphrase-file", old])] {
            let r = try s.run(["sync", shared] + extra, stdin: "")
            #expect(r.status == 1 && r.stderr.contains("rekeyed") && r.stderr.split(separator: "\n").count == 1, "\(r)")
            #expect(try !titles(s).contains("after rekey"))
        }
        let status = try JSONSerialization.jsonObject(with: Data(try a.ok("status", "--json").utf8)) as! [String: Any]
        let folders = status["folders"] as! [[String: Any]]
        #expect(folders.count == 1 && folders[0]["encrypted"] as? Bool == true && folders[0]["epoch"] as? Int == 2)
        // b's files, sealed under epoch 1, are no longer taken; a sealed copies of everything under epoch 2.
        let d = store("d")
        let joined = try d.run(["sync", shared, "--passphrase-file", new], stdin: "")
        #expect(joined.status == 0 && joined.stderr.contains("before the folder was rekeyed"), "\(joined)")
        try syncOK(b, shared, "--passphrase-file", new)
        let all: Set<String> = ["before rekey", "from b, before rekey", "after rekey"]
        #expect(try titles(b) == all && titles(d) == all)
        let again = try d.run(["sync", shared], stdin: "")
        #expect(again.status == 0 && again.stderr.isEmpty, "b replaced its old files: \(again)")
    }

    @Test("a plaintext folder turns encrypted: the store's own plaintext files go, others' are skipped until their owners sync")
    func plaintextFolderBecomesEncrypted() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, b, c) = (store("a"), store("b"), store("c"))
        try a.ok("add", "from a")
        try b.ok("add", "from b")
        for s in [a, b, a] { try syncOK(s, shared) }
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        let aFiles = contents("\(shared)/tasklog-\(try replica(a))")
        #expect(!aFiles.isEmpty && aFiles.values.allSatisfy { $0.prefix(4) == Data("TLSE".utf8) })
        let joined = try c.run(["sync", shared, "--passphrase-file", pass], stdin: "")
        #expect(joined.status == 0 && joined.stderr.contains("plaintext segment in an encrypted folder"), "\(joined)")
        #expect(try titles(c) == ["from a", "from b"])  // b's operations, relayed sealed by a
        try syncOK(b, shared, "--passphrase-file", pass)
        let bFiles = contents("\(shared)/tasklog-\(try replica(b))")
        #expect(bFiles.values.allSatisfy { $0.prefix(4) == Data("TLSE".utf8) })
        let again = try c.run(["sync", shared], stdin: "")
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again)")
    }

    @Test("sync --watch converges live through an encrypted folder with no passphrase, and stops when the folder is rekeyed")
    func watchConvergesLive() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, b) = (store("a"), store("b"))
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try syncOK(b, shared, "--passphrase-file", pass)
        let out = URL(fileURLWithPath: dir.sub("watch"))
        let watcher = try CLI.start(["sync", shared, "--watch", "--interval", "0.1"], store: b.path, stdin: "", output: out)
        defer { if watcher.isRunning { watcher.terminate() } }
        try a.ok("add", "live from a")
        try syncOK(a, shared)
        var seen = false
        for _ in 0..<100 where !seen {
            usleep(100_000)
            seen = try titles(b).contains("live from a")
        }
        try syncOK(a, shared, "--rekey", "--passphrase-file", try passphrase("new horse"))
        let stopped = CLI.collect(watcher, output: out)
        #expect(seen && stopped.status == 1 && stopped.stderr.contains("rekeyed"), "\(stopped)")
    }

    @Test("a copied store that forks in an encrypted folder settles as in a plaintext one, and the signed files are kept as proof")
    func forkInEncryptedFolderKeepsTheProof() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let a = store("a")
        try a.ok("add", "before the copy")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try FileManager.default.copyItem(atPath: a.path, toPath: dir.sub("copy"))
        let copy = store("copy")
        try a.ok("add", "written on the original")
        try copy.ok("add", "written on the copy")
        try syncOK(a, shared)
        let r = try copy.run(["sync", shared], stdin: "")
        #expect(r.status == 0 && r.stderr.contains("fork of replica"), "\(r)")
        for s in [a, copy, a] { try syncOK(s, shared) }
        let all: Set<String> = ["before the copy", "written on the original", "written on the copy"]
        #expect(try titles(a) == all && titles(copy) == all)
        let proofs = TemporaryDirectory.contents(copy.path + "/fork-proofs")
        #expect(!proofs.isEmpty && proofs.values.allSatisfy { $0.prefix(4) == Data("TLSE".utf8) }, "\(proofs.keys)")
    }

    @Test("a sealed file naming a key epoch the folder does not have: skipped with a warning naming it")
    func unknownEpochIsSkipped() throws {
        try joinAfterDamage(reason: "it is sealed under key epoch 9") { _, file in
            var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            bytes[8] = 9
            try bytes.write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    @Test("a replica's files signed by a key other than the pinned one: skipped, even with the passphrase")
    func fileSignedByAnotherKeyIsSkipped() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, c) = (store("a"), store("c"))
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try c.ok("add", "from c")
        try syncOK(c, shared, "--passphrase-file", pass)
        try syncOK(a, shared)
        // c's device key replaced: as if someone with the passphrase wrote under c's name.
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: c.path + "/device-key"))
        try FileManager.default.removeItem(atPath: c.path + "/signers")
        try c.ok("add", "forged as c")
        try syncOK(c, shared)
        let (r, cReplica) = (try a.run(["sync", shared], stdin: ""), try replica(c))
        #expect(r.status == 0 && r.stderr.contains("signed by a key other than the one pinned for replica \(cReplica)"), "\(r)")
        #expect(try titles(a) == ["from a", "from c"])
    }

    @Test("epoch files deleted from the folder: a store that synced it encrypted, or a new one, refuses to sync in plaintext")
    func deletedEpochFilesDoNotTurnEncryptionOff() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let a = store("a")
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try FileManager.default.removeItem(atPath: shared + "/tasklog-epoch-00000001")
        let before = contents(shared)
        for s in [a, store("newcomer")] {
            let r = try s.run(["sync", shared], stdin: "")
            #expect(r.status == 1 && r.stderr.contains("lost or changed its tasklog-epoch-* files"), "\(r)")
        }
        #expect(contents(shared) == before)
    }

    @Test("the newest epoch file deleted after a rekey: a store that knows it refuses, rather than seal under the old key")
    func deletedNewestEpochDoesNotUndoARekey() throws {
        let shared = try folder("shared")
        let a = store("a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", try passphrase("old horse"))
        try syncOK(a, shared, "--rekey", "--passphrase-file", try passphrase("new horse"))
        try FileManager.default.removeItem(atPath: shared + "/tasklog-epoch-00000002")
        try a.ok("add", "after the deletion")
        let r = try a.run(["sync", shared], stdin: "")
        #expect(r.status == 1 && r.stderr.contains("lost or changed"), "\(r)")
    }

    @Test("a sync refused for missing epoch files leaves every file of the store byte for byte as it was")
    func refusedSyncChangesNothingInTheStore() throws {
        let shared = try folder("shared")
        let pass = try passphrase("correct horse")
        let (a, newcomer) = (store("a"), store("newcomer"))
        try a.ok("add", "from a")
        try syncOK(a, shared, "--encrypt", "--passphrase-file", pass)
        try syncOK(a, shared, "--rekey", "--passphrase-file", try passphrase("new horse"))
        try newcomer.ok("add", "from the newcomer")
        for epoch in ["00000002", "00000001"] {
            try FileManager.default.removeItem(atPath: shared + "/tasklog-epoch-" + epoch)
            // Commits in each tail, which a sync would seal before publishing them.
            try a.ok("add", "after deleting epoch \(epoch)")
            try newcomer.ok("add", "after deleting epoch \(epoch)")
            for s in [a, newcomer] {
                let before = contents(s.path)
                let r = try s.run(["sync", shared], stdin: "")
                // A newcomer that sees epoch 1 is asked for the passphrase; with none left, any
                // store learns the folder lost its epoch files.
                #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(r)")
                #expect(r.stderr.contains("lost or changed") || r.stderr.contains("is encrypted"), "\(r)")
                #expect(contents(s.path) == before, "epoch \(epoch) deleted, \(s.path): the store changed")
            }
        }
    }
}
