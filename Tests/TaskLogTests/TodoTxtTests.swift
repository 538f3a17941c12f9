import Foundation
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
import Testing

/// todo.txt both ways: the codec on its own, then through `tasklog export` and `import` with
/// the real todo.txt command line (`todo-txt`, Debian's todotxt-cli) editing the file between.
@Suite("todo.txt")
struct TodoTxtTests {
    let dir = TemporaryDirectory()

    func item(
        _ title: String, done: Bool = false, priority: UInt8? = nil, due: Due? = nil, tags: [String] = [], list: String? = nil,
        meta: [String: String] = [:]
    ) -> TaskItem {
        let t = Timestamp(physical: 1_764_633_600_000, logical: 0)  // 2025-12-02
        return TaskItem(
            id: TaskID.random(), title: title, notes: nil, isDone: done, completedAt: done ? t : nil, priority: priority, due: due,
            tags: tags, list: list, meta: meta, createdAt: t, updatedAt: t, isDeleted: false)
    }

    @Test("a task written as a line reads back as the same fields, spaces and percent signs included")
    func linesRoundTrip() throws {
        let tasks = [
            item("Buy milk", priority: 2, due: Due(parsing: "2026-12-24"), tags: ["shop", "+errands"]),
            item("Pay 50% deposit", done: true, priority: 3, list: "home office", meta: ["todotxt.seat": "aisle 3"]),
            item("Plain", priority: 0, tags: ["a b"]),
        ]
        for t in tasks {
            let line = try TodoTxt.read(Substring(TodoTxt.line(of: t)), number: 1)
            #expect(line.patch.id == t.id && line.patch.title == t.title && line.patch.done == t.isDone, "\(TodoTxt.line(of: t))")
            #expect(line.patch.priority == .some(t.priority) && line.patch.due == .some(t.due) && line.patch.list == .some(t.list))
            #expect(line.patch.tags == t.tags.sorted())
            #expect(line.unknown == Dictionary(uniqueKeysWithValues: t.meta.map { (String($0.key.dropFirst(8)), $0.value) }))
        }
        #expect(TodoTxt.line(of: tasks[1]).hasPrefix("x 2025-12-02 2025-12-02 Pay 50% deposit list:home%20office"))
    }

    @Test("a line from elsewhere: priority letters, completion, tags, pairs, links kept as text")
    func foreignLinesRead() throws {
        let lines = try TodoTxt.lines(of: """
            (A) 2026-01-05 Call https://example.org/x +work @phone due:2026-01-09 color:red
            x 2026-01-06 2026-01-01 Done thing pri:B
            (E) Low one

            x 2026-01-06 Done without priority
            """)
        #expect(lines.count == 4)
        #expect(lines[0].patch.title == "Call https://example.org/x" && lines[0].patch.priority == .some(3))
        #expect(lines[0].patch.tags == ["+work", "phone"] && lines[0].unknown == ["color": "red"])
        #expect(lines[0].patch.due == .some(Due(parsing: "2026-01-09")))
        #expect(lines[1].patch.done == true && lines[1].patch.priority == .some(2) && lines[1].patch.title == "Done thing")
        #expect(lines[2].patch.priority == .some(0))
        #expect(lines[3].patch.priority == nil, "a done line without pri: leaves the priority as it is")
        let again = try TodoTxt.lines(of: "(A) 2026-01-05 Call https://example.org/x +work @phone due:2026-01-09 color:red\n")
        #expect(again[0].patch.id == lines[0].patch.id, "a line without uuid: names the same task each time")
    }

    @Test("a line with no text, a bad due date or a bad id is refused with its line number")
    func badLinesAreRefused() {
        #expect(throws: InterchangeError.line(2, "it has no text, only dates, tags or key:value pairs")) {
            try TodoTxt.lines(of: "fine\n(A) +tag due:2026-01-01\n")
        }
        #expect(throws: InterchangeError.self) { try TodoTxt.lines(of: "Task due:tomorrowish\n") }
        #expect(throws: InterchangeError.self) { try TodoTxt.lines(of: "Task uuid:%20\n") }
    }

    @Test("a done line whose pri: is no letter imports with it kept as a pair, and reads back unchanged")
    func doneLineWithPriorityNotALetter() throws {
        let store = CLIStore(path: dir.sub("store"))
        let file = dir.sub("todo.txt")
        try "x 2026-01-03 Pay rent pri:1 uuid:rent\nx Tidy pri:@ uuid:tidy\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", file).contains("2 created"))
        let meta = try store.tasks("--all").compactMap { $0["meta"] as? [String: String] }
        #expect(meta.contains(["todotxt.pri": "1"]) && meta.contains(["todotxt.pri": "@"]), "\(meta)")
        try store.ok("export", "--format", "todotxt").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", file).contains("0 created, 0 changed, 2 unchanged"))
    }

    @Test("todo-txt edits an exported file; importing it writes only what changed, and twice writes nothing")
    func theRealTodoTxtEditsAnExport() throws {
        let todo = try #require(
            ["/usr/bin/todo-txt", "/usr/local/bin/todo-txt"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "todo-txt is missing: scripts/install-deps.sh installs todotxt-cli")
        let store = CLIStore(path: dir.sub("store"))
        let milk = try store.ok("add", "Buy milk", "--priority", "2", "--tag", "shop").trimmingCharacters(in: .newlines)
        let mum = try store.ok("add", "Call Mum", "--list", "home", "--meta", "color=blue").trimmingCharacters(in: .newlines)
        let folder = dir.sub("todo")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try store.ok("export", "--format", "todotxt").write(toFile: folder + "/todo.txt", atomically: true, encoding: .utf8)
        let config = folder + "/config"
        try "export TODO_DIR=\(folder)\nexport TODO_FILE=$TODO_DIR/todo.txt\nexport DONE_FILE=$TODO_DIR/done.txt\nexport REPORT_FILE=$TODO_DIR/report.txt\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        func todoTxt(_ args: String...) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: todo)
            p.arguments = ["-d", config, "-p", "-a", "-f"] + args
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "todo-txt \(args)")
        }
        try todoTxt("do", "1")
        try todoTxt("pri", "2", "A")
        try todoTxt("-t", "add", "Book flights +travel @phone due:2027-01-10 seat:aisle")
        let before = try store.ok("status", "--json")
        let imported = try store.ok("import", folder + "/todo.txt")
        #expect(imported.contains("1 created, 2 changed, 0 unchanged"), "\(imported)")
        let tasks = try store.tasks()
        func task(_ id: String) -> [String: Any]? { tasks.first { $0["id"] as? String == id } }
        #expect(task(milk)?["done"] as? Bool == true && task(milk)?["priority"] as? Int == 2)
        #expect(task(mum)?["priority"] as? Int == 3 && (task(mum)?["meta"] as? [String: String]) == ["color": "blue"])
        let flights = try #require(tasks.first { $0["title"] as? String == "Book flights" })
        #expect(flights["tags"] as? [String] == ["+travel", "phone"] && flights["due"] as? String == "2027-01-10")
        #expect((flights["meta"] as? [String: String]) == ["todotxt.seat": "aisle"])
        let after = try store.ok("status", "--json")
        #expect(try store.ok("import", folder + "/todo.txt").contains("0 created, 0 changed, 3 unchanged"))
        #expect(try store.ok("status", "--json") == after && after != before)
    }
}
