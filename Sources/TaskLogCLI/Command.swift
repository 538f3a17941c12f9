/// One option of a command.
struct OptionSpec: Sendable {
    /// The name without its dashes (`due` for `--due`).
    var name: String
    /// What the value is called in help (`D` in `--due D`); nil for a flag.
    var value: String?
    /// Whether it may be given more than once.
    var repeats = false
    var help: String
    /// The one-letter form (`q` for `-q`), for the few options typed often.
    var short: Character?

    static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help, short: short)
    }

    static func valued(_ name: String, _ value: String, repeats: Bool = false, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: value, repeats: repeats, help: help)
    }
}

/// One command of the CLI: the single source of its name, options, usage lines, help text
/// and what it runs. `tasklog help`, `tasklog help CMD`, `tasklog CMD --help` and the
/// README's command table all come from these values.
struct Command: Sendable {
    /// One way to call the command, and what it does then (a row of the README's table).
    struct Form: Sendable {
        var usage: String
        var summary: String
    }

    var name: String
    var forms: [Form]
    var options: [OptionSpec] = []
    /// Tokens like `-T` are positional (for `tag ID +T -T`).
    var dashArgumentsArePositional = false
    /// Paragraphs and examples for `tasklog help CMD`, after the summary.
    var details: [String] = []
    var run: @Sendable (Context) throws -> Int32

    var flags: Set<String> { Set(options.filter { $0.value == nil }.map(\.name)) }
    var valued: Set<String> { Set(options.filter { $0.value != nil }.map(\.name)) }
    var repeatable: Set<String> { Set(options.filter(\.repeats).map(\.name)) }

    /// What `tasklog help CMD` prints.
    var help: String {
        var out = forms.map { "usage: tasklog " + $0.usage }.joined(separator: "\n") + "\n\n"
        out += forms.map { capitalised($0.summary) + "." }.joined(separator: "\n") + "\n"
        if !options.isEmpty {
            let names = options.map { ($0.short.map { "-\($0), " } ?? "") + "--" + $0.name + ($0.value.map { " " + $0 } ?? "") }
            let width = names.map(\.count).max()! + 2
            out += "\noptions:\n"
            for (name, option) in zip(names, options) {
                out += "  " + name + String(repeating: " ", count: width - name.count) + option.help
                out += option.repeats ? " (may repeat)\n" : "\n"
            }
        }
        for paragraph in details { out += "\n" + paragraph + "\n" }
        return out
    }

    private func capitalised(_ s: String) -> String { s.prefix(1).uppercased() + s.dropFirst() }
}
