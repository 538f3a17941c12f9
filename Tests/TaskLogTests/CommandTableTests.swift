import Foundation
import TaskLogCLI
import Testing

/// The CLI's commands are described once, in their command values: the README's table and
/// the help text come from them.
@Suite("command table")
struct CommandTableTests {
    let dir = TemporaryDirectory()

    static let readme: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }()

    @Test("the README's command table is exactly the one the command values give")
    func readmeTableMatchesTheCommands() throws {
        let lines = Self.readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "| command | does |"), "the README has no command table")
        let table = lines[start...].prefix { $0.hasPrefix("|") }.joined(separator: "\n")
        #expect(table == Commands.markdownTable, "README.md's table differs; paste in:\n\(Commands.markdownTable)")
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    @Test("the README's Package.swift lines resolve the TaskLog product from a checkout beside the app")
    func readmePackageSnippetResolves() throws {
        let lines = Self.readme.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains(".package(path:") }, "the README has no Package.swift lines")
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("```") })
        let dir = TemporaryDirectory()
        try FileManager.default.createSymbolicLink(atPath: dir.sub("TaskLog"), withDestinationPath: Self.root)
        let app = try dir.folder("MyApp")
        try FileManager.default.createDirectory(atPath: app + "/Sources/MyApp", withIntermediateDirectories: true)
        try "import TaskLog\n".write(toFile: app + "/Sources/MyApp/main.swift", atomically: true, encoding: .utf8)
        let manifest = "// swift-tools-version:6.0\nimport PackageDescription\nlet package = Package(\n    name: \"MyApp\",\n"
            + lines[start..<end].joined(separator: "\n") + "\n)\n"
        try manifest.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
        let r = try CalDAVServerTests.run("/usr/bin/env", ["swift", "package", "--package-path", app, "show-dependencies"])
        #expect(r.status == 0 && r.stdout.lowercased().contains("tasklog"), "\(manifest)\n\(r)")
    }

    @Test("scripts/demo.sh shows each command quoted so that pasting it passes the same arguments")
    func demoQuotesWhatItShows() throws {
        let demo = try String(contentsOfFile: Self.root + "/scripts/demo.sh", encoding: .utf8)
        let function = try #require(demo.range(of: "quoted() {").flatMap { s in demo[s.lowerBound...].range(of: "\n}\n").map { demo[s.lowerBound..<$0.upperBound] } })
        let args = ["add", "Buy milk", "it's", "", "$(touch x)", "a\"b", "--due", "2026-12-01"]
        let script = function + "\neval \"set -- $(quoted \"$@\")\"; printf '%s\\n' \"$@\""
        let r = try CalDAVServerTests.run("/bin/bash", ["-c", String(script), "demo"] + args)
        #expect(r.status == 0 && r.stdout == args.map { $0 + "\n" }.joined(), "\(r)")
    }

    @Test("tasklog help CMD and tasklog CMD --help print the same usage and every option of the command")
    func helpForEachCommand() throws {
        let store = CLIStore(path: dir.sub("s"))
        for name in ["add", "list", "edit", "sync", "serve", "replay"] {
            let help = try store.ok("help", name)
            #expect(try store.ok(name, "--help") == help)
            #expect(help.hasPrefix("usage: tasklog \(name)"), "\(help)")
            for option in ["add": ["--notes", "--due", "--priority", "--tag", "--meta"], "edit": ["--no-due", "--unset-meta"],
                           "sync": ["--watch", "--interval", "--token-file", "--tls-ca"], "serve": ["--allow-guest", "--tls-key"]][name] ?? [] {
                #expect(help.contains("  " + option), "\(name): \(option) missing from\n\(help)")
            }
        }
        let unknown = try store.run("help", "ad")
        #expect(unknown.status == 2 && unknown.stderr.contains("did you mean 'add'?"), "\(unknown)")
    }

    @Test("an unambiguous prefix of an option stands for it; an ambiguous one lists the options it could be")
    func optionPrefixes() throws {
        let store = CLIStore(path: dir.sub("s"))
        let id = try store.ok("add", "Buy milk", "--prio", "2", "--ta", "shop").trimmingCharacters(in: .whitespacesAndNewlines)
        let task = try #require(try store.tasks().first)
        #expect(task["priority"] as? Int == 2 && task["tags"] as? [String] == ["shop"])
        let ambiguous = try store.run("edit", id, "--no")
        #expect(ambiguous.status == 2 && ambiguous.stderr.contains("ambiguous: --no-depends, --no-due, --no-list, --no-notes"), "\(ambiguous)")
        let typo = try store.run("list", "--ovrdue")
        #expect(typo.status == 2 && typo.stderr.contains("did you mean --overdue?"), "\(typo)")
    }
}
