@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// What `list` (and `search`) keeps beyond the store's query (Spec/cli.md, "Listing"): words of
/// the title or notes, every `--tag` and `--list` given, and due dates. Words and tags match
/// case- and accent-insensitively. A date counts as its whole local day: before D means
/// before D's first moment, after D after its last.
struct ListFilter {
    var words: [String] = []
    var tags: [String] = []
    var lists: [String] = []
    var overdue = false
    var before: Int64?
    var after: Int64?
    let now: Int64
    let zone: LocalZone
    /// The local date, in days (for overdue), worked out once.
    let today: Int64

    /// The filter the arguments ask for, or nil when the store's query says it all.
    init?(_ context: Context, words: [String]) throws(UsageError) {
        now = Int64(Posix.wallClockMilliseconds())
        zone = LocalZone()
        today = zone.civil(milliseconds: now).days
        self.words = words.flatMap { $0.split(separator: " ").map { Folding.folded(String($0)) } }
        tags = context.arguments.all("tag").map(Folding.folded)
        lists = context.arguments.all("list")
        overdue = context.arguments.has("overdue")
        let (before, after) = (try context.date("due-before"), try context.date("due-after"))
        self.before = before.map { start(of: $0) }
        self.after = after.map { end(of: $0) }
        // Tags match case-insensitively, which the store's query (exact) does not.
        if self.words.isEmpty && tags.isEmpty && lists.count <= 1 && !overdue && before == nil && after == nil { return nil }
    }

    func admits(_ t: TaskItem) -> Bool {
        if !words.isEmpty {
            let text = Folding.folded(t.title + " " + (t.notes ?? ""))
            guard words.allSatisfy(text.contains) else { return false }
        }
        if !tags.isEmpty {
            let own = Set(t.tags.map(Folding.folded))
            guard tags.allSatisfy(own.contains) else { return false }
        }
        if !lists.allSatisfy({ $0 == t.list }) { return false }
        guard overdue || before != nil || after != nil else { return true }
        guard let due = t.due else { return false }
        if overdue && !due.isOverdue(now: now, today: today) { return false }
        if let before, end(of: due) > before { return false }
        if let after, start(of: due) < after { return false }
        return true
    }

    /// The first millisecond a due covers: a date's local midnight, or the instant.
    private func start(of due: Due) -> Int64 {
        switch due {
        case .date(let d): zone.instant(days: d, hour: 0, minute: 0)
        case .instant(let ms): ms
        }
    }

    /// The first millisecond after a due: the next local midnight, or the instant plus one.
    private func end(of due: Due) -> Int64 {
        switch due {
        case .date(let d): zone.instant(days: d + 1, hour: 0, minute: 0)
        case .instant(let ms): ms + 1
        }
    }
}

/// Text folded for matching: lowercase, with accents taken off Latin letters (precomposed
/// letters of Latin-1 and Latin Extended-A, and combining marks after any letter).
enum Folding {
    private static let table: [Character: String] = {
        let groups = [
            ("a", "àáâãäåāăą"), ("c", "çćĉċč"), ("d", "ďđ"), ("e", "èéêëēĕėęě"), ("g", "ĝğġģ"), ("h", "ĥħ"),
            ("i", "ìíîïĩīĭįı"), ("j", "ĵ"), ("k", "ķ"), ("l", "ĺļľŀł"), ("n", "ñńņňŉ"), ("o", "òóôõöøōŏő"),
            ("r", "ŕŗř"), ("s", "śŝşšß"), ("t", "ţťŧ"), ("u", "ùúûüũūŭůűų"), ("w", "ŵ"), ("y", "ýÿŷ"), ("z", "źżž"),
            ("ae", "æ"), ("oe", "œ"),
        ]
        var out: [Character: String] = [:]
        for (base, accented) in groups { for c in accented { out[c] = base } }
        return out
    }()

    static func folded(_ s: String) -> String {
        var out = ""
        for c in s.lowercased() {
            if let base = table[c] {
                out += base
            } else if c.unicodeScalars.count > 1, let first = c.unicodeScalars.first {
                // A letter followed by combining marks: the letter alone (folded again).
                out += table[Character(first)] ?? String(first)
            } else {
                out.append(c)
            }
        }
        return out
    }
}
