import BoundedXML
@_spi(Engine) import TaskInterchange

/// A `calendar-query` filter (RFC 4791, 9.7), read from its XML within ``DAVLimits``: nested
/// comp-filters, prop-filters, param-filters, text-matches and time ranges.
struct CalendarFilter {
    /// The filter's VCALENDAR comp-filter; nil when the query has no filter (all match).
    var root: ComponentTest?

    /// A comp-filter: a component of `name` that is absent, or present and passing the rest.
    struct ComponentTest {
        var name: String
        var isNotDefined = false
        var range: TimeRange?
        var properties: [PropertyTest] = []
        var components: [ComponentTest] = []
    }

    /// A prop-filter; `range` applies to the property's own DATE or DATE-TIME value.
    struct PropertyTest {
        var name: String
        var isNotDefined = false
        var range: TimeRange?
        var text: TextMatch?
        var parameters: [ParameterTest] = []
    }

    /// A param-filter.
    struct ParameterTest {
        var name: String
        var isNotDefined = false
        var text: TextMatch?
    }

    /// A time range in seconds since 1970 (UTC); nil bounds are open.
    struct TimeRange {
        var start: Int64?
        var end: Int64?
    }

    init(_ filter: XMLTree?) throws(DAVRefusal) {
        guard let filter else { return }
        let calendars = filter.all(NS.caldav, "comp-filter")
        guard calendars.count == 1, calendars[0].attributes["name"]?.uppercased() == "VCALENDAR" else {
            throw Self.invalid("the filter must hold exactly one comp-filter, for VCALENDAR")
        }
        var reader = Reader()
        root = try reader.component(calendars[0], depth: 1)
    }

    /// Whether the filter asks only which components exist: true for every task.
    var acceptsEveryTask: Bool {
        guard let root else { return true }
        guard root.range == nil, root.properties.isEmpty, !root.isNotDefined else { return false }
        return root.components.allSatisfy { $0.name == "VTODO" && !$0.isNotDefined && $0.range == nil && $0.properties.isEmpty && $0.components.isEmpty }
    }

    static func invalid(_ message: String) -> DAVRefusal {
        DAVRefusal(status: 403, message: message, precondition: "<c:valid-filter/>")
    }
}

/// Reads the filter's elements, counting them against ``DAVLimits/filterTests``.
private struct Reader {
    var tests = 0

    mutating func counted() throws(DAVRefusal) {
        tests += 1
        guard tests <= DAVLimits.filterTests else {
            throw DAVRefusal(status: 413, message: "a filter holds at most \(DAVLimits.filterTests) tests; split the query")
        }
    }

    mutating func component(_ x: XMLTree, depth: Int) throws(DAVRefusal) -> CalendarFilter.ComponentTest {
        try counted()
        guard depth <= DAVLimits.filterDepth else {
            throw DAVRefusal(status: 413, message: "comp-filters nest at most \(DAVLimits.filterDepth) deep")
        }
        var test = CalendarFilter.ComponentTest(name: try Self.name(x))
        test.isNotDefined = x.child(NS.caldav, "is-not-defined") != nil
        test.range = try x.child(NS.caldav, "time-range").map(Self.range)
        for p in x.all(NS.caldav, "prop-filter") { test.properties.append(try property(p)) }
        for c in x.all(NS.caldav, "comp-filter") { test.components.append(try component(c, depth: depth + 1)) }
        return test
    }

    mutating func property(_ x: XMLTree) throws(DAVRefusal) -> CalendarFilter.PropertyTest {
        try counted()
        var test = CalendarFilter.PropertyTest(name: try Self.name(x))
        test.isNotDefined = x.child(NS.caldav, "is-not-defined") != nil
        test.range = try x.child(NS.caldav, "time-range").map(Self.range)
        test.text = try x.child(NS.caldav, "text-match").map(TextMatch.init)
        for p in x.all(NS.caldav, "param-filter") {
            try counted()
            test.parameters.append(CalendarFilter.ParameterTest(
                name: try Self.name(p), isNotDefined: p.child(NS.caldav, "is-not-defined") != nil,
                text: try p.child(NS.caldav, "text-match").map(TextMatch.init)))
        }
        return test
    }

    static func name(_ x: XMLTree) throws(DAVRefusal) -> String {
        guard let name = x.attributes["name"], !name.isEmpty else { throw CalendarFilter.invalid("a \(x.name) needs a name attribute") }
        return name.uppercased()
    }

    static func range(_ x: XMLTree) throws(DAVRefusal) -> CalendarFilter.TimeRange {
        let range = CalendarFilter.TimeRange(start: try x.attributes["start"].map(instant), end: try x.attributes["end"].map(instant))
        guard range.start != nil || range.end != nil else { throw CalendarFilter.invalid("a time-range needs a start or an end") }
        return range
    }

    static func instant(_ text: String) throws(DAVRefusal) -> Int64 {
        guard let wall = ICalendarTime.wall(text), wall.isUTC else {
            throw CalendarFilter.invalid("time-range bounds must be UTC date-times (YYYYMMDDTHHMMSSZ)")
        }
        return wall.seconds
    }
}
