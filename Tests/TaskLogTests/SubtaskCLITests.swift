import Foundation
import Testing

/// Subtasks, dependencies and dates through the real binary, on two devices sharing a folder
/// (Spec/cli.md and Spec/crdt.md, "Subtasks, dependencies and dates"). Every run is under TZ=UTC.
@Suite("subtasks and dependencies")
struct SubtaskCLITests {
    let dir = TemporaryDirectory()

    /// `tasklog args…` on `store` under a fixed time zone.
    @discardableResult
    func run(_ store: CLIStore, _ args: String...) throws -> CLIResult {
        try CLI.run(args, store: store.path, environment: ["TZ": "UTC"])
    }

    /// A command that must succeed; its standard output, trimmed.
    @discardableResult
    func ok(_ store: CLIStore, _ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try CLI.run(args, store: store.path, environment: ["TZ": "UTC"])
        #expect(r.status == 0, "tasklog \(args.joined(separator: " ")): \(r)", sourceLocation: sourceLocation)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Syncs `a`, then `b`, then `a` again through `shared`: both then hold every operation.
    func syncBothWays(_ a: CLIStore, _ b: CLIStore, _ shared: String) throws {
        for s in [a, b, a] { try ok(s, "sync", shared) }
    }

    /// The table row of the task whose id starts with `id`'s first 8 characters.
    func row(_ listing: String, _ id: String) -> String? {
        listing.split(separator: "\n").map(String.init).first { $0.hasPrefix(String(id.prefix(8))) }
    }

    /// How many spaces the title of `id`'s row starts with, in the TITLE column.
    func indent(_ listing: String, _ id: String) -> Int? {
        guard let header = listing.split(separator: "\n").first, let column = header.range(of: "TITLE"),
            let row = row(listing, id)
        else { return nil }
        let at = header.distance(from: header.startIndex, to: column.lowerBound)
        return row.dropFirst(at).prefix { $0 == " " }.count
    }

    /// The value of the `show` line labelled `label`.
    func shown(_ text: String, _ label: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix(label + ":") }.map { $0.dropFirst(label.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    @Test("subtasks made on one device and completed on another show 2/5 done on both after syncing both ways")
    func progressAcrossDevices() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let parent = try ok(a, "add", "Plan trip")
        let children = try (1...5).map { try ok(a, "add", "Step \($0)", "--parent", parent) }
        try syncBothWays(a, b, shared)
        try ok(b, "done", children[0], children[3])
        try syncBothWays(a, b, shared)
        let (listA, listB) = (try ok(a, "list", "--all"), try ok(b, "list", "--all"))
        #expect(listA == listB)
        #expect(row(listA, parent)?.hasSuffix("2/5 done") == true, "\(listA)")
        for c in children { #expect(indent(listA, c) == 2, "a subtask is indented: \(listA)") }
        #expect(indent(listA, parent) == 0)
        let shown = try ok(b, "show", parent)
        #expect(shown.contains("subtasks: 2/5 done") && shown.contains("[x] \(children[0].prefix(8)) Step 1"), "\(shown)")
        #expect(try ok(a, "list", "--all", "--json") == ok(b, "list", "--all", "--json"))
        let json = try #require(try b.tasks().first { $0["id"] as? String == children[1] })
        #expect(json["parent"] as? String == parent && (json["meta"] as? [String: String])?.isEmpty == true)
    }

    @Test("moving A under B on one device and B under A on another gives the same tree on both; the later move wins")
    func concurrentCycle() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let (x, y) = (try ok(a, "add", "Task X"), try ok(a, "add", "Task Y"))
        try syncBothWays(a, b, shared)
        try ok(a, "edit", x, "--parent", y)
        usleep(5_000)
        try ok(b, "edit", y, "--parent", x)
        try syncBothWays(a, b, shared)
        let list = try ok(a, "list")
        #expect(list == (try ok(b, "list")))
        #expect(indent(list, x) == 0 && indent(list, y) == 2, "\(list)")
        #expect(try ok(a, "list", "--json") == ok(b, "list", "--json"))
        for id in [x, y] { #expect(try ok(a, "show", id) == ok(b, "show", id)) }
        let shownX = try ok(b, "show", x)
        #expect(shownX.contains("the link was cut: it closed a cycle"), "\(shownX)")
        let refused = try run(a, "edit", x, "--parent", y)
        #expect(refused.status == 1 && refused.stderr.contains("would make a cycle"), "\(refused)")
    }

    @Test("a wait date in the future hides a task from list until then; one in the past does not")
    func waitHides() throws {
        let s = CLIStore(path: dir.sub("s"))
        try ok(s, "add", "Early, waiting", "--wait", "2999-01-01")
        let past = try ok(s, "add", "Past wait", "--wait", "2001-02-03")
        let future = try ok(s, "add", "Future wait", "--wait", "2999-01-01", "--scheduled", "2999-02-01")
        let plain = try ok(s, "list")
        #expect(row(plain, past) != nil && row(plain, future) == nil, "\(plain)")
        #expect(try !ok(s, "list", "--json").contains(future))
        #expect(try ok(s, "list", "--waiting").split(separator: "\n").count == 3)
        #expect(try ok(s, "list", "--limit", "1", "--json").contains(past), "the limit counts the tasks shown")
        #expect(try row(ok(s, "list", "--limit", "1"), past) != nil)
        let all = try ok(s, "list", "--all")
        #expect(row(all, future)?.hasSuffix("waiting") == true, "\(all)")
        let shown = try ok(s, "show", future)
        #expect(self.shown(shown, "wait") == "2999-01-01" && self.shown(shown, "scheduled") == "2999-02-01" && !shown.contains("meta."), "\(shown)")
        let json = try #require(try s.tasks().first { $0["id"] as? String == future })
        #expect(json["wait"] as? String == "2999-01-01" && json["scheduled"] as? String == "2999-02-01")
        try ok(s, "edit", future, "--no-wait")
        #expect(row(try ok(s, "list"), future) != nil)
    }

    @Test("a task is marked blocked while a dependency made on another device is open")
    func blockedAcrossDevices() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let first = try ok(a, "add", "Get visa")
        try syncBothWays(a, b, shared)
        let second = try ok(b, "add", "Fly", "--depends", first)
        try syncBothWays(a, b, shared)
        #expect(row(try ok(a, "list"), second)?.hasSuffix("blocked") == true)
        #expect(try ok(a, "show", second).contains("blocked: 1 still open"))
        try ok(a, "done", first)
        try syncBothWays(a, b, shared)
        let list = try ok(b, "list")
        #expect(row(list, second)?.contains("blocked") == false, "\(list)")
        try ok(b, "edit", second, "--no-depends", first)
        #expect(try b.tasks().first { $0["id"] as? String == second }?["depends"] == nil)
    }

    @Test("start and stop mark a task in progress and no longer; edit --start and --stop do the same")
    func startStop() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try ok(s, "add", "Write report")
        try ok(s, "start", id)
        #expect(row(try ok(s, "list"), id)?.hasSuffix("started") == true)
        let started = try #require(try s.tasks().first?["start"] as? String)
        #expect(started.hasSuffix("Z") && started.count == 24)
        try ok(s, "start", id)
        #expect(try s.tasks().first?["start"] as? String == started, "a second start keeps the first")
        try ok(s, "stop", id)
        #expect(try s.tasks().first?["start"] == nil && !(try ok(s, "show", id).contains("started")))
        try ok(s, "edit", id, "--start")
        #expect(try s.tasks().first?["start"] != nil)
        try ok(s, "edit", id, "--stop")
        #expect(try s.tasks().first?["start"] == nil)
        #expect(try run(s, "edit", id, "--start", "--stop").status == 2)
    }

    @Test("done on a task with open subtasks writes nothing off a terminal; --json names them; --force completes it")
    func doneParent() throws {
        let s = CLIStore(path: dir.sub("s"))
        let parent = try ok(s, "add", "Move house")
        let child = try ok(s, "add", "Pack books", "--parent", parent)
        let refused = try run(s, "done", parent)
        #expect(refused.status == 1 && refused.stderr.contains("1 open subtask"), "\(refused)")
        let json = try run(s, "done", parent, "--json")
        #expect(json.status == 1 && json.stdout == "{\"openChildren\":[{\"id\":\"\(parent)\",\"children\":[\"\(child)\"]}]}\n", "\(json)")
        #expect(try s.tasks().allSatisfy { $0["done"] as? Bool == false })
        try ok(s, "done", parent, "--force")
        #expect(try s.tasks().first { $0["id"] as? String == child }?["done"] as? Bool == false)
        try ok(s, "rm", parent)
        let list = try ok(s, "list")
        #expect(indent(list, child) == 0, "a deleted parent's child is at top level: \(list)")
    }

    /// Runs `tasklog --store S args…` on a pseudo-terminal, answering `answer` to its question.
    func answering(_ answer: String, _ store: CLIStore, _ args: [String]) throws -> CLIResult {
        let script = """
            import os, pty, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b""
            while b"[y/N]" not in out:
                out += os.read(fd, 1024)
            os.write(fd, os.environ["ANSWER"].encode() + b"\\n")
            try:
                while True:
                    chunk = os.read(fd, 1024)
                    if not chunk:
                        break
                    out += chunk
            except OSError:
                pass
            sys.stdout.write(out.decode())
            sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
            """
        return try CLI.run(
            ["-c", script, CLI.binary, "--store", store.path] + args, store: nil, executable: "/usr/bin/python3",
            environment: ["ANSWER": answer, "TZ": "UTC"])
    }

    @Test("on a terminal, done asks before completing a task with open subtasks: y completes it, n writes nothing")
    func doneAsksOnTerminal() throws {
        let s = CLIStore(path: dir.sub("s"))
        let parent = try ok(s, "add", "Move house")
        try ok(s, "add", "Pack books", "--parent", parent)
        let no = try answering("n", s, ["done", parent])
        #expect(no.status == 1 && no.stdout.contains("has 1 open subtask; mark it done anyway? [y/N]"), "\(no)")
        #expect(try s.tasks().allSatisfy { $0["done"] as? Bool == false })
        let yes = try answering("y", s, ["done", parent])
        #expect(yes.status == 0 && yes.stdout.contains("Completed \(parent.prefix(8)) Move house"), "\(yes)")
        #expect(try s.tasks().first { $0["id"] as? String == parent }?["done"] as? Bool == true)
    }

    @Test("list indents a subtask whether its link is in the snapshot or written after it, with and without words")
    func listFindsLinksOnBothSidesOfTheSnapshot() throws {
        let s = CLIStore(path: dir.sub("s"))
        let parent = try ok(s, "add", "Trip milk")
        let early = try ok(s, "add", "Pack milk", "--parent", parent)
        for i in 0..<30 { try ok(s, "add", "Filler \(i)") }
        try ok(s, "compact")
        let flat = try ok(s, "list", "Filler")
        #expect(!flat.contains("Trip") && flat.contains("Filler 29"))
        let late = try ok(s, "add", "Buy milk", "--parent", parent)
        for words in [[], ["milk"]] {
            let listing = try CLI.run(["list"] + words, store: s.path, environment: ["TZ": "UTC"]).stdout
            #expect(indent(listing, early) == 2 && indent(listing, late) == 2 && indent(listing, parent) == 0, "\(listing)")
            #expect(row(listing, parent)?.contains("0/2 done") == true, "\(listing)")
        }
    }
}
