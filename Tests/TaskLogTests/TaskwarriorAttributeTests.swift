import Foundation
@_spi(Engine) import TaskInterchange
import Testing

/// Taskwarrior attributes TaskLog has no field for, of every JSON type, kept as meta through
/// import, the store and export, and read back by the real Taskwarrior (`task`).
@Suite("Taskwarrior attributes")
struct TaskwarriorAttributeTests {
    let dir = TemporaryDirectory()

    @Test("attributes that are not strings are kept as their JSON text, strings as text")
    func valuesAreKeptAsJSONText() throws {
        let json = #"[{"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250","description":"x","blocks":["42846490-552a-4a48-97ac-42adb99ea8b0"],"#
            + #""size":2.5,"n":-7,"ok":true,"none":null,"obj":{"b":[1,{"c":"\u00e9\n"}],"a":1e300},"until":"20300101T000000Z"}]"#
        let meta = try TaskwarriorJSON.entries(of: Array(json.utf8))[0].meta
        #expect(meta["taskwarrior-json.blocks"] == #"["42846490-552a-4a48-97ac-42adb99ea8b0"]"#)
        #expect(meta["taskwarrior-json.size"] == "2.5" && meta["taskwarrior-json.n"] == "-7" && meta["taskwarrior-json.ok"] == "true")
        #expect(meta["taskwarrior-json.none"] == "null" && meta["taskwarrior.until"] == "20300101T000000Z")
        #expect(meta["taskwarrior-json.obj"] == #"{"b":[1,{"c":"é\n"}],"a":1e+300}"#)
    }

    @Test("tasklog export gives back each attribute's JSON value, and importing that export changes nothing")
    func exportGivesBackTheValues() throws {
        let store = CLIStore(path: dir.sub("store"))
        let source = #"[{"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250","description":"x","depends":["42846490-552a-4a48-97ac-42adb99ea8b0"],"#
            + #""size":2.5,"ok":false,"none":null,"obj":{"b":[1,{"c":"\u00e9"}],"a":-3},"annotations":[{"entry":"20260101T101010Z","description":"hi"}]}]"#
        try source.write(toFile: dir.sub("in.json"), atomically: true, encoding: .utf8)
        #expect(try store.ok("import", "--format", "taskwarrior", dir.sub("in.json")).contains("1 created"))
        let out = dir.sub("out.json")
        try store.ok("export", "--format", "taskwarrior").write(toFile: out, atomically: true, encoding: .utf8)
        let read = try Self.objects(out)[0]
        let want = try Self.objects(dir.sub("in.json"))[0]
        for key in ["depends", "size", "ok", "none", "obj", "annotations"] {
            #expect(read[key] as? NSObject == want[key] as? NSObject, "\(key)")
        }
        #expect(try store.ok("import", "--format", "taskwarrior", out).contains("0 created, 0 changed, 1 unchanged"))
    }

    @Test("Taskwarrior reads back depends, wait, scheduled, a UDA of each type and annotations, each field equal")
    func theRealTaskwarriorReadsThemBack() throws {
        let tw = try Taskwarrior(dir: dir, name: "first")
        _ = try tw.run("add", "Book hotel")
        _ = try tw.run("add", "Plan trip", "depends:1", "wait:2020-01-01", "scheduled:2027-02-01", "until:2028-01-01", "size:3.5",
                       "estimate:2h", "review:2027-03-01T10:30:00", "owner:ana lee", "project:home", "+trip", "priority:M")
        _ = try tw.run("2", "annotate", "first note")
        _ = try tw.run("2", "annotate", "second note")
        let source = dir.sub("source.json")
        try tw.run("export").write(toFile: source, atomically: true, encoding: .utf8)
        let store = CLIStore(path: dir.sub("store"))
        #expect(try store.ok("import", source).contains("2 created"))
        let (before, after) = try Self.throughSecondTaskwarrior(store, source: source, dir: dir)
        #expect(before.count == 2 && Set(before.keys) == Set(after.keys))
        let plan = try #require(before.values.first { $0["description"] as? String == "Plan trip" })
        for key in ["depends", "wait", "scheduled", "until", "size", "estimate", "review", "owner", "annotations"] {
            #expect(plan[key] != nil, "the source states \(key)")
        }
        try Self.expectSameFields(before, after)
    }

