/// A usage error: exit status 2.
package struct UsageError: Error {
    package var message: String
    package init(message: String) { self.message = message }
}

/// The parsed command line of one command. Options are read through their declarations
/// (``Options``, ``Flags``), whose readers turn the text given into values or refuse it.
package struct ParsedArguments: Sendable {
    package var positionals: [String] = []
    var texts: [String: [String]] = [:]
    var flags: Set<String> = []

    /// The value of `option` given last, or nil when it is not given.
    package func value<Value>(_ option: Option<Value>) throws(UsageError) -> Value? {
        guard let text = texts[option.spec.name]?.last else { return nil }
        return try option.read(text)
    }

    /// Every value given of `option`, in order.
    package func values<Value>(_ option: Option<Value>) throws(UsageError) -> [Value] {
        var out: [Value] = []
        for text in texts[option.spec.name] ?? [] { out.append(try option.read(text)) }
        return out
    }

    package func has(_ flag: Flag) -> Bool { flags.contains(flag.spec.name) }

    /// Whether `option` is given at all, whatever its value.
    package func given(_ option: any OptionDeclaration) -> Bool {
        texts[option.spec.name] != nil || flags.contains(option.spec.name)
    }
}

enum ArgumentParser {
    /// Splits `--store DIR` (anywhere) from the rest.
    static func extractStore(_ args: [String]) throws(UsageError) -> (store: String?, rest: [String]) {
        var rest: [String] = []
        var store: String?
        var i = 0
        var afterDoubleDash = false
        while i < args.count {
            let a = args[i]
            if afterDoubleDash {
                rest.append(a)
            } else if a == "--" {
                afterDoubleDash = true
                rest.append(a)
            } else if a == "--store" {
                guard i + 1 < args.count else { throw UsageError(message: "--store needs a folder") }
                store = args[i + 1]
                i += 1
            } else if a.hasPrefix("--store=") {
                store = String(a.dropFirst("--store=".count))
            } else {
                rest.append(a)
            }
            i += 1
        }
        return (store, rest)
    }

    static func parse(_ args: [String], spec: Command) throws(UsageError) -> ParsedArguments {
        var out = ParsedArguments()
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals { out.positionals.append(a); continue }
            if a == "--" { onlyPositionals = true; continue }
            if a.hasPrefix("--") {
                var name = String(a.dropFirst(2))
                var inline: String?
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                let option = try declaration(name, spec: spec)
                name = option.name
                if option.value == nil {
                    guard inline == nil else { throw UsageError(message: "--\(name) takes no value") }
                    out.flags.insert(name)
                } else {
                    let v: String
                    if let inline {
                        v = inline
                    } else {
                        guard i < args.count else { throw UsageError(message: "--\(name) needs a value") }
                        v = args[i]
                        i += 1
                    }
                    if !option.repeats, out.texts[name] != nil {
                        throw UsageError(message: "--\(name) given more than once")
                    }
                    out.texts[name, default: []].append(v)
                }
            } else if a.count == 2, a.hasPrefix("-"), let short = spec.options.first(where: { $0.short == a.last }) {
                out.flags.insert(short.name)
            } else if a.hasPrefix("-") && a.count > 1 && !spec.dashArgumentsArePositional {
                throw UsageError(message: "unknown option \(a) for '\(spec.name)'")
            } else {
                out.positionals.append(a)
            }
        }
        return out
    }

    /// The option `name` stands for: itself, or the one option it is an unambiguous prefix of
    /// (`--prio` for `--priority`). Unknown and ambiguous names are usage errors.
    private static func declaration(_ name: String, spec: Command) throws(UsageError) -> OptionSpec {
        if let exact = spec.option(name) { return exact }
        let known = spec.options.map(\.name)
        let extending = name.isEmpty ? [] : known.filter { $0.hasPrefix(name) }.sorted()
        if extending.count == 1, let only = spec.option(extending[0]) { return only }
        if extending.count > 1 {
            let listed = extending.map { "--" + $0 }.joined(separator: ", ")
            throw UsageError(message: "option --\(name) for '\(spec.name)' is ambiguous: \(listed)")
        }
        var msg = "unknown option --\(name) for '\(spec.name)'"
        if let near = nearest("--" + name, in: known.map { "--" + $0 }) { msg += "; did you mean \(near)?" }
        throw UsageError(message: msg)
    }

    /// The candidate closest to `word` by edit distance, if close enough to be a likely typo.
    static func nearest(_ word: String, in candidates: some Sequence<String>) -> String? {
        var best: (String, Int)?
        for c in candidates {
            let d = editDistance(Array(word), Array(c))
            if d <= max(2, word.count / 3), best.map({ d < $0.1 }) ?? true { best = (c, d) }
        }
        return best?.0
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var prev = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let cur = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
                prev = cur
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
