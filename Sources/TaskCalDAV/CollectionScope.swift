/// The collection a bridge syncs, and which hrefs a server may name as its objects: those
/// one path segment below it, on its own origin (Spec/interop.md, "CalDAV bridge").
struct CollectionScope: Equatable, Sendable {
    /// `scheme://host[:port]`, lowercased, without a default port.
    let origin: String
    /// The collection's path as its URL writes it, ending in `/`.
    let path: String
    /// The collection's path segments, percent-decoded, dot segments resolved.
    let segments: [String]

    /// Reads `http(s)://host[:port]/path/`; nil when the path does not decode.
    init?(url: String) {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        origin = Self.origin(scheme: String(url[..<scheme.lowerBound]), authority: rest[..<slash])
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        guard let segments = Self.segments(of: path), segments.last == "" else { return nil }
        self.segments = segments.dropLast()
    }

    /// The href of an object directly inside the collection, written as this bridge writes
    /// it (the collection's path, then the name percent-encoded); nil for anything else: the
    /// collection itself, deeper or outer paths, another origin or scheme, a query or fragment.
    func member(_ href: String) -> String? {
        guard let parts = resolve(href), parts.count == segments.count + 1,
            Array(parts.prefix(segments.count)) == segments, let name = parts.last, !name.isEmpty
        else { return nil }
        return path + DAVPath.encoded(name)
    }

    /// Whether an href names the collection itself (as a PROPFIND of it lists it).
    func isCollection(_ href: String) -> Bool { resolve(href) == segments + [""] }

    /// The decoded path segments an href names on this origin; nil when it is on another,
    /// has a query or fragment, or does not decode.
    private func resolve(_ href: String) -> [String]? {
        let h = href.trimmingWhitespace
        guard !h.isEmpty, !h.contains("?"), !h.contains("#"), !h.contains("\\"), !h.hasPrefix("//") else { return nil }
        guard let scheme = h.firstRange(of: "://") else { return Self.segments(of: h.hasPrefix("/") ? h : path + h) }
        let rest = h[scheme.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        guard Self.origin(scheme: String(h[..<scheme.lowerBound]), authority: rest[..<slash]) == origin else { return nil }
        return Self.segments(of: slash == rest.endIndex ? "/" : String(rest[slash...]))
    }

    /// An origin compared as RFC 3986 normalises it: scheme and host in lower case, the
    /// scheme's default port dropped.
    private static func origin(scheme: String, authority: Substring) -> String {
        let s = scheme.lowercased()
        var a = authority.lowercased()
        if (s == "http" && a.hasSuffix(":80")) || (s == "https" && a.hasSuffix(":443")) {
            a = String(a[..<a.lastIndex(of: ":")!])
        }
        return s + "://" + a
    }

    /// The segments of an absolute path, each percent-decoded, with `.` and `..` (written
    /// plainly or percent-encoded) resolved; nil when a segment does not decode or holds `/`.
    /// A path ending in `/` ends with an empty segment.
    private static func segments(of path: String) -> [String]? {
        guard path.hasPrefix("/") else { return nil }
        var out: [String] = []
        let raw = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (i, part) in raw.enumerated() {
            guard let segment = part.isEmpty ? "" : DAVPath.decoded(String(part)) else { return nil }
            let last = i == raw.count - 1
            switch segment {
            case ".": if last { out.append("") }
            case "..":
                _ = out.popLast()
                if last { out.append("") }
            case "" where !last: continue
            default: out.append(segment)
            }
        }
        return out
    }
}
