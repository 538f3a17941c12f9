@_spi(Engine) import OpLogFormat

/// How a task repeats (Spec/crdt.md, "Recurring tasks"): a count of days, weeks, months or
/// years. The rule lives in meta `recur` as its ``text``; the series in meta `series`.
public struct RecurrenceRule: Sendable, Hashable {
    public enum Unit: String, Sendable { case days, weeks, months, years }

    public var count: Int
    public var unit: Unit

    /// The largest count a rule may have.
    public static let maximumCount = 1000

    public init?(count: Int, unit: Unit) {
        guard (1...Self.maximumCount).contains(count) else { return nil }
        (self.count, self.unit) = (count, unit)
    }

    /// `daily`, `weekly`, `monthly`, `yearly`, `every N days|weeks|months|years`, and the
    /// singular `every day|week|month|year`.
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        let words = text.lowercased().split(separator: " ").map(String.init)
        switch words {
        case ["daily"]: (count, unit) = (1, .days)
        case ["weekly"]: (count, unit) = (1, .weeks)
        case ["monthly"]: (count, unit) = (1, .months)
        case ["yearly"]: (count, unit) = (1, .years)
        default:
            guard words.count == 2 || words.count == 3, words[0] == "every" else { return nil }
            let n = words.count == 3 ? Int(words[1]) : 1
            guard let n, (1...Self.maximumCount).contains(n) else { return nil }
            let name = words[words.count - 1]
            guard let u = Unit(rawValue: name.hasSuffix("s") ? name : name + "s") else { return nil }
            (count, unit) = (n, u)
        }
    }

    /// The canonical text kept in meta `recur`: "every 2 weeks".
    public var text: String { "every \(count) \(unit.rawValue)" }

    /// As a person says it: "every month", "every 2 weeks".
    public var phrase: String { count == 1 ? "every " + unit.rawValue.dropLast() : text }

    /// The due after `due`: the same kind (a date stays a date), one interval on.
    public func next(after due: Due) -> Due {
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
        return CivilTime.shifted(days, by: (count, letter))
    }

    /// The id of the occurrence of `series` due `due`: XXH3-128 of both, as a UUID. Devices
    /// that complete the same occurrence at once make the same next task, which merges into one.
    public static func occurrenceID(series: String, due: Due) -> TaskID {
        let h = ContentHash.xxh3_128(Array("tasklog occurrence\u{0}\(series)\u{0}\(due.description)".utf8))
        return TaskID(uuidHigh: h.high, low: h.low)
    }
}
