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
