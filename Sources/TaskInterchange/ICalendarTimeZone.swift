@_spi(Engine) import TaskModel

/// A VTIMEZONE's observances (RFC 5545, 3.6.5): the UTC offset in force at any wall time.
///
/// Onsets come from each observance's DTSTART, its RDATEs, and a yearly RRULE with
/// BYMONTH and BYDAY (`-1SU`, `2SU`) or BYDAY with BYMONTHDAY, as time zone writers use.
package struct ICalendarTimeZone: Sendable {
    package var id: String

    struct Observance {
        var start: Int64
        var offsetFrom: Int64
        var offsetTo: Int64
        var rule: YearlyRule?
        var dates: [Int64]
    }

    /// A yearly rule: the month, and the day as an nth weekday or the first listed month day
    /// on a weekday.
    struct YearlyRule {
        var month: Int
        var weekday: Int?
        var ordinal: Int?
        var monthDays: [Int]
        var until: Int64?
    }

    var observances: [Observance]

    /// Reads a VTIMEZONE; nil when it has no TZID or an observance lacks its offsets.
    package init?(_ c: ICalendarComponent) {
        guard c.name == "VTIMEZONE", let id = c.property("TZID")?.value else { return nil }
        self.id = id
        observances = []
        for o in c.components where o.name == "STANDARD" || o.name == "DAYLIGHT" {
            guard let start = o.property("DTSTART").flatMap({ ICalendarTime.wall($0.value) })?.seconds,
                let from = o.property("TZOFFSETFROM").flatMap({ ICalendarTime.offset($0.value) }),
                let to = o.property("TZOFFSETTO").flatMap({ ICalendarTime.offset($0.value) })
            else { return nil }
            let dates = o.properties.filter { $0.name == "RDATE" }.flatMap { $0.value.split(separator: ",") }
                .compactMap { ICalendarTime.wall($0)?.seconds }
            let rule = o.property("RRULE").flatMap { Self.rule($0.value, start: start) }
            observances.append(Observance(start: start, offsetFrom: from, offsetTo: to, rule: rule, dates: dates))
        }
        guard !observances.isEmpty else { return nil }
    }

    /// The offset east of UTC, in seconds, in force at a wall time (seconds since 1970 read as UTC).
    package func offset(atWall wall: Int64) -> Int64 {
        let year = CivilTime.civil(days: CivilTime.floorDivide(wall, 86_400)).year
        var best: (onset: Int64, offset: Int64)?
        for o in observances {
            var onsets = [o.start] + o.dates
            if let rule = o.rule {
                let startYear = CivilTime.civil(days: CivilTime.floorDivide(o.start, 86_400)).year
                for y in max(startYear, year - 1)...max(startYear, year) {
                    if let onset = rule.onset(year: y, timeOfDay: o.start - CivilTime.floorDivide(o.start, 86_400) * 86_400),
                        onset >= o.start, rule.until.map({ onset - o.offsetFrom <= $0 }) ?? true
                    {
                        onsets.append(onset)
                    }
                }
            }
            for onset in onsets where onset <= wall && onset > (best?.onset ?? .min) { best = (onset, o.offsetTo) }
        }
        if let best { return best.offset }
        return observances.min { $0.start < $1.start }!.offsetFrom
    }

    private static func rule(_ text: String, start: Int64) -> YearlyRule? {
        var parts: [String: String] = [:]
        for p in text.split(separator: ";") {
            let kv = p.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { parts[kv[0].uppercased()] = String(kv[1]) }
        }
        guard parts["FREQ"] == "YEARLY" else { return nil }
        let startMonth = CivilTime.civil(days: CivilTime.floorDivide(start, 86_400)).month
        var rule = YearlyRule(month: parts["BYMONTH"].flatMap { Int($0) } ?? startMonth, monthDays: [])
        rule.monthDays = parts["BYMONTHDAY"]?.split(separator: ",").compactMap { Int($0) } ?? []
        if let day = parts["BYDAY"] {
            let names = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]
            guard let w = names.firstIndex(of: String(day.suffix(2))) else { return nil }
            rule.weekday = w
            rule.ordinal = Int(day.dropLast(2))
        }
        if rule.weekday == nil && rule.monthDays.isEmpty {
            rule.monthDays = [CivilTime.civil(days: CivilTime.floorDivide(start, 86_400)).day]
        }
        rule.until = parts["UNTIL"].flatMap { ICalendarTime.wall($0)?.seconds ?? ICalendarTime.date($0).map { $0 * 86_400 } }
        return rule
    }
}

extension ICalendarTimeZone.YearlyRule {
    /// The wall time of this rule's onset in `year`.
    func onset(year: Int, timeOfDay: Int64) -> Int64? {
        let first = CivilTime.days(year: year, month: month, day: 1)
        let length = CivilTime.daysIn(month: month, year: year)
        let candidates: [Int64]
        if let weekday {
            let all = (0..<Int64(length)).map { first + $0 }.filter { Int(CivilTime.floorRemainder($0 + 4, 7)) == weekday }
            if let n = ordinal, n != 0 {
                let i = n > 0 ? n - 1 : all.count + n
                guard all.indices.contains(i) else { return nil }
                candidates = [all[i]]
            } else {
                candidates = monthDays.isEmpty ? all : all.filter { monthDays.contains(Int($0 - first) + 1) }
            }
        } else {
            candidates = monthDays.filter { $0 >= 1 && $0 <= length }.map { first + Int64($0 - 1) }
        }
        return candidates.first.map { $0 * 86_400 + timeOfDay }
    }
}
