@_spi(Engine) import TaskInterchange

/// How a ``CalendarFilter`` judges a calendar object (RFC 4791, 9.7 to 9.9), always on the
/// object as the server renders it: a property a task gains in its rendering is filtered on too.
extension CalendarFilter {
    func matches(_ member: CalDAVService.Member) -> Bool {
        guard !acceptsEveryTask, let root else { return true }
        guard let calendar = CalendarComponent.parse(member.data) else { return false }
        return Self.matches(root, among: [calendar])
    }

    static func matches(_ test: ComponentTest, among components: [CalendarComponent]) -> Bool {
        let named = components.lazy.filter { $0.name == test.name }
        if test.isNotDefined { return named.isEmpty }
        return named.contains { c in
            (test.range.map { overlaps(c, $0) } ?? true)
                && test.properties.allSatisfy { matches($0, among: c.properties) }
                && test.components.allSatisfy { matches($0, among: c.components) }
        }
    }

    static func matches(_ test: PropertyTest, among lines: [ContentLine]) -> Bool {
        let named = lines.lazy.filter { $0.name == test.name }
        if test.isNotDefined { return named.isEmpty }
        return named.contains { line in
            if let range = test.range {
                guard let t = CalendarComponent.instant(line), range.start.map({ $0 <= t }) ?? true, range.end.map({ t < $0 }) ?? true
                else { return false }
            }
            if let text = test.text, !text.matches(ICalendarText.text(line.value)) { return false }
            return test.parameters.allSatisfy { p in
                let values = line.parameters.filter { $0.name == p.name }
                if p.isNotDefined { return values.isEmpty }
                return values.contains { v in p.text.map { $0.matches(v.value) } ?? true }
            }
        }
    }

    /// Whether a component overlaps `range`: a VTODO by the table of RFC 4791 9.9, applied to
    /// each instance of its RRULE; any other by DTSTART and DTEND or DURATION (9.9's VEVENT rule).
    static func overlaps(_ c: CalendarComponent, _ range: TimeRange) -> Bool {
        let s = range.start ?? .min
        let e = range.end ?? .max
        guard c.name == "VTODO" else {
            guard let start = c.instant("DTSTART") else { return false }
            let end = c.instant("DTEND") ?? c.duration.map { start + $0 } ?? start
            return s < max(end, start + 1) && e > start
        }
        let rule = c.properties.first { $0.name == "RRULE" }.flatMap(TodoRecurrence.init)
        return TodoOverlap(c).overlaps(start: s, end: e, rule: rule)
    }
}
