#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSodium
@_spi(Engine) import TaskSyncHTTP

/// Why a CalDAV bridge could not sync, in words that say what to do.
@_spi(Engine) public enum CalDAVBridgeError: Error, Equatable, Sendable, CustomStringConvertible {
    case badURL(String)
    case unreachable(String)
    case unauthorised(url: String)
    case notACollection(url: String, status: Int)
    case refused(url: String, method: String, status: Int, message: String)
    case unreadable(url: String, reason: String)
    case state(path: String, reason: String)

    public var description: String {
        switch self {
        case .badURL(let u): "'\(u)' is not a CalDAV collection URL: write caldav://[user[:password]@]host[:port]/path/ (caldavs:// for TLS)"
        case .unreachable(let why): why
        case .unauthorised(let u): "\(u) refused the user name or password (401); check them, or give the password with --password-file or TASKLOG_CALDAV_PASSWORD"
        case .notACollection(let u, let s): "\(u) is not a CalDAV task collection (PROPFIND answered \(s)); give the collection's URL, ending in /"
        case .refused(let u, let m, let s, let why): "\(u) refused \(m) with \(s)\(why.isEmpty ? "" : ": " + why)"
        case .unreadable(let u, let why): "\(u) sent what this bridge cannot read: \(why)"
        case .state(let p, let why): "the bridge's state \(p) is unreadable (\(why)); delete it to sync afresh"
        }
    }
}

/// A CalDAV collection on a server, reached with libcurl: list ETags, fetch, put, delete.
struct CalDAVRemote: Sendable {
    /// The collection's URL, `http(s)://host:port/path/`, without credentials.
    var url: String
    var authorization: String?
    var client: HTTPClient

    /// Reads `caldav://[user[:password]@]host[:port]/path/`; `password` overrides the URL's.
    init(url given: String, password: String?, trustedCertificates: String?) throws(CalDAVBridgeError) {
        let scheme: String
        if given.hasPrefix("caldav://") { scheme = "http://" } else if given.hasPrefix("caldavs://") { scheme = "https://" } else { throw .badURL(given) }
        var rest = Substring(given.drop { $0 != "/" }.dropFirst(2))
        guard let slash = rest.firstIndex(of: "/") else { throw .badURL(given) }
        var authority = rest[..<slash]
        var user: String?
        var urlPassword: String?
        if let at = authority.lastIndex(of: "@") {
            let credentials = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            user = DAVPath.decoded(String(parts[0]))
            urlPassword = parts.count > 1 ? DAVPath.decoded(String(parts[1])) : nil
        }
        guard !authority.isEmpty else { throw .badURL(given) }
        rest = rest[slash...]
        url = scheme + authority + (rest.hasSuffix("/") ? rest : rest + "/")
        client = HTTPClient(trustedCertificates: trustedCertificates)
        if let secret = password ?? urlPassword {
            authorization = "Basic " + Self.base64(Array(((user ?? "") + ":" + secret).utf8))
        }
    }

    static func base64(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, sodium_base64_VARIANT_ORIGINAL))
        _ = sodium_bin2base64(&out, out.count, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(cString: out)
    }

    /// Sends a request; 401 and transport failures become errors, other statuses are returned.
    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil) throws(CalDAVBridgeError) -> HTTPReply {
        var all = headers
        if let authorization { all["Authorization"] = authorization }
        let reply: HTTPReply
        do {
            reply = try client.send(method, target, headers: all, body: body, timeout: nil)
        } catch {
            throw .unreachable("\(url): \(error)")
        }
        if reply.status == 401 { throw .unauthorised(url: url) }
        return reply
    }

    /// The absolute URL of an href the server gave.
    func absolute(_ href: String) -> String {
        if href.contains("://") { return href }
        let origin = url.prefix { $0 != "/" } + "//" + url.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" }
        return origin + href
    }

    /// Every calendar object in the collection: its href (a path) and ETag.
    func etags() throws(CalDAVBridgeError) -> [String: String] {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><d:propfind xmlns:d=\"DAV:\"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>"
        let reply = try send("PROPFIND", url, headers: ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"], body: Array(body.utf8))
        guard reply.status == 207 else { throw .notACollection(url: url, status: reply.status) }
        var out: [String: String] = [:]
        for response in try responses(reply) {
            guard let href = response.child(NS.dav, "href")?.text, let etag = Self.property(response, NS.dav, "getetag") else { continue }
            out[DAVPath.path(ofHref: href)] = etag.text
        }
        return out
    }

    /// The calendar data and ETag of some objects, with one calendar-multiget.
    func fetch(_ hrefs: [String]) throws(CalDAVBridgeError) -> [String: (data: String, etag: String)] {
        guard !hrefs.isEmpty else { return [:] }
        let list = hrefs.map { "<d:href>\(XMLText.escaped($0))</d:href>" }.joined()
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><c:calendar-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><d:getetag/><c:calendar-data/></d:prop>\(list)</c:calendar-multiget>"
        let reply = try send("REPORT", url, headers: ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"], body: Array(body.utf8))
        guard reply.status == 207 else { throw .refused(url: url, method: "calendar-multiget", status: reply.status, message: "") }
        var out: [String: (data: String, etag: String)] = [:]
        for response in try responses(reply) {
            guard let href = response.child(NS.dav, "href")?.text, let data = Self.property(response, NS.caldav, "calendar-data"),
                let etag = Self.property(response, NS.dav, "getetag")
            else { continue }
            out[DAVPath.path(ofHref: href)] = (data.text, etag.text)
        }
        return out
    }

    private func responses(_ reply: HTTPReply) throws(CalDAVBridgeError) -> [XMLTree] {
        do {
            return try XMLTree.parse(reply.body).all(NS.dav, "response")
        } catch {
            throw .unreadable(url: url, reason: error.description)
        }
    }

    /// A property of a response's 200 propstat.
    static func property(_ response: XMLTree, _ ns: String, _ name: String) -> XMLTree? {
        for propstat in response.all(NS.dav, "propstat") where propstat.child(NS.dav, "status")?.text.contains(" 200 ") ?? false {
            if let p = propstat.child(NS.dav, "prop")?.child(ns, name) { return p }
        }
        return nil
    }
}
