@_spi(Engine) import TaskSyncHTTP

/// A WebDAV folder named by `webdav://[USER@]HOST[:PORT]/PATH/` (plain HTTP) or
/// `webdavs://…` (HTTPS). A password is never part of it: it comes from a file, the
/// environment or `~/.netrc` (``WebDAVCredentials``).
package struct WebDAVLocation: Sendable, Equatable, CustomStringConvertible {
    /// `http(s)://host[:port]/path/`: the folder's URL, each path segment percent-encoded.
    package var baseURL: String
    /// The user name the URL gives, percent-decoded.
    package var user: String?
    /// The host without the port (for `~/.netrc`).
    package var host: String

    /// Why a WebDAV URL cannot be used, in words that say how to write it.
    package struct Invalid: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The folder as the user wrote it, without a password: for messages.
    package var description: String {
        let scheme = baseURL.hasPrefix("https://") ? "webdavs://" : "webdav://"
        let rest = baseURL.drop { $0 != "/" }.dropFirst(2)
        return scheme + (user.map { WebDAVPath.encoded($0) + "@" } ?? "") + rest
    }

    /// Reads `webdav://[USER@]HOST[:PORT]/PATH/` or `webdavs://…`; a missing final `/` is added.
    package static func parse(_ text: String) throws(Invalid) -> WebDAVLocation {
        let form = "write webdav://[USER@]HOST[:PORT]/PATH/ (webdavs:// for HTTPS)"
        let scheme: String
        if text.hasPrefix("webdav://") { scheme = "http://" } else if text.hasPrefix("webdavs://") { scheme = "https://" } else {
            throw Invalid(description: "'\(text)' is not a WebDAV folder URL: \(form)")
        }
        let rest = text.drop { $0 != "/" }.dropFirst(2)
        let controls = text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard !controls, !rest.contains("?"), !rest.contains("#") else {
            let shown = text.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
            throw Invalid(description: "'\(shown)' holds a control character, '?' or '#': \(form)")
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        var user: String?
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            guard !credentials.contains(":") else {
                throw Invalid(description: "'\(text)' holds a password; a URL is visible to other users, so give the password another way")
            }
            guard let name = try? RequestTarget.decode(credentials.utf8, plusIsSpace: false), !name.isEmpty else {
                throw Invalid(description: "'\(text)' has a user name that does not decode: \(form)")
            }
            user = name
            authority = authority[authority.index(after: at)...]
        }
        guard let host = Self.host(of: authority) else { throw Invalid(description: "'\(text)' has no valid host and port: \(form)") }
        guard let segments = WebDAVPath.segments(of: slash == rest.endIndex ? "/" : String(rest[slash...])) else {
            throw Invalid(description: "'\(text)' has a path that does not decode (a '%' not followed by two hex digits, or '..'): \(form)")
        }
        let path = "/" + segments.map { WebDAVPath.encoded($0) + "/" }.joined()
        return WebDAVLocation(baseURL: scheme + authority.lowercased() + path, user: user, host: host)
    }

    /// The host of `host[:port]` or `[v6]:port`, lowercased; nil when either part is malformed.
    private static func host(of authority: Substring) -> String? {
        var host = authority
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        let hostCharacters = host.allSatisfy { $0.isLetter || $0.isNumber || "-._~[]:%".contains($0) }
        guard !host.isEmpty, hostCharacters else { return nil }
        if let port { guard let n = Int(port), (1...65535).contains(n), port.allSatisfy(\.isASCII) else { return nil } }
        return host.lowercased()
    }

    /// The URL of `key` (`name` or `namespace/name`) in the folder, percent-encoded.
    package func url(of key: String) -> String {
        baseURL + key.split(separator: "/", omittingEmptySubsequences: false).map { WebDAVPath.encoded(String($0)) }.joined(separator: "/")
    }

    /// The URL of a namespace collection `name`, ending in `/`.
    package func collectionURL(_ name: String) -> String { baseURL + WebDAVPath.encoded(name) + "/" }
}

/// Percent-encoding and decoding of path segments.
package enum WebDAVPath {
    /// Percent-encodes all but letters, digits, `-`, `.`, `_` and `~`.
    package static func encoded(_ s: String) -> String {
        var out = ""
        let hex = Array("0123456789ABCDEF".utf8)
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return out
    }

    /// The decoded segments of an absolute path, without empty ones; nil when one does not
    /// decode, holds `/` or NUL, or is `.` or `..`. Other control characters are kept: the
    /// folder protocol notes such a name, escaped.
    package static func segments(of path: String) -> [String]? {
        guard path.hasPrefix("/") else { return nil }
        var out: [String] = []
        for part in path.split(separator: "/") {
            guard let segment = PercentDecoding.text(part, plusIsSpace: false), !segment.contains("/"), !segment.contains("\u{0}"),
                segment != ".", segment != ".."
            else { return nil }
            out.append(segment)
        }
        return out
    }
}
