#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel

/// The parts of ``DateInput`` forms: a month and day without a year, a time of day, the
/// locale's order of day and month, and the line that refuses anything else.
extension DateInput {
    /// The forms, as the usage error for an option taking a date lists them.
    package static let forms = "today, friday, next tue, +3d, in 2 weeks, 12-24, 12/24, 2026-12-24, tomorrow 9:00, fri 5:30pm, 2026-12-24T09:00 or 2026-12-24T09:00:00Z"

    /// The one-line usage error for `text` given to the date option `option`.
    package static func refusal(_ option: String, _ text: String) -> String {
        "--\(option) takes a date such as \(forms) (Spec/cli.md lists every form), got '\(shown(text))'"
    }

    /// `text` cut to a readable length, with control characters as `?`, for an error line.
    package static func shown(_ text: String) -> String {
        let cut = text.count > maximumLength ? String(text.prefix(maximumLength)) + "…" : text
        return String(cut.map { $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true ? "?" : $0 })
    }

    /// `12-24` (always month first), or `12/24` and `24/12` in the locale's order: the next
    /// such day, today included.
    package static func monthDay(_ word: String, today: Int64, dayFirst: Bool) -> Int64? {
        let u = Array(word.utf8)
        let dash = u.count == 5 && u[2] == 45
        guard dash || u.contains(47) else { return nil }
        let parts = u.split(separator: dash ? 45 : 47, omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...2).contains($0.count) }),
            var m = CivilTime.number(parts[0]), var d = CivilTime.number(parts[1])
        else { return nil }
        if dayFirst && !dash { swap(&m, &d) }
        guard (1...12).contains(m), d >= 1 else { return nil }
        let year = CivilTime.civil(days: today).year
        for y in [year, year + 1] where d <= CivilTime.daysIn(month: m, year: y) {
            let days = CivilTime.days(year: y, month: m, day: d)
            if days >= today { return days }
        }
        return nil
    }

    /// `9:05`, `17:30`, `9am`, `9:30pm`, `12am` (midnight), `noon`: an hour and minute.
    package static func timeOfDay(_ word: String) -> (hour: Int, minute: Int)? {
        if word == "noon" { return (12, 0) }
        var u = Array(word.utf8)
        var half: Int?
        if u.count > 2, u[u.count - 1] == 109, u[u.count - 2] == 97 || u[u.count - 2] == 112 {  // "am" or "pm"
            half = u[u.count - 2] == 112 ? 12 : 0
            u.removeLast(2)
        }
        let colon = u.firstIndex(of: 58)
        let hourDigits = u[..<(colon ?? u.count)]
        guard (1...2).contains(hourDigits.count), var hour = CivilTime.number(hourDigits) else { return nil }
        var minute = 0
        if let colon {
            let minuteDigits = u[(colon + 1)...]
            guard minuteDigits.count == 2, let m = CivilTime.number(minuteDigits), m < 60 else { return nil }
            minute = m
        } else if half == nil {
            return nil  // a bare number is no time
        }
        if let half {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + half
        }
        return hour < 24 ? (hour, minute) : nil
    }

    /// Whether the locale (`LC_ALL`, else `LC_TIME`, else `LANG`) writes the day before the
    /// month. Month first for none, `C` and `POSIX`, the territories US, CA and PH, and the
    /// languages that write the year first (ja, zh, ko, hu, lt, mn); day first for the rest.
    package static func localeWritesDayFirst() -> Bool {
        let variables: [String] = ["LC_ALL", "LC_TIME", "LANG"]
        let name = variables.lazy.compactMap { (v: String) -> String? in getenv(v).map { String(cString: $0) } }.first { !$0.isEmpty }
        return writesDayFirst(locale: name ?? "")
    }

    /// Whether a locale name such as `en_GB.UTF-8` writes the day first (``localeWritesDayFirst()``).
    package static func writesDayFirst(locale: String) -> Bool {
        let base = locale.prefix { $0 != "." && $0 != "@" }
        let parts = base.split(separator: "_")
        guard let language = parts.first, base != "C", base != "POSIX" else { return false }
        if let territory = parts.dropFirst().first, ["US", "CA", "PH"].contains(territory) { return false }
        return !["ja", "zh", "ko", "hu", "lt", "mn"].contains(language)
    }
}
