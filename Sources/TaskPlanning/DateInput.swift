#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel
import TaskStore

/// A time zone that turns instants into local dates and times and back.
package protocol CivilZone {
    func civil(milliseconds ms: Int64) -> (days: Int64, hour: Int, minute: Int, second: Int, weekday: Int)
    func instant(days: Int64, hour: Int, minute: Int, second: Int) -> Int64
}

extension LocalZone: CivilZone {}

/// Dates as people type them, relative to now in the local time zone (Spec/cli.md, "Dates").
/// A form without a time of day gives a date; one with a time gives the instant it denotes.
public enum DateInput {
    package static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    /// Longer text is no date: it is refused before any work.
    static let maximumLength = 64

    /// What `text` denotes now, in the local time zone and the locale's order of day and month.
    public static func parse(_ text: String) -> Due? {
        parse(text, now: Int64(Posix.wallClockMilliseconds()), zone: LocalZone(), dayFirst: localeWritesDayFirst())
    }

    /// What `text` denotes at `now` in `zone`, or nil if it is no form this parser knows.
    /// `dayFirst` reads `12/10` as 12 October rather than 10 December.
    package static func parse(_ text: String, now: Int64, zone: some CivilZone, dayFirst: Bool) -> Due? {
        guard text.utf8.count <= maximumLength else { return nil }
        let words = text.lowercased().split(separator: " ").map(String.init)
        let today = zone.civil(milliseconds: now)
        if let days = day(words, today: today.days, weekday: today.weekday, dayFirst: dayFirst) { return .date(days: days) }
        if words.count >= 2, let time = timeOfDay(words[words.count - 1]),
            let days = day(words.dropLast(), today: today.days, weekday: today.weekday, dayFirst: dayFirst)
        {
            return .instant(milliseconds: zone.instant(days: days, hour: time.hour, minute: time.minute, second: 0))
        }
        if let local = localDateTime(text, zone: zone) { return local }
        return Due(parsing: text)
    }

    /// The day that `words` name without a time of day, or nil.
    private static func day(_ words: some Collection<String>, today: Int64, weekday: Int, dayFirst: Bool) -> Int64? {
        let words = Array(words)
        if let offset = offset(words) { return CivilTime.shifted(today, by: offset) }
        if words.count == 1 {
            if let days = relativeDay(words[0], today: today, weekday: weekday) { return days }
            if let days = monthDay(words[0], today: today, dayFirst: dayFirst) { return days }
            return CivilTime.parseDate(Substring(words[0]))
        }
        guard words.count == 2, words[0] == "next" else { return nil }
        if words[1] == "week" {
            let toMonday = (8 - weekday) % 7  // weekday 0 is Sunday
            return today + Int64(toMonday == 0 ? 7 : toMonday)
        }
        return weekdayAfter(words[1], today: today, weekday: weekday)
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
        default: return weekdayAfter(word, today: today, weekday: weekday)
        }
    }

    /// The next day after today on the weekday `word` names in full or by three letters or more.
    private static func weekdayAfter(_ word: String, today: Int64, weekday: Int) -> Int64? {
        guard let target = weekdays.firstIndex(where: { $0 == word || ($0.hasPrefix(word) && word.count >= 3) }) else { return nil }
        let ahead = (target - weekday + 7) % 7
        return today + Int64(ahead == 0 ? 7 : ahead)
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

    /// `2026-12-24 09:00`, `2026-12-24T09:00[:30]` (local time).
    private static func localDateTime(_ text: String, zone: some CivilZone) -> Due? {
        let u = Array(text.utf8)
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
