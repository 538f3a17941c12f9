/// A parsed JSON value. Objects keep their keys in document order.
@_spi(Engine) public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The value for `key` in an object (nil if absent or not an object).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

/// Why JSON text could not be parsed.
@_spi(Engine) public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A strict RFC 8259 parser with a nesting limit, for untrusted input.
@_spi(Engine) public struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private var depth = 0
    public static let maxDepth = 64

    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var p = JSONParser(bytes: bytes)
        p.skipSpace()
        let v = try p.value()
        p.skipSpace()
        guard p.i == bytes.count else { throw p.fail("trailing characters after the value") }
        return v
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue { try parse(Array(text.utf8)) }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 32 || bytes[i] == 9 || bytes[i] == 10 || bytes[i] == 13 { i += 1 }
    }

    private mutating func expect(_ literal: StaticString) throws(JSONParseError) {
        let lit = literal.withUTF8Buffer { Array($0) }
        guard i + lit.count <= bytes.count, Array(bytes[i..<i + lit.count]) == lit else {
            throw fail("unexpected character")
        }
        i += lit.count
    }

    private mutating func value() throws(JSONParseError) -> JSONValue {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case 123: return try object()
        case 91: return try array()
        case 34: return .string(try string())
        case 116: try expect("true"); return .bool(true)
        case 102: try expect("false"); return .bool(false)
        case 110: try expect("null"); return .null
        case 45, 48...57: return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func nest() throws(JSONParseError) {
        depth += 1
        guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth)") }
    }

    private mutating func object() throws(JSONParseError) -> JSONValue {
        try nest()
        i += 1
        var members: [(key: String, value: JSONValue)] = []
        var keys = Set<String>()
        skipSpace()
        if i < bytes.count, bytes[i] == 125 {
            i += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == 34 else { throw fail("expected a string key") }
            let keyStart = i
            let key = try string()
            guard keys.insert(key).inserted else { throw JSONParseError(offset: keyStart, reason: "duplicate key \"\(key)\"") }
            skipSpace()
            guard i < bytes.count, bytes[i] == 58 else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            members.append((key, try value()))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == 44 { i += 1; continue }
            guard bytes[i] == 125 else { throw fail("expected ',' or '}'") }
            i += 1
            depth -= 1
            return .object(members)
        }
    }

    private mutating func array() throws(JSONParseError) -> JSONValue {
        try nest()
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == 93 {
            i += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value())
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == 44 { i += 1; continue }
            guard bytes[i] == 93 else { throw fail("expected ',' or ']'") }
            i += 1
            depth -= 1
            return .array(items)
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 48...57: d = UInt32(c - 48)
            case 65...70: d = UInt32(c - 55)
            case 97...102: d = UInt32(c - 87)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }

    private mutating func string() throws(JSONParseError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let c = bytes[i]
            if c == 34 { i += 1; break }
            if c < 32 { throw fail("control character in string") }
            if c != 92 { out.append(c); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case 34, 92, 47: out.append(e)
            case 98: out.append(8)
            case 102: out.append(12)
            case 110: out.append(10)
            case 114: out.append(13)
            case 116: out.append(9)
            case 117:
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 2 <= bytes.count, bytes[i] == 92, bytes[i + 1] == 117 else {
                        throw fail("unpaired surrogate")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("unpaired surrogate")
                }
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
            default: throw fail("invalid escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
        return s
    }

    private mutating func number() throws(JSONParseError) -> JSONValue {
        let start = i
        if bytes[i] == 45 { i += 1 }
        guard i < bytes.count, (48...57).contains(bytes[i]) else { throw fail("invalid number") }
        if bytes[i] == 48 { i += 1 } else { while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 } }
        if i < bytes.count, bytes[i] == 46 {
            i += 1
            guard i < bytes.count, (48...57).contains(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == 101 || bytes[i] == 69 {
            i += 1
            if i < bytes.count, bytes[i] == 43 || bytes[i] == 45 { i += 1 }
            guard i < bytes.count, (48...57).contains(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count, (48...57).contains(bytes[i]) { i += 1 }
        }
        guard let d = Double(String(decoding: bytes[start..<i], as: UTF8.self)) else { throw fail("invalid number") }
        return .number(d)
    }
}
