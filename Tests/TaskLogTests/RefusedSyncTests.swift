import Foundation
import Testing

/// A sync that fails leaves no trace: not even a store at a mistyped `--store` path.
@Suite("refused syncs")
struct RefusedSyncTests {
    let dir = TemporaryDirectory()

    @Test("a failed first sync leaves no store behind", arguments: [
        ["MISSING"], ["http://127.0.0.1:9"], ["caldav://127.0.0.1:9/dav/"], ["ENCRYPTED", "--passphrase-file", "WRONG"],
    ])
    func failedSyncMakesNoStore(_ template: [String]) throws {
        let encrypted = try dir.folder("encrypted")
        let (right, wrong) = (dir.sub("right"), dir.sub("wrong"))
        try "correct horse\n".write(toFile: right, atomically: true, encoding: .utf8)
        try "wrong horse\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        let owner = CLIStore(path: dir.sub("owner"))
        try owner.ok("add", "x")
        _ = try owner.ok("sync", encrypted, "--encrypt", "--passphrase-file", right)
        let replace = ["MISSING": dir.sub("missing"), "ENCRYPTED": encrypted, "WRONG": wrong]
        let typo = CLIStore(path: dir.sub("typo"))
        let r = try typo.run(["sync"] + template.map { replace[$0] ?? $0 }, stdin: "")
        #expect(r.status == 1 && r.stderr.split(separator: "\n").count == 1, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: typo.path), "\(r)")
    }

    @Test("a failed first sync into an existing folder removes only what it made")
    func failedSyncKeepsWhatWasThere() throws {
        let typo = CLIStore(path: try dir.folder("typo"))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: typo.full("notes.txt")))
        let r = try typo.run(["sync", dir.sub("missing")])
        #expect(r.status == 1, "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: typo.path) == ["notes.txt"])
    }
}
