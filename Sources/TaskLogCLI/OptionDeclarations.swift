/// What the parser, help, usage lines and completion need of one option, whatever its
/// value's type.
package struct OptionSpec: Sendable {
    /// The name without its dashes (`due` for `--due`).
    var name: String
    /// What the value is called in help (`D` in `--due D`); nil for a flag.
    var value: String?
    /// The values usage lines list instead of ``value`` (`--sort created|priority|due|title`).
    var choices: [String]?
    /// Whether it may be given more than once.
    var repeats = false
    /// What help says of it; for an option with ``choices``, worded around them when help asks.
    var about: Help
    /// The one-letter form (`q` for `-q`), for the few options typed often.
    var short: Character?

    /// How a usage line names it: `--due D`, `-q|--quick`, `--sort created|due`.
    var usage: String {
        let long = "--" + name
        if let short { return "-\(short)|" + long }
        return long + ((choices?.joined(separator: "|") ?? value).map { " " + $0 } ?? "")
    }

    enum Help: Sendable {
        case text(String)
        case choices(@Sendable (String) -> String)
    }

    var help: String {
        get {
            switch about {
            case .text(let text): return text
            case .choices(let word): return word(Self.listed(choices ?? []))
            }
        }
        set { about = .text(newValue) }
    }

    /// `json, ics or todotxt`.
    static func listed(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

/// An option declared once: its spec, read by the parser and help, and what commands read.
package protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}

/// An option that takes a value; `read` turns each text given into a `Value` or refuses it
/// with the message the user sees.
package struct Option<Value>: OptionDeclaration {
    package var spec: OptionSpec
    var read: @Sendable (String) throws(UsageError) -> Value

    /// The same option with help worded for one command.
    func helped(_ help: String) -> Option {
        var copy = self
        copy.spec.help = help
        return copy
    }
}

/// An option without a value.
package struct Flag: OptionDeclaration {
    package var spec: OptionSpec

    init(_ name: String, short: Character? = nil, _ help: String) {
        spec = OptionSpec(name: name, value: nil, about: .text(help), short: short)
    }

    /// The same flag with help worded for one command.
    func helped(_ help: String) -> Flag {
        var copy = self
        copy.spec.help = help
        return copy
    }
}

extension Option where Value == String {
    /// Free text, taken as given.
    static func text(_ name: String, _ value: String, repeats: Bool = false, _ help: String) -> Option {
        Option(spec: OptionSpec(name: name, value: value, repeats: repeats, about: .text(help))) { (text) throws(UsageError) in text }
    }
}

extension Option {
    /// A value `parse` reads; `parse` returns nil for text it refuses, with `refusal(text)` said.
    static func parsed(
        _ name: String, _ value: String, repeats: Bool = false, _ help: String,
        _ parse: @escaping @Sendable (String) -> Value?, refusal: @escaping @Sendable (String) -> String
    ) -> Option {
        Option(spec: OptionSpec(name: name, value: value, repeats: repeats, about: .text(help))) { (text) throws(UsageError) in
            guard let v = parse(text) else { throw UsageError(message: refusal(text)) }
            return v
        }
    }
}

extension Option where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of `Value`'s cases by name: usage lines list them, and `help` is given them listed
    /// (`json, ics or todotxt`), so neither can drift from what is accepted.
    static func choice(
        _ name: String, _ value: String, help: @escaping @Sendable (String) -> String, refusal: @escaping @Sendable (String, String) -> String
    ) -> Option {
        let spec = OptionSpec(name: name, value: value, choices: Value.allCases.map(\.rawValue), about: .choices(help))
        return Option(spec: spec) { (text) throws(UsageError) in
            guard let v = Value(rawValue: text) else {
                throw UsageError(message: refusal(OptionSpec.listed(Value.allCases.map(\.rawValue)), text))
            }
            return v
        }
    }
}

/// One piece of a usage line: an option shown required or optional, or options that exclude
/// each other or go together. Its text is made only when help asks, so a command that runs
/// does not pay for it.
struct UsagePart: Sendable {
    enum Kind: Sendable {
        case words(String)
        case option(OptionSpec, required: Bool, shown: String?)
        case oneOf([OptionSpec])
        case together([OptionSpec])
    }

    var kind: Kind

    /// Words shown as they are, between options: `TEXT` after `-q|--quick`.
    static func words(_ text: String) -> UsagePart { UsagePart(kind: .words(text)) }

    /// `--encrypt`: given in this form of the command.
    static func required(_ option: some OptionDeclaration) -> UsagePart {
        UsagePart(kind: .option(option.spec, required: true, shown: nil))
    }

    /// `[--notes T]`, or `[--tag T]…` for one that repeats; `shown` renames its value.
    static func optional(_ option: some OptionDeclaration, shown: String? = nil) -> UsagePart {
        UsagePart(kind: .option(option.spec, required: false, shown: shown))
    }

    /// `[--due D|--no-due]`: at most one of them; ` | ` between them when each takes a value.
    static func oneOf<each D: OptionDeclaration>(_ options: repeat each D) -> UsagePart {
        UsagePart(kind: .oneOf(specs(repeat each options)))
    }

    /// `[--tls-cert F --tls-key F]`: all of them or none.
    static func together<each D: OptionDeclaration>(_ options: repeat each D) -> UsagePart {
        UsagePart(kind: .together(specs(repeat each options)))
    }

    private static func specs<each D: OptionDeclaration>(_ options: repeat each D) -> [OptionSpec] {
        var specs: [OptionSpec] = []
        for option in repeat each options { specs.append(option.spec) }
        return specs
    }

    /// The options it shows.
    var options: [OptionSpec] {
        switch kind {
        case .words: []
        case .option(let spec, _, _): [spec]
        case .oneOf(let specs), .together(let specs): specs
        }
    }

    /// How the usage line shows it.
    var text: String {
        switch kind {
        case .words(let text): return text
        case .option(let spec, true, _): return spec.usage
        case .option(var spec, false, let shown):
            if let shown { spec.value = shown }
            return "[" + spec.usage + "]" + (spec.repeats ? "…" : "")
        case .oneOf(let specs):
            let bar = specs.allSatisfy { $0.value != nil } ? " | " : "|"
            return "[" + specs.map(\.usage).joined(separator: bar) + "]"
        case .together(let specs): return "[" + specs.map(\.usage).joined(separator: " ") + "]"
        }
    }
}
