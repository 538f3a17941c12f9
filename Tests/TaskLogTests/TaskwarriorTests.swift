import Foundation
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
import Testing

/// Taskwarrior's JSON both ways: the codec on its own, then through `tasklog export` and
/// `import` with the real Taskwarrior (`task`) importing, editing and exporting between.
@Suite("Taskwarrior")
struct TaskwarriorTests {
    let dir = TemporaryDirectory()

    @Test("a Taskwarrior export reads as tasks: status, priority letters, project, annotations, attributes it does not model")
    func exportsRead() throws {
        let json = """
            [{"id":1,"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250","description":"Buy milk","status":"pending","priority":"H",
              "project":"home","tags":["shop"],"due":"20261224T000000Z","annotations":[{"entry":"20261202T171945Z","description":"semi"},
              {"entry":"20261202T171946Z","description":"skimmed"}],"urgency":11,"estimate":"2h","size":3},
             {"uuid":"42846490-552a-4a48-97ac-42adb99ea8b0","description":"Call","status":"completed","due":"20261224T093000Z"},
             {"uuid":"52846490-552a-4a48-97ac-42adb99ea8b0","description":"Gone","status":"deleted"}]
            """
        let entries = try TaskwarriorJSON.entries(of: Array(json.utf8))
        #expect(entries.count == 3)
        let milk = entries[0].patch
        #expect(milk.title == "Buy milk" && milk.done == false && milk.priority == .some(3) && milk.list == .some("home"))
        #expect(milk.tags == ["shop"] && milk.due == .some(.date(days: CivilTime.days(year: 2026, month: 12, day: 24))))
        #expect(milk.notes == .some("semi\nskimmed") && entries[0].meta["taskwarrior.estimate"] == "2h" && entries[0].meta["taskwarrior-json.size"] == "3")
        #expect(entries[1].patch.done == true && entries[1].patch.priority == nil)
        #expect(entries[1].patch.due == .some(.instant(milliseconds: Int64(CivilTime.days(year: 2026, month: 12, day: 24)) * 86_400_000 + 34_200_000)))
        #expect(entries[2].patch.deleted)
    }

    @Test("an entry without a description or a uuid, or with a bad due time, is refused with its number")
    func badEntriesAreRefused() {
        #expect(throws: InterchangeError.task(1, "it has no description")) {
            try TaskwarriorJSON.entries(of: Array(#"[{"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250"}]"#.utf8))
        }
        #expect(throws: InterchangeError.self) { try TaskwarriorJSON.entries(of: Array(#"[{"description":"x"}]"#.utf8)) }
        #expect(throws: InterchangeError.self) {
            try TaskwarriorJSON.entries(of: Array(#"[{"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250","description":"x","due":"soon"}]"#.utf8))
        }
    }

    @Test("Taskwarrior imports an export, finishes and adds tasks; importing its export writes only that, and twice nothing")
    func theRealTaskwarriorEditsAnExport() throws {
        let taskBinary = try #require(
            ["/usr/bin/task", "/usr/local/bin/task"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "task is missing: scripts/install-deps.sh installs taskwarrior")
        let store = CLIStore(path: dir.sub("store"))
        let milk = try store.ok("add", "Buy milk", "--priority", "2", "--tag", "shop", "--notes", "semi-skimmed")
            .trimmingCharacters(in: .newlines)
        let low = try store.ok("add", "Low", "--priority", "0", "--list", "home").trimmingCharacters(in: .newlines)
        let exported = dir.sub("export.json")
        try store.ok("export", "--format", "taskwarrior").write(toFile: exported, atomically: true, encoding: .utf8)
        let rc = dir.sub("taskrc")
        try "data.location=\(dir.sub("taskdata"))\nconfirmation=off\nverbose=nothing\njson.array=on\n"
            .write(toFile: rc, atomically: true, encoding: .utf8)
        func task(_ args: String...) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: taskBinary)
            p.arguments = args
            p.environment = ["TASKRC": rc, "HOME": dir.path, "TZ": "UTC"]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationStatus == 0, "task \(args)")
            return text
        }
        _ = try task("import", exported)
        _ = try task(milk, "done")
        _ = try task("add", "Book flights", "project:travel", "+phone", "due:2027-01-10")
        let back = dir.sub("back.json")
        try task("export").write(toFile: back, atomically: true, encoding: .utf8)
        #expect(try store.ok("import", back).contains("1 created, 1 changed, 1 unchanged"))
        let tasks = try store.tasks()
        func item(_ id: String) -> [String: Any]? { tasks.first { $0["id"] as? String == id } }
        #expect(item(milk)?["done"] as? Bool == true && item(milk)?["notes"] as? String == "semi-skimmed")
        #expect(item(low)?["priority"] as? Int == 0, "a priority Taskwarrior cannot show is kept")
        let flights = try #require(tasks.first { $0["title"] as? String == "Book flights" })
        #expect(flights["list"] as? String == "travel" && flights["tags"] as? [String] == ["phone"] && flights["due"] as? String == "2027-01-10")
        let after = try store.ok("status", "--json")
        #expect(try store.ok("import", back).contains("0 created, 0 changed, 3 unchanged"))
        #expect(try store.ok("status", "--json") == after)
    }
}
