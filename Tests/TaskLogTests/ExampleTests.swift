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
        let blocks = section.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```\n").first }
        let block = try #require(blocks.first { $0.contains("import TaskLog") }, "the library section has no program")
        #expect(block == example, "README.md's library block differs from Examples/GettingStarted/main.swift")
    }

    @Test("the example syncs two stores through a folder and prints the task done on the first")
    func exampleRuns() throws {
        let binary = (CLI.binary as NSString).deletingLastPathComponent + "/tasklog-example"
        let r = try CLI.run([], store: nil, executable: binary)
        #expect(r.status == 0 && r.stdout == "Buy milk done [\"shop\"]\n1 task\n", "\(r)")
    }
}

/// The examples in doc comments compile and run: each is a function's body in
/// Examples/DocSnippets/main.swift.
@Suite("doc comment examples")
struct DocSnippetTests {
    /// The lines of the first Swift block of the doc comment before `declaration` in `file`
    /// (the comment may be indented).
    static func docExample(in file: String, before declaration: String) throws -> [String] {
        let source = try String(contentsOf: ExampleTests.root.appendingPathComponent(file), encoding: .utf8)
        let comment = try #require(source.components(separatedBy: declaration).first)
        let lines = comment.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.drop { $0 == " " }) }
        let start = try #require(lines.lastIndex(of: "/// ```swift"))
        let end = try #require(lines[start...].dropFirst().firstIndex(of: "/// ```"))
        return lines[(start + 1)..<end].map { $0 == "///" ? "" : String($0.dropFirst(4)) }
    }

    /// The body of function `name` in the snippets program, one indent removed.
    static func snippet(_ name: String) throws -> [String] {
        let source = try String(
            contentsOf: ExampleTests.root.appendingPathComponent("Examples/DocSnippets/main.swift"), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("func \(name)(") })
        let end = try #require(lines[start...].firstIndex(of: "}"))
        return lines[(start + 1)..<end].map { String($0.dropFirst(4)) }
    }

    @Test("TaskStore's doc comment example is a function of the snippets program, as it stands")
    func taskStoreDocExampleIsTheSnippet() throws {
        let quoted = try Self.docExample(in: "Sources/TaskStore/TaskStore.swift", before: "public final class TaskStore")
        #expect(quoted == (try Self.snippet("taskStoreExample")))
    }

    @Test("FolderKeyring's doc comment example is a function of the snippets program, as it stands")
    func folderKeyringDocExampleIsTheSnippet() throws {
        let quoted = try Self.docExample(in: "Sources/TaskSync/FolderKeyring.swift", before: "public struct FolderKeyring")
        #expect(quoted == (try Self.snippet("encryptedFolderExample")))
    }

    @Test("TaskStore.undoable's doc comment example is a function of the snippets program, as it stands")
    func undoableDocExampleIsTheSnippet() throws {
        let quoted = try Self.docExample(in: "Sources/TaskStore/TaskStore+Undo.swift", before: "public func undoable")
        #expect(quoted == (try Self.snippet("undoExample")))
    }

    @Test("QuickAdd's doc comment example is a function of the snippets program, as it stands")
    func quickAddDocExampleIsTheSnippet() throws {
        let quoted = try Self.docExample(in: "Sources/TaskPlanning/QuickAdd.swift", before: "public enum QuickAdd")
        #expect(quoted == (try Self.snippet("quickAddExample")))
    }

    @Test("the snippets program runs and prints what the examples say")
    func snippetsRun() throws {
        let binary = (CLI.binary as NSString).deletingLastPathComponent + "/tasklog-doc-snippets"
        let r = try CLI.run([], store: nil, executable: binary)
        #expect(r.status == 0 && r.stdout == "Buy milk done\n[\"Call Mum\"]\ndone [false]\nBuy milk [\"shop\"] groceries every week\n", "\(r)")
    }
}
