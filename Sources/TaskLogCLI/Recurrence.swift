@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Recurring tasks (Spec/crdt.md, "Recurring tasks"): the rule lives in meta `recur`, the
/// series in meta `series`. Completing an occurrence makes the next one under an id derived
/// from the series and the next due date, so devices that complete the same occurrence at
/// once make the same task, which merges into one.
struct Recurrence: Equatable {
    enum Unit: String { case days, weeks, months, years }

    var count: Int
    var unit: Unit

    static let metaKey = "recur"
    static let seriesKey = "series"

    /// `daily`, `weekly`, `monthly`, `yearly`, `every N days|weeks|months|years`.
    init?(_ text: String) {
        let words = text.lowercased().split(separator: " ").map(String.init)
        switch words {
        case ["daily"]: (count, unit) = (1, .days)
        case ["weekly"]: (count, unit) = (1, .weeks)
        case ["monthly"]: (count, unit) = (1, .months)
        case ["yearly"]: (count, unit) = (1, .years)
        default:
            guard words.count == 3, words[0] == "every", let n = Int(words[1]), n >= 1, n <= 1000 else { return nil }
            let unit = words[2].hasSuffix("s") ? words[2] : words[2] + "s"
            guard let u = Unit(rawValue: unit) else { return nil }
            (count, self.unit) = (n, u)
        }
    }

    /// The canonical text kept in meta `recur`.
    var text: String { "every \(count) \(unit.rawValue)" }

    /// As a person says it: "every month", "every 2 weeks".
    var phrase: String { count == 1 ? "every " + unit.rawValue.dropLast() : text }

    /// The due after `due`: the same kind (a date stays a date), one interval on.
    func next(after due: Due) -> Due {
        switch due {
        case .date(let d):
            return .date(days: shifted(d))
        case .instant(let ms):
            let day = CivilTime.floorDivide(ms, 86_400_000)
            return .instant(milliseconds: ms + (shifted(day) - day) * 86_400_000)
        }
    }

    private func shifted(_ days: Int64) -> Int64 {
        let letter: Character = switch unit {
        case .days: "d"
        case .weeks: "w"
        case .months: "m"
        case .years: "y"
        }
        return DateInput.shifted(days, by: (count, letter))
    }

    /// The id of the occurrence of `series` due `due`: XXH3-128 of both, as a UUID.
    static func occurrenceID(series: String, due: Due) -> TaskID {
        let h = ContentHash.xxh3_128(Array("tasklog occurrence\u{0}\(series)\u{0}\(due.description)".utf8))
        return TaskID(uuidHigh: h.high, low: h.low)
    }

    /// The next occurrence of `task`, completed today (`today`, local days) if it had no due
    /// date; nil if it does not recur.
    static func nextOccurrence(of task: TaskItem, today: Int64) -> (TaskID, NewTask)? {
        guard let rule = task.meta[metaKey].flatMap(Recurrence.init) else { return nil }
        let due = rule.next(after: task.due ?? .date(days: today))
        let series = task.meta[seriesKey] ?? task.id.rawValue
        var meta = task.meta
        meta[seriesKey] = series
        let next = NewTask(title: task.title, notes: task.notes, priority: task.priority, due: due, list: task.list, tags: task.tags, meta: meta)
        return (occurrenceID(series: series, due: due), next)
    }
}
