import Foundation
import Testing

/// The shape CONTRIBUTING.md asks of the sources (files under 400 lines, functions under 60),
/// checked by `scripts/check-shape.sh`.
@Suite("source shape")
struct SourceShapeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appendingPathComponent("scripts/check-shape.sh").path

    /// Runs the shape check on the package in `directory`.
    static func checkShape(of directory: String) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["bash", script, directory]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, output)
    }

    @Test("no source file is over 400 lines and no function over 60")
    func sourcesKeepTheirShape() throws {
        let (status, output) = try Self.checkShape(of: Self.root.path)
        #expect(status == 0, "split these:\n\(output)")
    }

    @Test("no text in the library names a command-line option: an app's user has none to give")
    func libraryTextNamesNoOption() throws {
        let library = ["CRDTCore", "OpLogFormat", "TaskModel", "TaskStore", "TaskSync", "TaskSyncHTTP", "TaskSyncRemote", "TaskCalDAV", "TaskInterchange"]
        var found: [String] = []
        for target in library {
            let dir = Self.root.appendingPathComponent("Sources/" + target).path
            for file in try FileManager.default.contentsOfDirectory(atPath: dir) where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: dir + "/" + file, encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains("\"")
                    && line.range(of: #"\"[^"]*--[a-z]"#, options: .regularExpression) != nil {
                    found.append("\(target)/\(file):\(n + 1)")
                }
            }
        }
        #expect(found.isEmpty, "library text naming an option: \(found)")
    }

    @Test("the command line adds the options that fix a library error to its text")
    func commandLineNamesTheOptions() throws {
        let dir = TemporaryDirectory()
        let file = dir.sub("plain-file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let notAStore = try CLI.run(["list"], store: file)
        #expect(notAStore.status == 1 && notAStore.stderr.contains("choose another folder with --store DIR or TASKLOG_STORE"), "\(notAStore)")
        let missing = try CLI.run(["show", "abcd"], store: dir.sub("s"))
        #expect(missing.stderr.contains("first characters ('tasklog list --all' shows them)"), "\(missing)")
    }

    @Test("the shape check reports a file over 400 lines and a function over 60, and nothing shorter")
    func theCheckReportsWhatIsTooLong() throws {
        let dir = TemporaryDirectory()
        let sources = dir.sub("Sources/Fixture")
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        func function(_ name: String, lines: Int) -> String {
            "func \(name)() {\n" + String(repeating: "    _ = 1\n", count: lines - 2) + "}\n"
        }
        let text = function("longest", lines: 61) + function("longestAllowed", lines: 60)
            + String(repeating: "// filler\n", count: 300)
        try text.write(toFile: dir.sub("Sources/Fixture/Long.swift"), atomically: true, encoding: .utf8)

        let found = try Self.checkShape(of: dir.path)
        #expect(found.status == 1)
        #expect(found.output.contains("Sources/Fixture/Long.swift: 421 lines (at most 400)"), "\(found.output)")
        #expect(found.output.contains("Sources/Fixture/Long.swift:1: longest() is 61 lines (at most 60)"), "\(found.output)")
        #expect(!found.output.contains("longestAllowed()"), "\(found.output)")
    }
}
