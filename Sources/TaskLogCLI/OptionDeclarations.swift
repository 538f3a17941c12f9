/// What the parser, help, usage lines and completion need of one option, whatever its
/// value's type.
package struct OptionSpec: Sendable, Equatable {
    /// The name without its dashes (`due` for `--due`).
    var name: String
    /// What the value is called in help (`D` in `--due D`); nil for a flag.
    var value: String?
    /// The values usage lines list instead of ``value`` (`--sort created|priority|due|title`).
    var choices: [String]?
    /// Whether it may be given more than once.
    var repeats = false
    var help: String
    /// The one-letter form (`q` for `-q`), for the few options typed often.
    var short: Character?

    /// How a usage line names it: `--due D`, `-q|--quick`, `--sort created|due`.
    var usage: String {
        let long = "--" + name
        if let short { return "-\(short)|" + long }
        return long + ((choices?.joined(separator: "|") ?? value).map { " " + $0 } ?? "")
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
        spec = OptionSpec(name: name, value: nil, help: help, short: short)
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
        Option(spec: OptionSpec(name: name, value: value, repeats: repeats, help: help)) { (text) throws(UsageError) in text }
    }
}

extension Option {
    /// A value `parse` reads; `parse` returns nil for text it refuses, with `refusal(text)` said.
    static func parsed(
        _ name: String, _ value: String, repeats: Bool = false, _ help: String,
        _ parse: @escaping @Sendable (String) -> Value?, refusal: @escaping @Sendable (String) -> String
    ) -> Option {
        Option(spec: OptionSpec(name: name, value: value, repeats: repeats, help: help)) { (text) throws(UsageError) in
            guard let v = parse(text) else { throw UsageError(message: refusal(text)) }
            return v
        }
    }
}

extension Option where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of `Value`'s cases by name: usage lines list them, and `help` is given them listed
    /// (`json, ics or todotxt`), so neither can drift from what is accepted.
    static func choice(_ name: String, _ value: String, help: (String) -> String, refusal: @escaping @Sendable (String, String) -> String) -> Option {
        let names = Value.allCases.map(\.rawValue)
        let listed = names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
        let spec = OptionSpec(name: name, value: value, choices: names, help: help(listed))
        return Option(spec: spec) { (text) throws(UsageError) in
            guard let v = Value(rawValue: text) else { throw UsageError(message: refusal(listed, text)) }
            return v
        }
    }
}

/// One piece of a usage line: words (`TITLE`), an option shown required or optional, or
/// options that exclude each other or go together. Options it shows are the command's.
struct UsagePart: Sendable {
    var text: String
    var options: [OptionSpec]

    /// Words shown as they are: `TITLE`, `ID…`, `+T… -T…`.
    static func words(_ text: String) -> UsagePart { UsagePart(text: text, options: []) }

    /// `--encrypt`: given in this form of the command.
    static func required(_ option: any OptionDeclaration) -> UsagePart {
        UsagePart(text: option.spec.usage, options: [option.spec])
    }

    /// `[--notes T]`, or `[--tag T]…` for one that repeats; `shown` renames its value.
    static func optional(_ option: any OptionDeclaration, shown: String? = nil) -> UsagePart {
        var spec = option.spec
        if let shown { spec.value = shown }
        return UsagePart(text: "[" + spec.usage + "]" + (spec.repeats ? "…" : ""), options: [option.spec])
    }

    /// `[--due D|--no-due]`: at most one of them; ` | ` between them when each takes a value.
    static func oneOf(_ options: any OptionDeclaration...) -> UsagePart {
        let specs = options.map(\.spec)
        let bar = specs.allSatisfy { $0.value != nil } ? " | " : "|"
        return UsagePart(text: "[" + specs.map(\.usage).joined(separator: bar) + "]", options: specs)
    }

    /// `[--tls-cert F --tls-key F]`: all of them or none.
    static func together(_ options: any OptionDeclaration...) -> UsagePart {
        let specs = options.map(\.spec)
        return UsagePart(text: "[" + specs.map(\.usage).joined(separator: " ") + "]", options: specs)
    }
}
