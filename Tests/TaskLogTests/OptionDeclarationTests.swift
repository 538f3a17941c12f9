import Foundation
import Testing

/// Each option is declared once; help, usage lines and the values a command accepts all come
/// from that declaration, so they cannot drift apart.
@Suite("option declarations")
struct OptionDeclarationTests {
    let dir = TemporaryDirectory()

    @Test("every option a command accepts is in its help's option list and in one of its usage lines")
    func everyOptionIsInHelpAndUsage() throws {
        let store = CLIStore(path: dir.sub("s"))
        let commands = try store.ok("__complete", "commands").split(separator: "\n").map(String.init).filter { $0 != "help" }
        #expect(commands.count >= 25, "\(commands)")
        for command in commands {
            let help = try store.ok("help", command)
            let usage = help.split(separator: "\n").filter { $0.hasPrefix("usage: tasklog ") }.joined(separator: "\n")
            let listed = help.components(separatedBy: "\noptions:\n").dropFirst().first ?? ""
            let options = try store.ok("__complete", "options", command).split(separator: "\n").map(String.init).filter { $0 != "--help" }
            for option in options {
                #expect(listed.contains("  \(option) ") || listed.contains(", \(option) ") || listed.contains("  \(option)\n"), "\(command): \(option) not listed in\n\(help)")
                let words = usage.split(whereSeparator: { " []|…".contains($0) }).map(String.init)
                #expect(words.contains(option), "\(command): \(option) in no usage line:\n\(usage)")
            }
        }
    }

    @Test("export --help lists exactly the formats export accepts, in its usage line and its option help")
    func exportHelpListsTheFormatsItAccepts() throws {
        let store = CLIStore(path: dir.sub("s"))
        _ = try store.ok("add", "Buy milk")
        let help = try store.ok("export", "--help")
        let usage = try #require(help.split(separator: "\n").first { $0.hasPrefix("usage: tasklog export") })
        let choices = try #require(usage.components(separatedBy: "--format ").last?.split(separator: "]").first).split(separator: "|").map(String.init)
        let line = try #require(help.split(separator: "\n").first { $0.contains("--format F") })
        let named = line.components(separatedBy: "F  ").last!.split(separator: ";").first!
            .replacingOccurrences(of: " or ", with: ", ").components(separatedBy: ", ").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(choices == named, "usage \(choices), help \(named)")
        #expect(choices.contains("ics") && choices.count == 4, "\(choices)")
        for format in choices {
            let r = try store.run("export", "--format", format)
            #expect(r.status == 0 && r.stdout.contains("Buy milk"), "\(format): \(r)")
        }
        let refused = try store.run("export", "--format", "csv")
        #expect(refused.status == 2 && refused.stderr.contains("--format must be " + line.components(separatedBy: "F  ").last!.split(separator: ";").first!), "\(refused)")
    }

    @Test("an option's value is refused by its reader with the message that names the option")
    func readersRefuseBadValues() throws {
        let store = CLIStore(path: dir.sub("s"))
        let cases: [([String], String)] = [
            (["add", "x", "--priority", "9"], "--priority must be 0, 1, 2 or 3"),
            (["add", "x", "--due", "someday"], "--due takes a date such as"),
            (["add", "x", "--meta", "=v"], "--meta takes KEY=VALUE, got '=v'"),
            (["add", "x", "--tag", ""], "a tag must not be empty"),
            (["list", "--sort", "size"], "--sort must be created, priority, due or title"),
            (["list", "--limit", "-1"], "--limit must be a whole number ≥ 0"),
            (["list", "--due-before", "soon"], "--due-before takes a date such as"),
            (["sync", dir.sub("f"), "--interval", "0"], "--interval must be a number of seconds between 0.05 and 86400, got '0'"),
        ]
        for (args, message) in cases {
            let r = try store.run(args)
            #expect(r.status == 2 && r.stderr.contains(message), "\(args): \(r)")
        }
        #expect(try store.tasks().isEmpty, "a refused option writes nothing")
    }
}
