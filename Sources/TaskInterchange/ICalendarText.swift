/// One content line of an iCalendar object (RFC 5545, 3.1): a name, parameters and a value.
///
/// `raw` is the unfolded line as read, so that a property this project does not model is
/// written back byte for byte.
package struct ContentLine: Equatable, Sendable {
    /// The property name, uppercased.
    package var name: String
    /// Parameter names (uppercased) and values (quotes removed), in order.
    package var parameters: [Parameter]
    /// The value as written (still escaped, for TEXT values).
    package var value: String
    package var raw: String

    package struct Parameter: Equatable, Sendable {
        package var name: String
        package var value: String
    }

    /// The first value of the parameter `name` (uppercase).
    package func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }

    /// A line with no parameters and a value that is already escaped.
    package init(_ name: String, _ value: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
        self.value = value
        var head = name
        for p in parameters {
            let quoted = p.value.contains(where: { ";:,".contains($0) })
            head += ";\(p.name)=" + (quoted ? "\"\(p.value)\"" : p.value)
        }
        raw = head + ":" + value
    }

    /// Parses an unfolded line `NAME;PARAM=VALUE:value`; nil when it has no colon or no name.
    package init?(parsing line: Substring) {
        var i = line.startIndex
        while i < line.endIndex, line[i] != ";" && line[i] != ":" { i = line.index(after: i) }
        guard i > line.startIndex, i < line.endIndex else { return nil }
        name = line[..<i].uppercased()
        parameters = []
        while line[i] == ";" {
            i = line.index(after: i)
            guard let eq = line[i...].firstIndex(of: "=") else { return nil }
            let pname = line[i..<eq].uppercased()
            i = line.index(after: eq)
            var pvalue = ""
            while i < line.endIndex, line[i] != ";" && line[i] != ":" {
                if line[i] == "\"" {
                    guard let close = line[line.index(after: i)...].firstIndex(of: "\"") else { return nil }
                    pvalue += line[line.index(after: i)..<close]
                    i = line.index(after: close)
                } else {
                    pvalue.append(line[i])
                    i = line.index(after: i)
                }
            }
            guard i < line.endIndex else { return nil }
            parameters.append(Parameter(name: pname, value: pvalue))
        }
        value = String(line[line.index(after: i)...])
        raw = String(line)
    }
}

/// Folding, unfolding and TEXT escaping (RFC 5545, 3.1 and 3.3.11).
package enum ICalendarText {
    /// The logical lines of `text`, each with the number of its first physical line. Lines
    /// end in CRLF or LF; a line that starts with a space or tab continues the one before.
    package static func unfolded(_ text: String) -> [(number: Int, line: Substring)] {
        var out: [(Int, Substring)] = []
        var pending = ""
        var start = 0
        // "\r\n" is one Character, so lines are split on any newline Character.
        for (i, physical) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            // An empty line is no line: a fold after it continues the line before it.
            if physical.isEmpty { continue }
            // By scalar: a space before a combining mark is one Character, and still a fold.
            if let first = physical.unicodeScalars.first, first == " " || first == "\t" {
                pending += String(physical.unicodeScalars.dropFirst())
                continue
            }
            if !pending.isEmpty { out.append((start, Substring(pending))) }
            pending = String(physical)
            start = i + 1
        }
        if !pending.isEmpty { out.append((start, Substring(pending))) }
        return out
    }

    /// `line` folded into physical lines of at most 75 octets, each ending in CRLF; a
    /// UTF-8 sequence is never split.
    package static func folded(_ line: String) -> String {
        let bytes = Array(line.utf8)
        guard bytes.count > 75 else { return line + "\r\n" }
        var out: [UInt8] = []
        var start = 0
        var room = 75
        while start < bytes.count {
            var end = min(start + room, bytes.count)
            while end < bytes.count, end > start, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            if start > 0 { out.append(0x20) }
            out += bytes[start..<end]
            out += [0x0D, 0x0A]
            start = end
            room = 74
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A TEXT value escaped: backslash, semicolon, comma and newline.
    package static func escaped(_ s: String) -> String { textEscaper(s) }

    private static let textEscaper = ASCIIEscaper(["\\": "\\\\", ";": "\\;", ",": "\\,", "\n": "\\n", "\r": ""])

    /// The values of a TEXT list (`a,b\,c`), unescaped; a single TEXT value is a list of one.
    package static func textList(_ s: String) -> [String] {
        var out: [String] = []
        var current = ""
        var escaping = false
        for c in s.unicodeScalars {
            if escaping {
                current.unicodeScalars.append(c == "n" || c == "N" ? "\n" : c)
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else if c == "," {
                out.append(current)
                current = ""
            } else {
                current.unicodeScalars.append(c)
            }
        }
        out.append(current)
        return out
    }

    /// A TEXT value unescaped (commas are part of it).
    package static func text(_ s: String) -> String { textList(s.replacingUnescapedCommas()).joined() }
}

extension String {
    /// The string with each comma not preceded by a backslash escaped, so that ``ICalendarText/textList(_:)``
    /// reads it as one value (some writers leave commas in SUMMARY unescaped).
    fileprivate func replacingUnescapedCommas() -> String {
        var out = ""
        var escaping = false
        for c in unicodeScalars {
            if c == "," && !escaping { out += "\\," } else { out.unicodeScalars.append(c) }
            escaping = c == "\\" && !escaping
        }
        return out
    }
}
