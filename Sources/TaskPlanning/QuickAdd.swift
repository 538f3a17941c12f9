@_spi(Engine) import TaskModel
import TaskStore

/// A task stated in one line, as people type it: "Buy milk tomorrow #shop +groceries !2 every
/// week" (Spec/cli.md, "Quick add", has the grammar).
///
/// ```swift
/// let store = try TaskStore.open(at: folder)
/// let parsed = try QuickAdd.parse("Buy milk tomorrow #shop +groceries !2 every week")
/// let milk = try store.add(parsed.task)
/// print(milk.title, milk.tags, milk.list ?? "", milk.recurrence?.phrase ?? "")  // Buy milk ["shop"] groceries every week
/// ```
public enum QuickAdd {
    /// Longer text is refused before any work.
    public static let maximumLength = 1000

    /// What a line states: the title and every field it names.
    public struct Result: Sendable, Equatable {
        public var title: String
        public var due: Due?
        public var tags: [String] = []
        public var list: String?
        /// 0 to 3, 3 the most urgent.
        public var priority: UInt8?
        public var recurrence: RecurrenceRule?
        /// Before this the task is hidden (meta `wait`).
        public var wait: Due?
        /// When the task is planned for (meta `scheduled`).
        public var scheduled: Due?

        /// The task to add: the fields, and the planning registers as their meta keys.
        public var task: NewTask {
            var meta: [String: String] = [:]
            meta[PlanningKey.recur] = recurrence?.text
            meta[PlanningKey.wait] = wait?.description
            meta[PlanningKey.scheduled] = scheduled?.description
            return NewTask(title: title, priority: priority, due: due, list: list, tags: tags, meta: meta)
        }
    }

    /// What `text` states, read now in the local time zone and the locale's order of day and
    /// month.
    public static func parse(_ text: String) throws(QuickAddError) -> Result {
        try parse(text, now: Int64(Posix.wallClockMilliseconds()), zone: LocalZone(), dayFirst: DateInput.localeWritesDayFirst())
    }

    /// What `text` states at `now` in `zone`; `dayFirst` as for ``DateInput``.
    package static func parse(_ text: String, now: Int64, zone: some CivilZone, dayFirst: Bool) throws(QuickAddError) -> Result {
        guard text.utf8.count <= maximumLength else { throw .tooLong(bytes: text.utf8.count) }
        if let bad = text.unicodeScalars.first(where: isControl) { throw .controlCharacter(bad.value) }
        var reading = QuickAddReading(words: try QuickAddWord.split(text)) { DateInput.parse($0, now: now, zone: zone, dayFirst: dayFirst) }
        try reading.takeMarkers()
        reading.takeTrailingPhrases()
        let title = reading.words.map(\.text).joined(separator: " ")
        guard !title.isEmpty else { throw .noTitle }
        var result = reading.result
        result.title = title
        return result
    }

    /// C0 and C1 controls, DEL and the line and paragraph separators: a quick add is one line.
    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 32 || (0x7F...0x9F).contains(s.value) || s.value == 0x2028 || s.value == 0x2029
    }
}

/// Why a line is no quick add; each says how to fix it.
public enum QuickAddError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLong(bytes: Int)
    case controlCharacter(UInt32)
    case unclosedQuote(String)
    case noTitle
    case badPriority(String)
    case badDate(key: String, text: String)
    case twice(String)

    public var description: String {
        switch self {
        case .tooLong(let n): "the text is \(n) bytes; a quick add takes at most \(QuickAdd.maximumLength)"
        case .controlCharacter(let v): "the text holds the control character U+\(String(v, radix: 16, uppercase: true)); a quick add is one line of text"
        case .unclosedQuote(let w): "the quote opened at '\(DateInput.shown(w))' is never closed; close it, or write \\\" for a literal quote"
        case .noTitle: "nothing is left for the title; escape a word with \\ to keep it, as in \\tomorrow"
        case .badPriority(let w): "'\(DateInput.shown(w))' is no priority: write !0 to !3 or !none, !low, !medium, !high, or \\\(DateInput.shown(w)) to keep the word"
        case .badDate(let key, let t): "'\(DateInput.shown(t))' after \(key): is no date such as \(DateInput.forms)"
        case .twice(let what): "the text names \(what) twice; a task has one"
        }
    }
}
