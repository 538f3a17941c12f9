import BoundedXML

/// A `text-match` (RFC 4791, 9.7.5): a substring test under a collation (RFC 4790), with
/// the CardDAV `match-type` clients also send. Case-insensitive unless `i;octet` is asked.
struct TextMatch {
    enum Collation {
        /// Every letter folded (the default): "ÉCOLE" matches "école".
        case unicodeCasemap
        /// Only ASCII letters folded.
        case asciiCasemap
        /// Bytes as they are.
        case octet
    }

    enum MatchType: String {
        case contains, equals
        case startsWith = "starts-with"
        case endsWith = "ends-with"
    }

    var text: String
    var collation = Collation.unicodeCasemap
    var type = MatchType.contains
    var negate = false

    init(_ x: XMLTree) throws(DAVRefusal) {
        guard x.text.utf8.count <= DAVLimits.textMatchBytes else {
            throw DAVRefusal(status: 413, message: "a text-match holds at most \(DAVLimits.textMatchBytes) bytes, this one \(x.text.utf8.count)")
        }
        switch x.attributes["collation"] ?? "i;unicode-casemap" {
        case "i;unicode-casemap": collation = .unicodeCasemap
        case "i;ascii-casemap": collation = .asciiCasemap
        case "i;octet": collation = .octet
        case let other:
            throw DAVRefusal(
                status: 403, message: "collation \(other) is not supported: use i;unicode-casemap, i;ascii-casemap or i;octet",
                precondition: "<c:supported-collation/>")
        }
        guard let type = MatchType(rawValue: x.attributes["match-type"] ?? "contains") else {
            throw CalendarFilter.invalid("match-type must be contains, equals, starts-with or ends-with")
        }
        self.type = type
        negate = x.attributes["negate-condition"] == "yes"
        text = Self.folded(x.text, collation)
    }

    /// Whether `value` (unescaped) passes, negation applied.
    func matches(_ value: String) -> Bool {
        let v = Self.folded(value, collation)
        let hit: Bool
        if collation == .octet {
            hit = Self.bytesMatch(Array(v.utf8), Array(text.utf8), type)
        } else {
            switch type {
            case .contains: hit = text.isEmpty || v.contains(text)
            case .equals: hit = v == text
            case .startsWith: hit = v.hasPrefix(text)
            case .endsWith: hit = v.hasSuffix(text)
            }
        }
        return hit != negate
    }

    static func folded(_ s: String, _ collation: Collation) -> String {
        switch collation {
        case .unicodeCasemap: s.uppercased()
        case .asciiCasemap: String(decoding: s.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
        case .octet: s
        }
    }

    static func bytesMatch(_ v: [UInt8], _ t: [UInt8], _ type: MatchType) -> Bool {
        switch type {
        case .equals: return v == t
        case .startsWith: return v.starts(with: t)
        case .endsWith: return v.reversed().starts(with: t.reversed())
        case .contains:
            guard !t.isEmpty else { return true }
            guard v.count >= t.count else { return false }
            return (0...(v.count - t.count)).contains { i in v[i..<(i + t.count)].elementsEqual(t) }
        }
    }
}
