/// One command of the CLI: the single source of its name, options, usage lines, help text
/// and what it runs. `tasklog help`, `tasklog help CMD`, `tasklog CMD --help` and the
/// README's command table all come from these values.
struct Command: Sendable {
    /// One way to call the command, and what it does then (a row of the README's table).
    struct Form: Sendable {
        /// The command and its words (`add TITLE`), then the options this form shows.
        var parts: [UsagePart]
        var summary: String

        init(_ words: String, _ parts: [UsagePart] = [], summary: String) {
            self.parts = [.words(words)] + parts
            self.summary = summary
        }

        /// The usage line, generated from the option declarations.
        var usage: String { parts.map(\.text).joined(separator: " ") }
    }

    var name: String
    var forms: [Form]
    /// Tokens like `-T` are positional (for `tag ID +T -T`).
    var dashArgumentsArePositional = false
    /// Paragraphs and examples for `tasklog help CMD`, after the summary.
    var details: [String] = []
    var run: @Sendable (Context) throws -> Int32

    init(
        name: String, forms: [Form], dashArgumentsArePositional: Bool = false, details: [String] = [],
        run: @escaping @Sendable (Context) throws -> Int32
    ) {
        self.name = name
        self.forms = forms
        self.dashArgumentsArePositional = dashArgumentsArePositional
        self.details = details
        self.run = run
        options = Self.shown(in: forms)
    }

    /// The options its forms show, in the order they first appear: all it accepts.
    let options: [OptionSpec]

    private static func shown(in forms: [Form]) -> [OptionSpec] {
        var seen = Set<String>()
        return forms.flatMap { $0.parts.flatMap(\.options) }.filter { seen.insert($0.name).inserted }
    }

    /// The declaration of the option `name` (without dashes), if the command has one.
    func option(_ name: String) -> OptionSpec? { options.first { $0.name == name } }

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
