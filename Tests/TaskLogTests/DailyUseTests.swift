import Foundation
import TestSupport
import Testing

/// Search, deleted tasks and short ids, through the real binary.
@Suite("search and deleted tasks")
struct DailyUseTests {
    let dir = TemporaryDirectory()

    func titles(_ s: CLIStore, _ args: String...) throws -> [String] {
        let r = try s.run(args + ["--json"])
        #expect(r.status == 0, "\(args): \(r)")
        return ((try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []).map { $0["title"] as! String }
    }

    @Test("list WORDS and search match title and notes ignoring case and accents; repeated --tag must all match, in any case")
    func searchIgnoresCaseAndAccents() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("add", "Café au lait", "--tag", "Shop", "--tag", "morning")
        try s.ok("add", "Crème brûlée", "--notes", "for Zoë's party", "--tag", "shop")
        try s.ok("add", "Naïve plan", "--list", "work")
        try s.ok("add", "Cafe\u{0301} decomposed", "--tag", "other")
        #expect(try titles(s, "list", "cafe") == ["Café au lait", "Cafe\u{0301} decomposed"])
        #expect(try titles(s, "search", "CREME", "zoe") == ["Crème brûlée"])
        #expect(try titles(s, "search", "naive", "--list", "work") == ["Naïve plan"])
        #expect(try titles(s, "list", "--tag", "SHOP") == ["Café au lait", "Crème brûlée"])
        #expect(try titles(s, "list", "--tag", "shop", "--tag", "Morning") == ["Café au lait"])
        #expect(try titles(s, "search", "nothing-like-this").isEmpty)
    }

    @Test("list --deleted shows deleted tasks with titles; restore takes several ids")
    func deletedTasksAreListedAndRestored() throws {
        let s = CLIStore(path: dir.sub("s"))
        let ids = try ["one", "two", "three"].map { try s.ok("add", $0).trimmingCharacters(in: .whitespacesAndNewlines) }
        try s.ok("rm", ids[0], ids[1])
        #expect(try titles(s, "list", "--deleted") == ["one", "two"])
        let table = try s.ok("list", "--deleted")
        #expect(table.contains("one") && table.contains(String(ids[1].prefix(8))), "\(table)")
        try s.ok("restore", String(ids[0].prefix(6)), ids[1])
        #expect(try titles(s, "list", "--deleted").isEmpty && titles(s, "list") == ["one", "two", "three"])
    }

    @Test("an id that matches nothing says how many characters to give")
    func unknownIDSaysTheMinimum() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("add", "one")
        let r = try s.run("done", "zzzz")
        #expect(r.status == 1 && r.stderr.contains("at least 4 of its first characters"), "\(r)")
    }

    @Test("writes confirm in one line on a terminal, and print exactly what they always did when piped")
    func writesConfirmOnATerminal() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try s.ok("add", "Buy milk").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 36)
        let short = String(id.prefix(8))
        #expect(try s.ok("done", id).isEmpty && s.ok("tag", id, "+shop").isEmpty)
        #expect(try s.onTerminal(["add", "Call", "Mum"]).hasPrefix("Added "))
        #expect(try s.onTerminal(["reopen", id]) == "Reopened \(short) Buy milk\n")
        #expect(try s.onTerminal(["done", id]) == "Completed \(short) Buy milk\n")
        #expect(try s.onTerminal(["edit", id, "--title", "Buy oat milk"]) == "Edited \(short) Buy oat milk\n")
        #expect(try s.onTerminal(["tag", id, "+dairy", "-shop"]) == "Tagged \(short) Buy oat milk  +dairy -shop\n")
        #expect(try s.onTerminal(["rm", id]).hasPrefix("Deleted \(short) Buy oat milk"))
        #expect(try s.onTerminal(["restore", id]) == "Restored \(short) Buy oat milk\n")
        let json = try s.ok("done", id, "--json")
        #expect(json.hasPrefix("[") && json.contains("\"done\":true"), "\(json)")
    }

    @Test("on a narrow terminal titles are cut with an ellipsis so rows fit; piped, they are whole")
    func tablesFitTheTerminal() throws {
        let s = CLIStore(path: dir.sub("s"))
        let title = "Write the quarterly report for the board, with every figure checked twice"
        try s.ok("add", title, "--tag", "work")
        let narrow = try s.onTerminal(["list"], environment: ["COLUMNS": "50"])
        let rows = narrow.split(separator: "\n")
        #expect(rows.allSatisfy { $0.count <= 50 } && narrow.contains("…"), "\(narrow)")
        #expect(try s.ok("list").contains(title))
    }

    @Test("a sync from a store that does not exist yet says so, once")
    func syncIntoANewStoreSaysSo() throws {
        let s = CLIStore(path: dir.sub("fresh"))
        let shared = try dir.folder("shared")
        let first = try s.run("sync", shared)
        #expect(first.status == 0 && first.stderr.contains("no store at \(s.path) yet; made one there"), "\(first)")
        let second = try s.run("sync", shared)
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second)")
    }

    @Test("overdue tasks are coloured on a terminal, never with NO_COLOR set")
    func colourOnlyOnATerminalWithoutNoColor() throws {
        let s = CLIStore(path: dir.sub("s"))
        try s.ok("add", "late", "--due", "yesterday")
        let coloured = try s.onTerminal(["list"])
        #expect(coloured.contains("\u{1B}[31m") && coloured.contains("(overdue)"), "\(coloured)")
        let plain = try s.onTerminal(["list"], environment: ["NO_COLOR": "1"])
        #expect(!plain.contains("\u{1B}[") && plain.contains("(overdue)"), "\(plain)")
    }
}

