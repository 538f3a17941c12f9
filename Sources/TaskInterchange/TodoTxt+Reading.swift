@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension TodoTxt {
    /// One line read: the task as the line states it, and its unknown `key:value` pairs.
    package struct Line: Equatable {
        /// Title, done, due, list and tags always; priority unless a done line omits it;
        /// notes and meta never (the caller merges ``unknown`` into the task's meta).
        package var patch: TaskPatch
        package var unknown: [String: String]
        /// The registers the line states (``expressedRegisters``), under their meta keys.
        package var planning: [String: String] = [:]
    }

    /// The tasks of a todo.txt file, one per line that is not blank.
    package static func lines(of text: String) throws(InterchangeError) -> [Line] {
        var out: [Line] = []
        // "\r\n" is one Character, so lines are split on any newline Character.
        for (i, trimmed) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            guard trimmed.contains(where: { $0 != " " && $0 != "\t" }) else { continue }
            out.append(try read(trimmed, number: i + 1))
        }
        return out
    }

    /// Reads one line: `x` and a completion date, or a priority `(A)`; a creation date; then
    /// words, `+project` and `@context` tags and `key:value` pairs in any order.
    package static func read(_ line: Substring, number: Int) throws(InterchangeError) -> Line {
        // By scalar: a space before a combining mark is one Character, and still a separator.
        var tokens = line.unicodeScalars.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(Substring.init)[...]
        var patch = TaskPatch()
        patch.done = tokens.first == "x"
        var priority: UInt8??
        if patch.done == true {
            tokens = tokens.dropFirst()
            if let d = tokens.first, CivilTime.parseDate(d) != nil { tokens = tokens.dropFirst() }
        } else {
            priority = .some(nil)
            if let p = tokens.first, p.count == 3, p.first == "(", p.last == ")", let c = p.dropFirst().first, let level = Self.priority(c) {
                priority = .some(level)
                tokens = tokens.dropFirst()
            }
        }
        if let d = tokens.first, CivilTime.parseDate(d) != nil { tokens = tokens.dropFirst() }  // creation: the clock's
        var words: [Substring] = []
        var tags: [String] = []
        var pairs: [(key: Substring, value: Substring)] = []
        for t in tokens {
            if t.count > 1, t.first == "+" {
                tags.append("+" + unescaped(t.dropFirst()))
            } else if t.count > 1, t.first == "@" {
                tags.append(unescaped(t.dropFirst()))
            } else if let pair = keyValue(t) {
                pairs.append(pair)
            } else {
                words.append(t)
            }
        }
        guard !words.isEmpty else { throw InterchangeError.line(number, "it has no text, only dates, tags or key:value pairs") }
        patch.title = words.joined(separator: " ")
        patch.tags = Array(Set(tags)).sorted()
        patch.due = .some(nil)
        patch.list = .some(nil)
        var unknown: [String: String] = [:]
        var planning: [String: String] = [:]
        let due = pairs.last { $0.key == "due" }.flatMap { Due(parsing: String($0.value)) }
        for (key, value) in pairs where !readPlanning(key, unescaped(value), due: due, into: &planning) {
            switch key {
            case "uuid":
                guard let id = TaskID(unescaped(value)) else { throw InterchangeError.line(number, "uuid:\(value) is not a task id") }
                patch.id = id
            case "due":
                guard let due = Due(parsing: String(value)) else {
                    throw InterchangeError.line(number, "due:\(value) is not a date (YYYY-MM-DD) or an instant")
                }
                patch.due = .some(due)
            case "list": patch.list = .some(unescaped(value))
            case "pri" where patch.done == true && value.count == 1 && Self.priority(value.first!) != nil:
                priority = .some(Self.priority(value.first!))
            default: unknown[String(key)] = unescaped(value)
            }
        }
        patch.priority = priority
        if patch.id == nil { patch.id = derivedID(title: patch.title!, tags: patch.tags!) }
        return Line(patch: patch, unknown: unknown, planning: planning)
    }

    /// A `key:value` word: a key of letters, digits, `-`, `_` or `.`, and a value that is
    /// not empty and does not start with `/` (so `https://…` stays text).
    static func keyValue(_ t: Substring) -> (key: Substring, value: Substring)? {
        guard let colon = t.firstIndex(of: ":"), colon != t.startIndex else { return nil }
        let key = t[..<colon]
        let value = t[t.index(after: colon)...]
        guard !value.isEmpty, value.first != "/",
            key.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) })
        else { return nil }
        return (key, value)
    }

    /// The id of a line with no `uuid:`, from its text and tags: the same line read twice, or
    /// read again once marked done, names the same task.
    static func derivedID(title: String, tags: [String]) -> TaskID {
        let h = ContentHash.xxh3_128(Array(("todo.txt\u{0}" + title + "\u{0}" + tags.joined(separator: "\u{0}")).utf8))
        return TaskID(uuidHigh: h.high, low: h.low)
    }
}
