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
    case tooLarge(url: String, limit: Int)
    case state(path: String, reason: String)

    public var description: String {
        switch self {
        case .badURL(let u): "'\(u)' is not a CalDAV collection URL: write caldav://[user[:password]@]host[:port]/path/ (caldavs:// for TLS)"
        case .unreachable(let why): why
        case .unauthorised(let u): "\(u) refused the user name or password (401); check them"
        case .notACollection(let u, let s): "\(u) is not a CalDAV task collection (PROPFIND answered \(s)); give the collection's URL, ending in /"
        case .refused(let u, let m, let s, let why): "\(u) refused \(m) with \(s)\(why.isEmpty ? "" : ": " + why)"
        case .unreadable(let u, let why): "\(u) sent what this bridge cannot read: \(why)"
        case .tooLarge(let u, let limit):
            "\(u) sent more than \(HTTPClientError.size(limit)) in one answer, more than this bridge accepts; check that the URL is a CalDAV task collection"
        case .state(let p, let why): "the bridge's state \(p) is unreadable (\(why)); delete it to sync afresh"
        }
    }
}

/// A CalDAV collection on a server, reached with libcurl: list ETags, fetch, put, delete.
/// Every answer is bounded (Spec/interop.md, "CalDAV bridge"), and multistatus answers are
/// read as they arrive.
struct CalDAVRemote: Sendable {
    /// The collection's URL, `http(s)://host:port/path/`, without credentials.
    var url: String
    var scope: CollectionScope
    var authorization: String?
    var client: HTTPClient

    /// The largest PROPFIND answer taken (about 130,000 objects).
    static let listingLimit = 32 << 20
    /// The most objects one calendar-multiget asks for, and the largest answer taken.
    static let fetchBatch = 32
    static let fetchLimit = 64 << 20
    /// The largest answer to any other request (PUT, DELETE): its body only explains a status.
    static let replyLimit = 1 << 20

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
        guard let scope = CollectionScope(url: url) else { throw .badURL(given) }
        self.scope = scope
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

    /// Sends a request; 401, transport failures and answers past `limit` become errors, other
    /// statuses are returned. A 2xx body goes to `consume` when given.
    func send(
        _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        limit: Int = replyLimit, consume: HTTPClient.Consumer? = nil
    ) throws(CalDAVBridgeError) -> HTTPReply {
        var all = headers
        if let authorization { all["Authorization"] = authorization }
        let reply: HTTPReply
        do {
            reply = try client.send(method, target, headers: all, body: body, timeout: nil, limit: limit, consume: consume)
        } catch .tooLarge(_, let limit) {
            throw .tooLarge(url: target, limit: limit)
        } catch .stalled(_, let bytes, let seconds) {
            throw .unreachable("\(target) sent fewer than \(bytes) bytes in \(seconds) s and was cut off; check the network and the server")
        } catch {
            throw .unreachable("\(url): \(error)")
        }
        if reply.status == 401 { throw .unauthorised(url: url) }
        return reply
    }

    /// The absolute URL of an object's href (a path, as ``CollectionScope/member(_:)`` gives).
    func absolute(_ href: String) -> String { scope.origin + href }

    /// Sends a request whose 207 answer is read as it arrives; `take` gets each response.
    /// - Returns: the answer's status.
    func multistatus(
        _ method: String, body: String, limit: Int, take: @escaping (MultistatusReader.Response) -> Void
    ) throws(CalDAVBridgeError) -> Int {
        let reader = MultistatusReader(take: take)
        let headers = ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"]
        let reply = try send(method, url, headers: headers, body: Array(body.utf8), limit: limit, consume: reader.feed)
        guard reply.status == 207 else { return reply.status }
        do {
            try reader.finish()
        } catch {
            throw .unreadable(url: url, reason: error.description)
        }
        return reply.status
    }

    /// Every calendar object directly in the collection (href and ETag), and the hrefs the
    /// server listed outside it (ignored).
    func etags() throws(CalDAVBridgeError) -> (etags: [String: String], outside: [String]) {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><d:propfind xmlns:d=\"DAV:\"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>"
        var out: [String: String] = [:]
        var outside: [String] = []
        let status = try multistatus("PROPFIND", body: body, limit: Self.listingLimit) { response in
            guard let etag = response.etag else { return }
            if let href = scope.member(response.href) {
                out[href] = etag
            } else if !scope.isCollection(response.href), outside.count < 100 {
                outside.append(response.href)
            }
        }
        guard status == 207 else { throw .notACollection(url: url, status: status) }
        return (out, outside)
    }

    /// The calendar data and ETag of some objects (hrefs as ``etags()`` gives them), with one
    /// calendar-multiget per ``fetchBatch`` objects. What the server adds is ignored.
    func fetch(_ hrefs: [String]) throws(CalDAVBridgeError) -> [String: (data: String, etag: String)] {
        var out: [String: (data: String, etag: String)] = [:]
        for start in stride(from: 0, to: hrefs.count, by: Self.fetchBatch) {
            let batch = hrefs[start..<min(start + Self.fetchBatch, hrefs.count)]
            let wanted = Set(batch)
            let list = batch.map { "<d:href>\(XMLText.escaped($0))</d:href>" }.joined()
            let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><c:calendar-multiget xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\"><d:prop><d:getetag/><c:calendar-data/></d:prop>\(list)</c:calendar-multiget>"
            let status = try multistatus("REPORT", body: body, limit: Self.fetchLimit) { response in
                guard let href = scope.member(response.href), wanted.contains(href), let data = response.calendarData,
                    let etag = response.etag
                else { return }
                out[href] = (data, etag)
            }
            guard status == 207 else { throw .refused(url: url, method: "calendar-multiget", status: status, message: "") }
        }
        return out
    }
}
