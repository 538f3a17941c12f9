import Foundation
import Testing

/// The README's library section is a program that builds and runs.
@Suite("library example")
struct ExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the README's library example is Examples/GettingStarted/main.swift as it stands")
    func readmeQuotesTheExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: Self.root.appendingPathComponent("Examples/GettingStarted/main.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## The library\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```\n").first)
        #expect(block == example, "README.md's library block differs from Examples/GettingStarted/main.swift")
    }

    @Test("the example syncs two stores through a folder and prints the task done on the first")
    func exampleRuns() throws {
        let binary = (CLI.binary as NSString).deletingLastPathComponent + "/tasklog-example"
        let r = try CLI.run([], store: nil, executable: binary)
        #expect(r.status == 0 && r.stdout == "Buy milk done [\"shop\"]\n1 task\n", "\(r)")
    }
}
