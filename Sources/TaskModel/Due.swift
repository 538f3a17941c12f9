/// When a task is due: a calendar date, or an exact instant.
public enum Due: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01 (a date with no time of day).
    case date(days: Int64)
    /// Milliseconds since 1970-01-01T00:00:00Z.
    case instant(milliseconds: Int64)

    /// Parses `YYYY-MM-DD` or an ISO-8601 instant.
    public init?(parsing text: String) {
        if let d = CivilTime.parseDate(Substring(text)) {
            self = .date(days: d)
        } else if let ms = CivilTime.parseInstant(text) {
            self = .instant(milliseconds: ms)
        } else {
            return nil
        }
    }

    /// The instant used to order due times: a date counts as its first millisecond (UTC).
    public var sortKey: Int64 {
        switch self {
        case .date(let d):
            let (ms, overflow) = d.multipliedReportingOverflow(by: 86_400_000)
            return overflow ? (d < 0 ? .min : .max) : ms
        case .instant(let ms): return ms
        }
    }

    public static func < (a: Due, b: Due) -> Bool { a.sortKey < b.sortKey }

    /// Whether it has passed: a date once `today` (the local date, in days) is later, an
    /// instant once `now` (milliseconds) is.
    public func isOverdue(now: Int64, today: Int64) -> Bool {
        switch self {
        case .date(let d): d < today
        case .instant(let ms): ms < now
        }
    }

    /// `YYYY-MM-DD` for a date; `YYYY-MM-DDTHH:MM:SS.sssZ` for an instant.
    public var description: String {
        switch self {
        case .date(let d): CivilTime.dateString(days: d)
        case .instant(let ms): CivilTime.instantString(milliseconds: ms)
        }
    }
}
