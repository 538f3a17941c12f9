import TaskModel

/// One word of a quick add: plain (it may be a marker or part of a phrase) or literal (escaped
/// with `\` or inside double quotes: it always stays in the title as written).
struct QuickAddWord: Equatable {
    var text: String
    var isLiteral: Bool

    /// The words of `text`, split at spaces. `\word` is `word`, literal; a word opening with
    /// `"` starts a literal run, quotes kept, up to the first word that ends with `"`.
    static func split(_ text: String) throws(QuickAddError) -> [QuickAddWord] {
        var out: [QuickAddWord] = []
        var quoteOpenedAt: String?
        for piece in text.split(separator: " ") {
            let word = String(piece)
            if quoteOpenedAt != nil {
                out.append(QuickAddWord(text: word, isLiteral: true))
                if word.hasSuffix("\"") { quoteOpenedAt = nil }
            } else if word.hasPrefix("\"") {
                out.append(QuickAddWord(text: word, isLiteral: true))
                if !(word.count > 1 && word.hasSuffix("\"")) { quoteOpenedAt = word }
            } else if word.hasPrefix("\\") && word.count > 1 {
                out.append(QuickAddWord(text: String(word.dropFirst()), isLiteral: true))
            } else {
                out.append(QuickAddWord(text: word, isLiteral: false))
            }
        }
        if let quoteOpenedAt { throw .unclosedQuote(quoteOpenedAt) }
        return out
    }

    /// The rest of a marker word (`#shop` with prefix `#` is `shop`), when a letter follows
    /// the prefix: `#42` and `+1` are no markers.
    func marked(_ prefix: Character) -> String? {
        guard !isLiteral, text.first == prefix, let next = text.dropFirst().first, next.isLetter else { return nil }
        return String(text.dropFirst())
    }
}

/// A quick add being read: the words left for the title, and the fields taken so far.
struct QuickAddReading {
    var words: [QuickAddWord]
    /// The date parser at the reading's clock and locale.
    let date: (String) -> Due?
    var result = QuickAdd.Result(title: "")
    /// Whether `due:` named the due date (then no trailing phrase is read as one).
    var explicitDue = false

    init(words: [QuickAddWord], date: @escaping (String) -> Due?) {
        self.words = words
        self.date = date
    }

    /// The field that a word naming a date explicitly sets, or nil for any other word.
    static func dateField(_ key: String) -> WritableKeyPath<QuickAdd.Result, Due?>? {
        switch key {
        case "due": \.due
        case "wait": \.wait
        case "sched", "scheduled": \.scheduled
        default: nil
        }
    }

    /// Takes `#tag`, `+list`, `!P` and `due:D`, `wait:D`, `sched:D` wherever they stand.
    mutating func takeMarkers() throws(QuickAddError) {
        var i = 0
        while i < words.count {
            let word = words[i]
            if let tag = word.marked("#") {
                if !result.tags.contains(tag) { result.tags.append(tag) }
            } else if let list = word.marked("+") {
                guard result.list == nil else { throw .twice("a list (+\(DateInput.shown(list)))") }
                result.list = list
            } else if !word.isLiteral, word.text.first == "!", let next = word.text.dropFirst().first, next.isLetter || next.isNumber {
                guard result.priority == nil else { throw .twice("a priority (\(DateInput.shown(word.text)))") }
                result.priority = try Self.priority(word.text)
            } else if let (key, value) = dateKey(word) {
                try takeDate(key: key, value: value, at: i)
                continue
            } else {
                i += 1
                continue
            }
            words.remove(at: i)
        }
    }

    /// `!2`, `!high`: 0 to 3 or a name, as `--priority` takes.
    static func priority(_ word: String) throws(QuickAddError) -> UInt8 {
        let names: [String: UInt8] = ["0": 0, "1": 1, "2": 2, "3": 3, "none": 0, "low": 1, "medium": 2, "high": 3]
        guard let p = names[word.dropFirst().lowercased()] else { throw .badPriority(word) }
        return p
    }

    /// `key:value` for a date key, the value not empty.
    private func dateKey(_ word: QuickAddWord) -> (String, String)? {
        guard !word.isLiteral, let colon = word.text.firstIndex(of: ":") else { return nil }
        let key = word.text[..<colon].lowercased()
        let value = String(word.text[word.text.index(after: colon)...])
        return Self.dateField(key) != nil && !value.isEmpty ? (key, value) : nil
    }

    /// Reads the date after `key:` at word `i`: the value and as many plain words after it
    /// (up to three) as still make one date, longest first. Removes the words it took.
    private mutating func takeDate(key: String, value: String, at i: Int) throws(QuickAddError) {
        let field = Self.dateField(key)!
        guard result[keyPath: field] == nil else { throw .twice("\(key == "sched" ? "scheduled" : key) dates") }
        let plain = words[(i + 1)...].prefix(3).prefix { !$0.isLiteral }.map(\.text)
        for extra in stride(from: plain.count, through: 0, by: -1) {
            if let due = date(([value] + plain.prefix(extra)).joined(separator: " ")) {
                result[keyPath: field] = due
                if field == \.due { explicitDue = true }
                words.removeSubrange(i...(i + extra))
                return
            }
        }
        throw .badDate(key: key, text: value)
    }
}
