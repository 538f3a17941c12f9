import Foundation
import Testing

/// Secret files (passphrase, token, password) are read no further than 4 KiB.
@Suite("secret files")
struct SecretFileTests {
    let dir = TemporaryDirectory()

    @Test("an endless or oversized secret file is refused in one line, and nothing is written", arguments: [
        ["sync", "FOLDER", "--encrypt", "--passphrase-file", "/dev/zero"],
        ["sync", "http://127.0.0.1:9", "--token-file", "/dev/urandom"],
        ["sync", "caldav://me@127.0.0.1:9/dav/", "--password-file", "/dev/zero"],
        ["sync", "FOLDER", "--encrypt", "--passphrase-file", "BIG"],
    ])
    func endlessSecretFileIsRefused(_ template: [String]) throws {
        let store = CLIStore(path: dir.sub("s"))
        try store.ok("add", "kept")
        let big = dir.sub("big")
        try Data(repeating: 0x61, count: 5000).write(to: URL(fileURLWithPath: big))
        let args = template.map { $0 == "FOLDER" ? (try? dir.folder("shared")) ?? "" : $0 == "BIG" ? big : $0 }
        let before = TemporaryDirectory.contents(store.path)
        let r = try store.run(args, stdin: "")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("longer than 4096 bytes"), "\(r)")
        #expect(TemporaryDirectory.contents(store.path) == before)
    }

    @Test("a secret file gives its first line")
    func secretFileGivesItsFirstLine() throws {
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let shared = try dir.folder("shared")
        let pass = dir.sub("pass")
        try "correct horse\nignored\n".write(toFile: pass, atomically: true, encoding: .utf8)
        try a.ok("add", "from a")
        _ = try a.ok("sync", shared, "--encrypt", "--passphrase-file", pass)
        let only = dir.sub("only")
        try "correct horse".write(toFile: only, atomically: true, encoding: .utf8)
        _ = try b.ok("sync", shared, "--passphrase-file", only)
        #expect(try b.ok("list").contains("from a"))
    }
}
