#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel
import TaskStore

/// Dates as people type them, relative to now in the local time zone (Spec/cli.md, "Dates").
/// A form without a time of day gives a date; one with a time gives the instant it denotes.
package enum DateInput {
    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// What `text` denotes, or nil if it is no form this parser knows.
    package static func parse(_ text: String, now: Int64, zone: LocalZone) -> Due? {
        let words = text.lowercased().split(separator: " ").map(String.init)
        let today = zone.civil(milliseconds: now)
        if words.count == 1, let days = relativeDay(words[0], today: today.days, weekday: today.weekday) {
            return .date(days: days)
        }
        if let offset = offset(words) { return .date(days: shifted(today.days, by: offset)) }
        if words == ["next", "week"] {
            let toMonday = (8 - today.weekday) % 7  // weekday 0 is Sunday
            return .date(days: today.days + Int64(toMonday == 0 ? 7 : toMonday))
        }
        if let local = localDateTime(text, today: today.days, zone: zone) { return local }
        return Due(parsing: text)
    }

    /// today, tomorrow, yesterday, a weekday (the next one after today), eow, eom.
    private static func relativeDay(_ word: String, today: Int64, weekday: Int) -> Int64? {
        switch word {
        case "today": return today
        case "tomorrow": return today + 1
        case "yesterday": return today - 1
        case "eow": return today + Int64((7 - weekday) % 7)
        case "eom":
            let (y, m, _) = CivilTime.civil(days: today)
            return CivilTime.days(year: y, month: m, day: CivilTime.daysIn(month: m, year: y))
        default:
            guard let target = weekdays.firstIndex(where: { $0 == word || ($0.hasPrefix(word) && word.count >= 3) }) else { return nil }
            let ahead = (target - weekday + 7) % 7
            return today + Int64(ahead == 0 ? 7 : ahead)
        }
    }

    /// `+3d`, `+2w`, `+1m`, `+1y`, `in 3 days`, `in 2 weeks`: a count and a unit.
    private static func offset(_ words: [String]) -> (count: Int, unit: Character)? {
        if words.count == 1, words[0].hasPrefix("+"), let unit = words[0].last, "dwmy".contains(unit),
            let n = Int(words[0].dropFirst().dropLast()), n >= 0, n <= 100_000
        {
            return (n, unit)
        }
        guard words.count == 3, words[0] == "in", let n = Int(words[1]), n >= 0, n <= 100_000 else { return nil }
        let units: [String: Character] = ["day": "d", "days": "d", "week": "w", "weeks": "w", "month": "m", "months": "m", "year": "y", "years": "y"]
        return units[words[2]].map { (n, $0) }
    }

    /// `days` moved on by a count of days (`d`), weeks (`w`), months (`m`) or years (`y`); a
    /// day past the end of the month it lands in becomes that month's last day.
    static func shifted(_ days: Int64, by offset: (count: Int, unit: Character)) -> Int64 {
        switch offset.unit {
        case "d": return days + Int64(offset.count)
        case "w": return days + 7 * Int64(offset.count)
        default:
            let (y, m, d) = CivilTime.civil(days: days)
            let months = (y * 12 + m - 1) + offset.count * (offset.unit == "y" ? 12 : 1)
            let (year, month) = (months / 12, months % 12 + 1)
            return CivilTime.days(year: year, month: month, day: min(d, CivilTime.daysIn(month: month, year: year)))
        }
    }

    /// `12-24` (the next such day), `2026-12-24 09:00`, `2026-12-24T09:00[:30]` (local time).
    private static func localDateTime(_ text: String, today: Int64, zone: LocalZone) -> Due? {
        let u = Array(text.utf8)
        if u.count == 5, u[2] == 45, let m = CivilTime.number(u[0..<2]), let d = CivilTime.number(u[3..<5]),
            (1...12).contains(m)
        {
            let year = CivilTime.civil(days: today).year
            for y in [year, year + 1] where d >= 1 && d <= CivilTime.daysIn(month: m, year: y) {
                let days = CivilTime.days(year: y, month: m, day: d)
                if days >= today { return .date(days: days) }
            }
            return nil
        }
        guard u.count == 16 || u.count == 19, u[10] == 32 || u[10] == 84, u[13] == 58,
            let days = CivilTime.parseDate(Substring(text.prefix(10))),
            let hour = CivilTime.number(u[11..<13]), let minute = CivilTime.number(u[14..<16]), hour < 24, minute < 60
        else { return nil }
        var second = 0
        if u.count == 19 {
            guard u[16] == 58, let s = CivilTime.number(u[17..<19]), s < 60 else { return nil }
            second = s
        }
        return .instant(milliseconds: zone.instant(days: days, hour: hour, minute: minute, second: second))
    }
}