/// Shell completion and the manual page, both made from the command table.
@Suite("completion and manual page")
struct CompletionTests {
    let dir = TemporaryDirectory()

    /// Runs `script` in a real, non-interactive bash with the completion loaded and `tasklog`
    /// on the PATH; its output.
    func bash(_ script: String, store: String) throws -> String {
        let bin = (CLI.binary as NSString).deletingLastPathComponent
        let setup = "export TASKLOG_STORE='\(store)'; eval \"$(tasklog completion bash)\"; "
        let r = try CalDAVServerTests.run("/bin/bash", ["-c", setup + script], environment: ["PATH": bin + ":/usr/bin:/bin"], directory: dir.path)
        #expect(r.status == 0, "\(r)")
        return r.stdout
    }

    /// What TAB offers after `words` (the last one being completed).
    func completing(_ words: String..., store: String) throws -> [String] {
        let array = words.map { "'\($0)'" }.joined(separator: " ")
        let out = try bash("COMP_WORDS=(tasklog \(array)); COMP_CWORD=\(words.count); _tasklog; printf '%s\\n' \"${COMPREPLY[@]}\"", store: store)
        return out.split(separator: "\n").map(String.init)
    }

    @Test("the bash completion completes commands, options, task ids, tags and lists in a real bash")
    func bashCompletionCompletes() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try store.ok("add", "Buy milk", "--tag", "shop", "--list", "home").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try bash("complete -p tasklog", store: store.path).contains("complete -F _tasklog tasklog"))
        #expect(try completing("ed", store: store.path) == ["edit"])
        #expect(try completing("list", "--ov", store: store.path) == ["--overdue"])
        #expect(try completing("done", "", store: store.path) == [String(id.prefix(8))])
        #expect(try completing("list", "--tag", "s", store: store.path) == ["shop"])
        #expect(try completing("add", "x", "--list", "", store: store.path) == ["home"])
        #expect(try completing("completion", "z", store: store.path) == ["zsh"])
        let titled = try store.ok("__complete", "ids")
        #expect(titled == "\(id.prefix(8))\tBuy milk\n")
    }

    @Test("tag and list names that hold shell syntax are offered quoted and never run by bash")
    func hostileNamesAreNeverEvaluated() throws {
        let store = CLIStore(path: dir.sub("s"))
        let marker = dir.sub("PWNED")
        let tag = "$(touch${IFS}\(marker))"
        let list = "`touch${IFS}\(marker)`"
        _ = try store.ok("add", "x", "--tag", tag, "--tag", "a'b c", "--tag", "esc\u{1B}[31m", "--list", list)
        let tags = try completing("list", "--tag", "", store: store.path)
        let lists = try completing("list", "--list", "", store: store.path)
        #expect(!FileManager.default.fileExists(atPath: marker))
        // What the shell makes of a completed word when the command line runs.
        let unquote = { (word: String) in
            try self.bash("w='\(word.replacingOccurrences(of: "'", with: "'\\''"))'; eval \"printf '%s' $w\"", store: store.path)
        }
        #expect(try tags.map(unquote).sorted() == ["$(touch${IFS}\(marker))", "a'b c"].sorted())
        #expect(try lists.map(unquote) == [list])
        #expect(try completing("list", "--tag", "a", store: store.path) == ["a\\'b\\ c"])
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(try !store.ok("__complete", "tags").contains("\u{1B}"))
    }

    @Test("random tags built from shell syntax all complete to words that read back as the tags, and none runs", arguments: [1, 2, 3] as [UInt64])
    func randomHostileTagsReadBack(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let pieces = ["$(", ")", "`", "${IFS}", "'", "\"", "\\", " ", ";", "|", "&", "<", ">", "*", "?", "[", "]", "{", "}",
                      "~", "#", "!", "=", "%", "-", "--", "é", "日本", "\u{202E}", "\u{1B}", "\t", "touch PWNED", "x"]
        let tags = (0..<60).map { _ in (0..<Int.random(in: 1...6, using: &rng)).map { _ in rng.pick(pieces) }.joined() }
        let store = CLIStore(path: dir.sub("s"))
        _ = try store.run(["add", "x"] + tags.flatMap { ["--tag", $0] })
        let offered = try completing("list", "--tag", "", store: store.path)
        let script = offered.map { "w='\($0.replacingOccurrences(of: "'", with: "'\\''"))'; eval \"printf '%s\\\\0' $w\"" }.joined(separator: "\n")
        let readBack = try bash(script, store: store.path).split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
        let typable = Set(tags.filter { !$0.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" } })
        #expect(Set(readBack) == typable && readBack.count == typable.count, "seed \(seed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).allSatisfy { !$0.contains("PWNED") })
    }

    @Test("zsh and fish scripts are printed; an unknown shell is a usage error")
    func otherShells() throws {
        let store = CLIStore(path: dir.sub("s"))
        #expect(try store.ok("completion", "zsh").contains("compdef _tasklog tasklog"))
        #expect(try store.ok("completion", "fish").contains("complete -c tasklog"))
        #expect(try store.run("completion", "tcsh").status == 2)
    }

    @Test("the manual page names every command and option, and man renders it")
    func manualPageCoversEveryCommand() throws {
        let page = try CLIStore(path: dir.sub("s")).ok("__manpage")
        #expect(page.hasPrefix(".TH TASKLOG 1"))
        for name in ["add", "list", "search", "sync", "serve", "completion", "replay"] { #expect(page.contains(".SS \(name)\n"), "\(name)") }
        #expect(page.contains("\\-\\-due\\-before") && page.contains("\\-\\-passphrase\\-file"))
        let file = dir.sub("tasklog.1")
        try page.write(toFile: file, atomically: true, encoding: .utf8)
        if FileManager.default.fileExists(atPath: "/usr/bin/man") {
            let rendered = try CalDAVServerTests.run("/usr/bin/man", ["-l", file], environment: ["MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"])
            #expect(rendered.status == 0 && rendered.stdout.contains("tasklog [--store DIR] COMMAND"), "\(rendered)")
        }
    }
}

/// `tasklog undo`, through the real binary and a shared folder.
@Suite("undo")
struct UndoTests {
    let dir = TemporaryDirectory()

    func task(_ s: CLIStore, _ id: String) throws -> [String: Any]? {
        try s.tasks().first { $0["id"] as? String == id }
    }

    @Test("undo reverts add, edit, tag, done and rm one command at a time, newest first, twice in a row and more")
    func undoWalksBackThroughCommands() throws {
        let s = CLIStore(path: dir.sub("s"))
        let first = try s.ok("add", "first").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try s.ok("undo").hasPrefix("Undid add of \(first.prefix(8)) first"))
        #expect(try s.tasks().isEmpty)
        let id = try s.ok("add", "Buy milk").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("edit", id, "--title", "Buy oat milk", "--due", "2026-12-24")
        try s.ok("tag", id, "+shop")
        try s.ok("done", id)
        try s.ok("rm", id)
        #expect(try task(s, id) == nil)
        #expect(try s.ok("undo").hasPrefix("Undid rm of"))
        #expect(try task(s, id)?["done"] as? Bool == true)
        #expect(try s.ok("undo").hasPrefix("Undid done of"))
        #expect(try task(s, id)?["done"] as? Bool == false)
        try s.ok("undo")
        #expect(try task(s, id)?["tags"] as? [String] == [])
        try s.ok("undo")
        let t = try task(s, id)
        #expect(t?["title"] as? String == "Buy milk" && t?["due"] is NSNull)
        try s.ok("undo")
        #expect(try s.tasks().isEmpty)
        let none = try s.run("undo")
        #expect(none.status == 1 && none.stderr.contains("nothing to undo"), "\(none)")
    }

    @Test("undo leaves a field another device changed since, and names it; the rest is reverted and syncs")
    func undoLeavesAnotherDevicesEdit() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let id = try a.ok("add", "Plan trip").trimmingCharacters(in: .whitespacesAndNewlines)
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        try a.ok("edit", id, "--title", "Plan trip to Rome", "--priority", "2")
        usleep(5_000)
        try b.ok("edit", id, "--title", "Plan trip to Lisbon")
        try b.ok("sync", shared)
        try a.ok("sync", shared)
        let undo = try a.ok("undo")
        #expect(undo.contains("Left title of \(id.prefix(8))"), "\(undo)")
        let t = try task(a, id)
        #expect(t?["title"] as? String == "Plan trip to Lisbon" && t?["priority"] is NSNull)
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        #expect(try task(b, id)?["priority"] is NSNull)
    }
}

