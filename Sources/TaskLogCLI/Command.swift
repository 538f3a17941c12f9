/// One command of the CLI: the single source of its name, options, usage lines, help text
/// and what it runs. `tasklog help`, `tasklog help CMD`, `tasklog CMD --help` and the
/// README's command table all come from these values.
struct Command: Sendable {
    /// One way to call the command, and what it does then (a row of the README's table).
    struct Form: Sendable {
        /// The command and its words: `add TITLE`.
        var words: String
        /// The options this form shows, and any words between them.
        var parts: [UsagePart] = []
        var summary: String

        init(_ words: String, _ parts: [UsagePart] = [], summary: String) {
            (self.words, self.parts, self.summary) = (words, parts, summary)
        }

        /// The usage line, generated from the option declarations.
        var usage: String { ([words] + parts.map(\.text)).joined(separator: " ") }
    }

    var name: String
    /// Its forms, made when asked: running a command builds only its own.
    private let makeForms: @Sendable () -> [Form]
    /// Tokens like `-T` are positional (for `tag ID +T -T`).
    var dashArgumentsArePositional = false
    /// Paragraphs and examples for `tasklog help CMD`, after the summary, made when asked.
    private let makeDetails: @Sendable () -> [String]
    var run: @Sendable (Context) throws -> Int32

    init(
        name: String, forms: @autoclosure @escaping @Sendable () -> [Form], dashArgumentsArePositional: Bool = false,
        details: @autoclosure @escaping @Sendable () -> [String] = [], run: @escaping @Sendable (Context) throws -> Int32
    ) {
        (self.name, makeForms, self.dashArgumentsArePositional, makeDetails, self.run) = (name, forms, dashArgumentsArePositional, details, run)
    }

    var forms: [Form] { makeForms() }
    var details: [String] { makeDetails() }

    /// The options its forms show, in the order they first appear: all it accepts.
    var options: [OptionSpec] {
        var seen = Set<String>()
        return forms.flatMap { $0.parts.flatMap(\.options) }.filter { seen.insert($0.name).inserted }
    }

    /// The declaration of the option `name` (without dashes), if the command has one.
    func option(_ name: String) -> OptionSpec? {
        for form in makeForms() {
            for part in form.parts { if let o = part.options.first(where: { $0.name == name }) { return o } }
        }
        return nil
    }

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
