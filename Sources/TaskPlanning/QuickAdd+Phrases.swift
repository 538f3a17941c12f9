import TaskModel

/// The phrases a quick add reads at the end of the words left after the markers: a
/// recurrence and a due date, in either order, each at most once.
extension QuickAddReading {
    /// Lone words that are weekday abbreviations but also common words: no date at the end.
    static let ambiguousWeekdays: Set<String> = ["sat", "sun", "wed"]
    /// A word before a trailing due date that goes with it: "by friday", "on 12/24".
    static let dateConnectives: Set<String> = ["by", "on", "due"]

    /// Takes a trailing recurrence and a trailing due date, as long as a word stays before each.
    mutating func takeTrailingPhrases() {
        var progressing = true
        while progressing {
            progressing = false
            if result.recurrence == nil, takeTrailingRecurrence() { progressing = true }
            if result.due == nil, !explicitDue, takeTrailingDue() { progressing = true }
        }
    }

    /// The plain words at the end, at most `n` of them, lowercased; `n` words or fewer.
    private func trailing(_ n: Int) -> [String] {
        Array(words.suffix(n).reversed().prefix { !$0.isLiteral }.reversed().map { $0.text.lowercased() })
    }

    /// `daily` … `yearly`, `every N units`, `every unit`, or `every WEEKDAY [TIME]` (weekly,
    /// due that day, at that time, unless a due is named).
    private mutating func takeTrailingRecurrence() -> Bool {
        let end = trailing(3)
        for n in stride(from: min(end.count, words.count - 1), through: 1, by: -1) {
            let phrase = Array(end.suffix(n))
            if let rule = RecurrenceRule(phrase.joined(separator: " ")) {
                result.recurrence = rule
            } else if n >= 2, phrase[0] == "every", let day = weekday(phrase[1]),
                let due = n == 2 ? day : date(phrase.dropFirst().joined(separator: " "))
            {
                result.recurrence = RecurrenceRule(count: 1, unit: .weeks)
                if result.due == nil, !explicitDue { result.due = due }
            } else {
                continue
            }
            words.removeLast(n)
            return true
        }
        return false
    }

    /// A due date of up to four words at the end (the longest that reads as one), with a
    /// connective before it.
    private mutating func takeTrailingDue() -> Bool {
        let end = trailing(4)
        for n in stride(from: min(end.count, words.count - 1), through: 1, by: -1) {
            let phrase = end.suffix(n)
            if n == 1, Self.ambiguousWeekdays.contains(phrase[phrase.startIndex]) { continue }
            guard let due = date(phrase.joined(separator: " ")) else { continue }
            result.due = due
            words.removeLast(n)
            if words.count > 1, let last = words.last, !last.isLiteral, Self.dateConnectives.contains(last.text.lowercased()) {
                words.removeLast()
            }
            return true
        }
        return false
    }

    /// The next day named by a weekday word (full, or three letters or more).
    private func weekday(_ word: String) -> Due? {
        guard word.count >= 3, DateInput.weekdays.contains(where: { $0.hasPrefix(word) }) else { return nil }
        return date(word)
    }
}