/// Recurring tasks, through the real binary and a shared folder.
@Suite("recurring tasks")
struct RecurrenceTests {
    let dir = TemporaryDirectory()

    func open(_ s: CLIStore) throws -> [[String: Any]] { try s.tasks().filter { $0["done"] as? Bool == false } }

    @Test("completing a recurring task makes the next occurrence one interval on; --recur takes every N weeks")
    func completingMakesTheNextOccurrence() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try s.ok("add", "Pay rent", "--due", "2026-01-31", "--recur", "monthly", "--tag", "home").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("done", id)
        let next = try #require(try open(s).first)
        #expect(next["title"] as? String == "Pay rent" && next["due"] as? String == "2026-02-28" && next["tags"] as? [String] == ["home"])
        #expect(next["recur"] as? String == "every 1 months" && (next["meta"] as? [String: String])?["recur"] == nil)
        try s.ok("done", next["id"] as! String)
        #expect(try open(s).first?["due"] as? String == "2026-03-28")
        let bad = try s.run("add", "x", "--recur", "fortnightly")
        #expect(bad.status == 2 && bad.stderr.contains("--recur takes"), "\(bad)")
        let weekly = try s.ok("add", "Gym", "--due", "2026-12-01", "--recur", "every 2 weeks").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("done", weekly)
        #expect(try open(s).contains { $0["title"] as? String == "Gym" && $0["due"] as? String == "2026-12-15" })
    }

    @Test("two devices completing the same occurrence at once leave exactly one next occurrence after syncing")
    func concurrentCompletionsMakeOneOccurrence() throws {
        let shared = try dir.folder("shared")
        let (a, b) = (CLIStore(path: dir.sub("a")), CLIStore(path: dir.sub("b")))
        let id = try a.ok("add", "Water plants", "--due", "2026-12-01", "--recur", "weekly").trimmingCharacters(in: .whitespacesAndNewlines)
        try a.ok("sync", shared)
        try b.ok("sync", shared)
        try a.ok("done", id)
        try b.ok("done", id)
        for s in [a, b, a] { try s.ok("sync", shared) }
        for s in [a, b] {
            let next = try open(s)
            #expect(next.count == 1 && next.first?["due"] as? String == "2026-12-08", "\(next)")
            #expect(try s.tasks().count == 2)
        }
        #expect(try a.ok("list", "--all", "--json") == b.ok("list", "--all", "--json"))
    }

    @Test("on a terminal, done names the completed task once and the next occurrence as next; again, already done")
    func doneSaysWhatItDid() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try s.ok("add", "Pay rent", "--due", "2026-12-01", "--recur", "monthly").trimmingCharacters(in: .whitespacesAndNewlines)
        let short = String(id.prefix(8))
        let said = try s.onTerminal(["done", short]).split(separator: "\n")
        #expect(said.count == 2 && said[0] == "Completed \(short) Pay rent", "\(said)")
        #expect(said.last?.hasPrefix("Next ") == true && said.last?.hasSuffix(" Pay rent  due 2027-01-01") == true, "\(said)")
        #expect(try s.onTerminal(["done", short]) == "Already done \(short) Pay rent\n")
        #expect(try s.onTerminal(["show", short]).contains("repeats: every month\n"))
        let weekly = try s.ok("add", "Gym", "--recur", "every 2 weeks").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try s.onTerminal(["show", weekly]).contains("repeats: every 2 weeks\n"))
    }

    @Test("undo of completing a recurring task reopens it and takes the next occurrence away")
    func undoOfARecurringCompletion() throws {
        let s = CLIStore(path: dir.sub("s"))
        let id = try s.ok("add", "Stand-up", "--due", "2026-12-01", "--recur", "daily").trimmingCharacters(in: .whitespacesAndNewlines)
        try s.ok("done", id)
        #expect(try s.tasks().count == 2)
        try s.ok("undo")
        let tasks = try s.tasks()
        #expect(tasks.count == 1 && tasks[0]["done"] as? Bool == false, "\(tasks)")
    }
}
