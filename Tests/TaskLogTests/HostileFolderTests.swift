@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// A shared folder written by an attacker: links out of it, sparse files, escape sequences
/// in names, forged clocks. Driven through the real binary on real folders.
@Suite("hostile shared folder")
struct HostileFolderTests {
    let dir = TemporaryDirectory()
    let files = FileManager.default

    func replica(_ name: String) -> CLIStore { CLIStore(path: dir.sub(name)) }

    func folder(_ name: String) throws -> String {
        let p = dir.sub(name)
        try files.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }

    func namespace(_ s: CLIStore) throws -> String { "tasklog-" + (try s.ok("init")).trimmingCharacters(in: .whitespacesAndNewlines) }

    /// `outside` holding store `a`'s published segment with a task titled `title`.
    func publishedOutside(_ title: String) throws -> (a: CLIStore, outside: String, ns: String, segment: String) {
        let a = replica("a")
        try a.ok("add", title)
        let outside = try folder("outside")
        try a.ok("sync", outside)
        let ns = try namespace(a)
        let segment = try #require(try files.contentsOfDirectory(atPath: outside + "/" + ns).first)
        return (a, outside, ns, segment)
    }

    @Test("a namespace that is a symbolic link, to a folder elsewhere or to /etc, is skipped with a warning and nothing is imported")
    func linkedNamespaces() throws {
        let (_, outside, ns, _) = try publishedOutside("kept outside")
        let shared = try folder("shared")
        try files.createSymbolicLink(atPath: shared + "/" + ns, withDestinationPath: outside + "/" + ns)
        try files.createSymbolicLink(atPath: shared + "/tasklog-" + String(repeating: "e", count: 32), withDestinationPath: "/etc")
        let b = replica("b")
        let r = try b.run("sync", shared)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains(shared + "/" + ns + ": a symbolic link"), "\(r.stderr)")
        #expect(r.stderr.contains("tasklog-" + String(repeating: "e", count: 32) + ": a symbolic link"), "\(r.stderr)")
        #expect(!r.stderr.contains("/etc") && !r.stderr.contains("passwd"), "\(r.stderr)")
        #expect(try b.tasks().isEmpty)
    }

    @Test("a segment-named symbolic link to a valid segment elsewhere is skipped with a warning and not imported")
    func linkedSegment() throws {
        let (_, outside, ns, segment) = try publishedOutside("kept outside")
        let shared = try folder("shared")
        try files.createDirectory(atPath: shared + "/" + ns, withIntermediateDirectories: false)
        try files.createSymbolicLink(atPath: shared + "/" + ns + "/" + segment, withDestinationPath: outside + "/" + ns + "/" + segment)
        let b = replica("b")
        let r = try b.run("sync", shared)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains(segment + ": a symbolic link; links in a shared folder are never followed"), "\(r.stderr)")
        #expect(try b.tasks().isEmpty)
    }

    @Test("when this store's own namespace is a symbolic link, sync fails with advice and writes nothing through it")
    func ownNamespaceLinked() throws {
        let b = replica("b")
        try b.ok("add", "must stay home")
        let shared = try folder("shared")
        let elsewhere = try folder("elsewhere")
        try files.createSymbolicLink(atPath: shared + "/" + (try namespace(b)), withDestinationPath: elsewhere)
        let r = try b.run("sync", shared)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("is a symbolic link or a file, not a folder") && r.stderr.contains("remove it"), "\(r.stderr)")
        #expect(try files.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test("a 2 GiB sparse file with a segment's name, bare or behind a valid header, is skipped under a 1 GiB address-space limit")
    func sparseSegments() throws {
        let (_, outside, ns, segment) = try publishedOutside("real task")
        let shared = try folder("shared")
        let sharedNS = shared + "/" + ns
        try files.createDirectory(atPath: sharedNS, withIntermediateDirectories: false)
        let real = try Data(contentsOf: URL(fileURLWithPath: outside + "/" + ns + "/" + segment))
        // One file is all hole; the other keeps the real header and first record, then a hole.
        let parts = segment.dropLast(5).split(separator: "-")
        let other = "\(parts[0])-\(parts[1])-\(String(repeating: "0", count: 15))f.tlog"
        for (name, start) in [(segment, Data()), (other, real)] {
            let path = sharedNS + "/" + name
            #expect(files.createFile(atPath: path, contents: start))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: 2 << 30)
            try handle.close()
        }
        let b = replica("b")
        _ = try b.ok("init")
        let r = try CLI.run(["-c", "ulimit -v 1048576; exec \"$0\" --store \"$1\" sync \"$2\"", CLI.binary, b.path, shared], store: nil, executable: "/bin/sh")
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains(segment) && r.stderr.contains(other), "\(r.stderr)")
        #expect(try b.tasks().isEmpty)
    }

    @Test("a folder name and a task title holding terminal escapes are printed with the escapes shown, never sent to the terminal")
    func escapesInNames() throws {
        let shared = try folder("shared")
        let hostile = "\u{1b}]0;pwned\u{07}\u{1b}[31mRED"
        try files.createDirectory(atPath: shared + "/" + hostile, withIntermediateDirectories: false)
        let b = replica("b")
        try b.ok("add", "title \u{1b}[2J\u{202e}cleared")
        let r = try b.run("sync", shared)
        #expect(r.status == 0, "\(r)")
        #expect(!r.stderr.contains("\u{1b}") && !r.stderr.contains("\u{07}"), "\(r.stderr)")
        #expect(r.stderr.contains("\\x1b]0;pwned\\x07\\x1b[31mRED: not a TaskLog replica folder"), "\(r.stderr)")
        let list = try b.ok("list")
        #expect(!list.contains("\u{1b}") && list.contains("title \\x1b[2J\\u{202e}cleared"), "\(list)")
        #expect(try b.tasks().first?["title"] as? String == "title \u{1b}[2J\u{202e}cleared")
    }

    @Test("a store is private (folders 0700, files 0600); its files in a shared folder take the folder's permissions, whatever the umask")
    func permissions() throws {
        let shared = try folder("shared")
        chmod(shared, 0o775)
        let b = replica("b")
        let r = try CLI.run(["-c", "umask 077; \"$0\" --store \"$1\" add private && exec \"$0\" --store \"$1\" sync \"$2\"", CLI.binary, b.path, shared], store: nil, executable: "/bin/sh")
        #expect(r.status == 0, "\(r)")
        let umaskOpen = try CLI.run(["-c", "umask 000; exec \"$0\" --store \"$1\" add second", CLI.binary, b.path], store: nil, executable: "/bin/sh")
        #expect(umaskOpen.status == 0, "\(umaskOpen)")
        #expect(mode(b.path) == 0o700)
        let walker = try #require(files.enumerator(atPath: b.path))
        while let name = walker.nextObject() as? String {
            let path = b.path + "/" + name
            let expected: mode_t = isDirectory(path) ? 0o700 : 0o600
            #expect(mode(path) & 0o077 == 0, "\(name) is \(String(mode(path), radix: 8)), not \(String(expected, radix: 8))")
        }
        let ns = shared + "/" + (try namespace(b))
        #expect(mode(ns) == 0o775)
        for name in try files.contentsOfDirectory(atPath: ns) { #expect(mode(ns + "/" + name) == 0o664, "\(name)") }
    }

    @Test("a forged commit at the largest time is imported with a warning, yet later commits keep this machine's year")
    func farFutureCommit() throws {
        let forger = ReplicaID.random()
        let id = try #require(TaskID("forged"))
        let commit = Commit(
            firstSeq: 1, time: Timestamp(physical: Timestamp.maxPhysical, logical: 0),
            operations: [.add(id), .set(id, .title("from the year 10889"))])
        let shared = try folder("shared")
        let ns = try folder("shared/tasklog-" + forger.hex)
        let name = "\(forger.hex)-\(String(repeating: "0", count: 15))1-\(String(repeating: "0", count: 15))2.tlog"
        #expect(files.createFile(atPath: ns + "/" + name, contents: Data(SegmentFile.encode(replica: forger, commits: [commit]))))
        let b = replica("b")
        let r = try b.run("sync", shared)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("more than 24 hours ahead of this machine's clock") && r.stderr.contains(forger.hex), "\(r.stderr)")
        #expect(try b.tasks().map { $0["title"] as? String } == ["from the year 10889"])
        try b.ok("add", "written today")
        let log = try b.ok("log", "--json").split(separator: "\n")
        let own = try #require(log.last { $0.contains("written today") })
        let year = Calendar(identifier: .gregorian).component(.year, from: Date())
        #expect(own.contains("\"time\":\"\(year)-") || own.contains("\"time\":\"\(year + 1)-"), "\(own)")
    }

    private func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }

    private func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }
}
