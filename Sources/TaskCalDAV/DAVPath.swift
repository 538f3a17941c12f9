@_spi(Engine) import TaskSyncHTTP

/// The resources of the CalDAV server and their URLs (Spec/interop.md, "CalDAV server").
///
/// The principal is `/dav/principal/` and the calendar home `/dav/home/`. Each list is the
/// collection `/dav/home/<list>/` (percent-encoded, `_` included), and tasks with no list
/// are in `/dav/home/_/`. A task is `<collection><id>.ics` unless a client named it otherwise.
enum DAVPath: Equatable {
    case root
    case principal
    case home
    case collection(list: String?)
    case object(list: String?, name: String)

    static let principalHref = "/dav/principal/"
    static let homeHref = "/dav/home/"

    /// Reads a raw (still percent-encoded) request path; nil when it names nothing here. A
    /// literal `.` or `..` segment names nothing: hrefs here spell them `%2E`, `%2E%2E`.
    init?(rawPath: String) {
        var parts = rawPath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.first == "", !parts.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        parts.removeFirst()
        if parts.last == "" { parts.removeLast() }
        switch parts.count {
        case 0: self = .root
        case 1 where parts[0] == "dav": self = .root
        case 2 where parts[0] == "dav" && parts[1] == "principal": self = .principal
        case 2 where parts[0] == "dav" && parts[1] == "home": self = .home
        case 3 where parts[0] == "dav" && parts[1] == "home":
            guard let list = Self.list(segment: parts[2]) else { return nil }
            self = .collection(list: list)
        case 4 where parts[0] == "dav" && parts[1] == "home" && !rawPath.hasSuffix("/"):
            guard let list = Self.list(segment: parts[2]), let name = Self.decoded(parts[3]), !name.isEmpty else { return nil }
            self = .object(list: list, name: name)
        default: return nil
        }
    }

    /// A collection segment's list: `_` is no list; nil when the segment does not decode.
    private static func list(segment: String) -> String?? {
        if segment == "_" { return .some(nil) }
        guard let name = decoded(segment), !name.isEmpty else { return nil }
        return .some(name)
    }

    var href: String {
        switch self {
        case .root: "/dav/"
        case .principal: Self.principalHref
        case .home: Self.homeHref
        case .collection(let list): Self.collectionHref(list)
        case .object(let list, let name): Self.collectionHref(list) + Self.encoded(name)
        }
    }

    static func collectionHref(_ list: String?) -> String { homeHref + (list.map(encoded) ?? "_") + "/" }

    /// Percent-encodes all but letters, digits, `-`, `.` and `~` (so `_` alone means no list).
    /// The segments `.` and `..` become `%2E` and `%2E%2E`, which clients do not resolve away.
    static func encoded(_ s: String) -> String {
        if s == "." || s == ".." { return String(repeating: "%2E", count: s.count) }
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return out
    }

    /// A segment percent-decoded as request targets are; nil when that refuses it or it holds `/`.
    static func decoded(_ s: String) -> String? {
        guard let text = try? RequestTarget.decode(s.utf8, plusIsSpace: false), !text.contains("/") else { return nil }
        return text
    }

    /// The path of an href a client sent (an absolute URL or a path).
    static func path(ofHref href: String) -> String { split(href).path }

    /// The authority (`host:port`) of an absolute URL, nil for a path; and the path.
    static func split(_ href: String) -> (authority: String?, path: String) {
        let h = href.trimmingWhitespace
        guard let scheme = h.firstRange(of: "://") else { return (nil, h) }
        let rest = h[scheme.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        return (String(rest[..<slash]), slash == rest.endIndex ? "/" : String(rest[slash...]))
    }
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars.drop { $0.properties.isWhitespace }
        var s = String(String.UnicodeScalarView(scalars))
        while let last = s.unicodeScalars.last, last.properties.isWhitespace { s.unicodeScalars.removeLast() }
        return s
    }
}
