@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel

/// A VTODO's RRULE (RFC 5545, 3.3.10) as far as a time range needs it: FREQ, INTERVAL, COUNT
/// and UNTIL. Instances are the first one moved by whole steps; a month step that lands on a
/// day the month lacks makes no instance, as RFC 5545 asks.
struct TodoRecurrence {
    enum Frequency { case daily, weekly, monthly, yearly }

    var frequency: Frequency
    var interval: Int64 = 1
    var count: Int64?
    var until: Int64?
    /// False when the rule has parts this reading ignores (BYDAY, BYMONTHDAY…, or a FREQ
    /// finer than a day): then every time from the first instance to UNTIL counts as covered.
    var exact = true

    /// Instances one query may step through for one task.
    static let stepsPerTask = 1_000

    init?(_ line: ContentLine) {
        var frequency: Frequency?
        for part in line.value.uppercased().split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { return nil }
            switch pair[0] {
            case "FREQ":
                frequency = ["DAILY": .daily, "WEEKLY": .weekly, "MONTHLY": .monthly, "YEARLY": .yearly][pair[1]]
                if frequency == nil, ["SECONDLY", "MINUTELY", "HOURLY"].contains(pair[1]) { (frequency, exact) = (.daily, false) }
            case "INTERVAL": interval = max(1, Int64(pair[1]) ?? 1)
            case "COUNT": count = Int64(pair[1])
            case "UNTIL":
                until = ICalendarTime.date(pair[1]).map { ($0 + 1) * 86_400 - 1 } ?? ICalendarTime.wall(pair[1])?.seconds
            case "WKST": break
            default: exact = false
            }
        }
        guard let frequency else { return nil }
        self.frequency = frequency
    }

    /// How far (seconds) each instance after the first lies from it, in order, for instances
    /// that start from `first` through `last`; jumps close to `first` when no COUNT forbids it.
    func offsets(from anchor: Int64, reaching first: Int64, through last: Int64) -> [Int64] {
        let stepSeconds: Int64? = switch frequency {
        case .daily: 86_400 * interval
        case .weekly: 604_800 * interval
        case .monthly, .yearly: nil
        }
        var k: Int64 = 1
        if count == nil, first > anchor {
            // Months and years at their longest, so the jump never passes an instance.
            let approximate = stepSeconds ?? (frequency == .yearly ? 366 : 31) * 86_400 * interval
            k = max(1, (first - anchor) / approximate - 1)
        }
        var out: [Int64] = []
        var made: Int64 = 1
        for _ in 0..<Self.stepsPerTask {
            if let count, made >= count { break }
            guard let offset = offset(anchor: anchor, step: k, stepSeconds: stepSeconds) else {
                k += 1
                continue
            }
            if anchor + offset > last || anchor + offset > (until ?? .max) { break }
            made += 1
            k += 1
            if anchor + offset >= first { out.append(offset) }
        }
        return out
    }

    /// The offset of step `k`, or nil when that month lacks the first instance's day.
    private func offset(anchor: Int64, step k: Int64, stepSeconds: Int64?) -> Int64? {
        if let stepSeconds { return k * stepSeconds }
        let day = CivilTime.floorDivide(anchor, 86_400)
        let (y, m, d) = CivilTime.civil(days: day)
        let months = Int64(y) * 12 + Int64(m - 1) + k * interval * (frequency == .yearly ? 12 : 1)
        let (year, month) = (Int(months / 12), Int(months % 12) + 1)
        guard year <= 9999, d <= CivilTime.daysIn(month: month, year: year) else { return nil }
        return (CivilTime.days(year: year, month: month, day: d) - day) * 86_400
    }
}
