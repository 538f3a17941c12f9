/// An iCalendar component (VCALENDAR, VTODO, VALARM, VTIMEZONE…): its properties and the
/// components inside it, in the order read.
package struct ICalendarComponent: Equatable, Sendable {
    package var name: String
    package var properties: [ContentLine]
    package var components: [ICalendarComponent]

    package init(_ name: String, properties: [ContentLine] = [], components: [ICalendarComponent] = []) {
        self.name = name
        self.properties = properties
        self.components = components
    }

    /// The first property called `name` (uppercase).
    package func property(_ name: String) -> ContentLine? { properties.first { $0.name == name } }

    /// The top-level components of `text` (normally one VCALENDAR).
    package static func parse(_ text: String) throws(InterchangeError) -> [ICalendarComponent] {
        var stack: [ICalendarComponent] = []
        var top: [ICalendarComponent] = []
        for (number, line) in ICalendarText.unfolded(text) {
            guard let content = ContentLine(parsing: line) else {
                if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
                throw InterchangeError.line(number, "'\(line.prefix(40))' is not an iCalendar content line (NAME:value)")
            }
            switch content.name {
            case "BEGIN":
                stack.append(ICalendarComponent(content.value.uppercased()))
            case "END":
                guard let last = stack.popLast(), last.name == content.value.uppercased() else {
                    throw InterchangeError.line(number, "END:\(content.value) does not close the component open here")
                }
                if stack.isEmpty { top.append(last) } else { stack[stack.count - 1].components.append(last) }
            default:
                guard !stack.isEmpty else { throw InterchangeError.line(number, "\(content.name) is outside BEGIN and END") }
                stack[stack.count - 1].properties.append(content)
            }
        }
        if let open = stack.last { throw InterchangeError.line(0, "BEGIN:\(open.name) is never closed; the file is cut short") }
        return top
    }

    /// The component as unfolded content lines, BEGIN and END included.
    package var lines: [String] {
        var out = ["BEGIN:\(name)"]
        out += properties.map(\.raw)
        for c in components { out += c.lines }
        out.append("END:\(name)")
        return out
    }
}