    /// Exports `store` for Taskwarrior, imports that into a second Taskwarrior and exports it:
    /// the tasks of `source` and of that export, by uuid (written beside the store as `back.json`).
    static func throughSecondTaskwarrior(
        _ store: CLIStore, source: String, dir: TemporaryDirectory
    ) throws -> (before: [String: [String: Any]], after: [String: [String: Any]]) {
        let exported = dir.sub("exported.json")
        try store.ok("export", "--format", "taskwarrior").write(toFile: exported, atomically: true, encoding: .utf8)
        let second = try Taskwarrior(dir: dir, name: "second")
        _ = try second.run("import", exported)
        let back = dir.sub("back.json")
        try second.run("export").write(toFile: back, atomically: true, encoding: .utf8)
        return (try byUUID(source), try byUUID(back))
    }

    /// Every field of each task in `before` is equal in `after`, but those Taskwarrior sets itself.
    static func expectSameFields(_ before: [String: [String: Any]], _ after: [String: [String: Any]]) throws {
        for (uuid, task) in before {
            let other = try #require(after[uuid])
            for (key, value) in task where !["id", "urgency", "modified"].contains(key) {
                #expect(other[key] as? NSObject == value as? NSObject, "\(key) of \(task["description"] ?? "")")
            }
        }
    }

    @Test("a 10 MB attribute, nesting past the limit or a number JSON cannot write is refused by name, importing nothing")
    func hostileAttributesAreRefused() throws {
        let head = #"[{"uuid":"7ae8f77a-fe54-49c6-8efc-41b9bd382250","description":"x","depends":"#
        let huge = head + "[" + String(repeating: "12345,", count: 1_750_000) + "0]}]"
        let deep = head + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}]"
        let infinite = head + "[1e999]}]"
        let cases = [("huge", huge, "task 1: attribute depends takes"), ("deep", deep, "nesting deeper than 64"),
                     ("infinite", infinite, "task 1: attribute depends holds a number too large")]
        let store = CLIStore(path: dir.sub("store"))
        _ = try store.ok("add", "kept")
        for (name, text, reason) in cases {
            let path = dir.sub("\(name).json")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try store.run("import", "--format", "taskwarrior", path)
            #expect(r.status != 0 && r.stderr.contains(reason) && r.stderr.contains("nothing was imported"), "\(name): \(r)")
            let harness = FuzzHarness(root: dir.sub("fuzz-\(name)"))
            defer { harness.cleanUp() }
            #expect(throws: Never.self, "\(name)") { try harness.run(.taskwarrior, Array(text.utf8)) }
        }
        #expect(try store.tasks().count == 1)
    }

    static func objects(_ path: String) throws -> [[String: Any]] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]])
    }

    static func byUUID(_ path: String) throws -> [String: [String: Any]] {
        Dictionary(try objects(path).map { ($0["uuid"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }
}

/// The real `task` binary with its own data folder and a taskrc declaring a UDA of each type.
struct Taskwarrior {
    let binary: String
    let rc: String
    let home: String

    init(dir: TemporaryDirectory, name: String) throws {
        binary = try #require(
            ["/usr/bin/task", "/usr/local/bin/task"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "task is missing: scripts/install-deps.sh installs taskwarrior")
        rc = dir.sub("\(name).taskrc")
        home = dir.path
        let udas = ["size": "numeric", "estimate": "duration", "review": "date", "owner": "string"]
        let config = ["data.location=\(dir.sub("\(name)-data"))", "confirmation=off", "verbose=nothing", "json.array=on", "recurrence=off"]
            + udas.map { "uda.\($0.key).type=\($0.value)\nuda.\($0.key).label=\($0.key)" }
        try (config.joined(separator: "\n") + "\n").write(toFile: rc, atomically: true, encoding: .utf8)
    }

    /// Runs `task args…`; a failing run fails the test.
    func run(_ args: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = args
        p.environment = ["TASKRC": rc, "HOME": home, "TZ": "UTC"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let problem = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "task \(args): \(problem)")
        return text
    }
}
