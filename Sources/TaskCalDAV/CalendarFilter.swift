import BoundedXML
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel

/// A `calendar-query` filter (RFC 4791, 9.7) over tasks: the VTODO comp-filter with an
/// optional time range (9.9) and prop-filters (is-not-defined, text-match).
struct CalendarFilter {
    /// False when the filter asks for components other than VTODO (nothing matches).
    var todos = true
    var start: Int64?
    var end: Int64?
    var properties: [PropertyTest] = []

    struct PropertyTest {
        var name: String
        var defined: Bool
        var text: String?
        var negate = false
    }

    init(_ filter: XMLTree?) throws(DAVRefusal) {
        guard let calendar = filter?.child(NS.caldav, "comp-filter") else { return }
        guard calendar.attributes["name"]?.uppercased() == "VCALENDAR" else {
            throw DAVRefusal(status: 403, message: "the filter must start with the VCALENDAR comp-filter", precondition: "<c:valid-filter/>")
        }
        guard let todo = calendar.child(NS.caldav, "comp-filter") else { return }
        todos = todo.attributes["name"]?.uppercased() == "VTODO" && todo.child(NS.caldav, "is-not-defined") == nil
        if let range = todo.child(NS.caldav, "time-range") {
            start = try range.attributes["start"].map(Self.instant)
            end = try range.attributes["end"].map(Self.instant)
        }
        for p in todo.all(NS.caldav, "prop-filter") {
            guard let name = p.attributes["name"]?.uppercased() else { continue }
            let match = p.child(NS.caldav, "text-match")
            properties.append(PropertyTest(
                name: name, defined: p.child(NS.caldav, "is-not-defined") == nil, text: match?.text,
                negate: match?.attributes["negate-condition"] == "yes"))
        }
    }

    static func instant(_ text: String) throws(DAVRefusal) -> Int64 {
        guard let wall = ICalendarTime.wall(text), wall.isUTC else {
            throw DAVRefusal(status: 403, message: "time-range bounds must be UTC date-times (YYYYMMDDTHHMMSSZ)", precondition: "<c:valid-filter/>")
        }
        return wall.seconds * 1000
    }

    func matches(_ member: CalDAVService.Member) -> Bool {
        guard todos else { return false }
        if (start != nil || end != nil) && !overlaps(member.task) { return false }
        guard !properties.isEmpty else { return true }
        let lines = ICalendarText.unfolded(member.data).compactMap { ContentLine(parsing: $0.line) }
        let todo = lines.drop { $0.raw != "BEGIN:VTODO" }.prefix { $0.raw != "END:VTODO" }
        return properties.allSatisfy { test in
            let found = todo.filter { $0.name == test.name }
            guard test.defined else { return found.isEmpty }
            guard let text = test.text else { return !found.isEmpty }
            let hit = found.contains { ICalendarText.text($0.value).lowercased().contains(text.lowercased()) }
            return hit != test.negate
        }
    }

    /// RFC 4791, 9.9, for a VTODO: by DUE if it has one, else by COMPLETED and CREATED.
    func overlaps(_ t: TaskItem) -> Bool {
        let s = start ?? .min
        let e = end ?? .max
        if let due = t.due?.sortKey { return s < due && e >= due }
        let created = Int64(t.createdAt.physical)
        if let completed = t.completedAt.map({ Int64($0.physical) }) {
            return (s <= created || s <= completed) && (e >= created || e >= completed)
        }
        return e > created
    }
}
