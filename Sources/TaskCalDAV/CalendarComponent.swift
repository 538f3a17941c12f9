@_spi(Engine) import TaskInterchange

/// A calendar object read back into its components, for a `calendar-query` filter: each
/// component's properties as content lines, and the components inside it.
struct CalendarComponent {
    var name: String
    var properties: [ContentLine] = []
    var components: [CalendarComponent] = []

    /// The VCALENDAR of `text`; nil when it has none. Lines that do not parse are skipped.
    static func parse(_ text: String) -> CalendarComponent? {
        var open = [CalendarComponent(name: "")]
        for (_, line) in ICalendarText.unfolded(text) {
            guard let l = ContentLine(parsing: line) else { continue }
            switch l.name {
            case "BEGIN": open.append(CalendarComponent(name: l.value.uppercased()))
            case "END" where open.count > 1:
                let done = open.removeLast()
                open[open.count - 1].components.append(done)
            default: open[open.count - 1].properties.append(l)
            }
        }
        return open[0].components.first { $0.name == "VCALENDAR" }
    }

    /// The instant of the first property `name`, in seconds since 1970. Zoned and floating
    /// times are read as UTC; a DATE is its day's midnight UTC, or the next midnight when
    /// `dateEndsDay` (a task due on a day is due by its end).
    func instant(_ name: String, dateEndsDay: Bool = false) -> Int64? {
        properties.first { $0.name == name }.flatMap { Self.instant($0, dateEndsDay: dateEndsDay) }
    }

    static func instant(_ line: ContentLine, dateEndsDay: Bool = false) -> Int64? {
        let value = line.value.trimmingWhitespace
        if let days = ICalendarTime.date(value) { return (days + (dateEndsDay ? 1 : 0)) * 86_400 }
        return ICalendarTime.wall(value)?.seconds
    }

    /// The first DURATION, in seconds.
    var duration: Int64? { properties.first { $0.name == "DURATION" }.flatMap { Self.seconds(ofDuration: $0.value) } }

    /// Seconds of an RFC 5545 duration (`P1W`, `-PT15M`, `P1DT2H`); nil when it does not parse.
    static func seconds(ofDuration text: String) -> Int64? {
        var u = Substring(text.trimmingWhitespace.uppercased())
        let sign: Int64 = u.first == "-" ? -1 : 1
        if u.first == "-" || u.first == "+" { u = u.dropFirst() }
        guard u.first == "P", u.count <= 40 else { return nil }
        var total: Int64 = 0
        var number: Int64?
        var inTime = false
        for c in u.dropFirst() {
            if let d = c.wholeNumberValue, c.isASCII {
                number = (number ?? 0) * 10 + Int64(d)
                continue
            }
            if c == "T" && number == nil && !inTime {
                inTime = true
                continue
            }
            let unit: Int64? = switch (c, inTime) {
            case ("W", false): 604_800
            case ("D", false): 86_400
            case ("H", true): 3_600
            case ("M", true): 60
            case ("S", true): 1
            default: nil
            }
            guard let unit, let n = number else { return nil }
            total += n * unit
            number = nil
        }
        return number == nil ? sign * total : nil
    }
}
