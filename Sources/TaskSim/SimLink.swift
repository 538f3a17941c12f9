import Synchronization
@_spi(Engine) import TaskSyncHTTP

/// An HTTP connection from one replica (an `HTTPSync` client) to another replica's
/// `HTTPService`, in process and without sockets, with the network's faults: a request lost
/// before or after the peer handled it, a body cut short, a request delivered twice.
final class SimLink: HTTPTransport {
    private struct State {
        var rng: SimRandom
        var stats = SimStats()
    }

    let service: HTTPService
    let faults: FaultSet
    private let state: Mutex<State>

    init(service: HTTPService, faults: FaultSet, rng: SimRandom) {
        self.service = service
        self.faults = faults
        state = Mutex(State(rng: rng))
    }

    /// What the link did so far.
    var stats: SimStats { state.withLock { $0.stats } }

    func send(
        _ method: String, _ url: String, headers: [String: String], body: [UInt8]?, timeout: Double?, limit: Int
    ) throws(HTTPClientError) -> HTTPReply {
        var request = Self.request(method, url, headers: headers, body: body ?? [])
        try state.withLock { (s) throws(HTTPClientError) in
            if faults.contains(.linkDrops) && s.rng.chance(0.08) {
                s.stats.note("link: request lost")
                throw s.rng.chance(0.5) ? .refused(url: url) : .timedOut(url: url, seconds: timeout ?? 30)
            }
            if faults.contains(.linkCuts) && !request.body.isEmpty && s.rng.chance(0.05) {
                request.body = Array(request.body.prefix(s.rng.int(0..<request.body.count)))
                s.stats.note("link: request body cut")
            }
        }
        var response = service.handle(request)
        try state.withLock { (s) throws(HTTPClientError) in
            if faults.contains(.linkResends) && s.rng.chance(0.1) {
                s.stats.note("link: request resent")
                response = service.handle(request)
            }
            if faults.contains(.linkDrops) && s.rng.chance(0.08) {
                s.stats.note("link: answer lost")
                throw .timedOut(url: url, seconds: timeout ?? 30)
            }
            if faults.contains(.linkCuts) && !response.body.isEmpty && s.rng.chance(0.08) {
                response.body = Array(response.body.prefix(s.rng.int(0..<response.body.count)))
                s.stats.note("link: answer body cut")
            }
        }
        if response.body.count > limit { throw .tooLarge(url: url, limit: limit) }
        var replyHeaders: [String: String] = [:]
        for (name, value) in response.headers { replyHeaders[name.lowercased()] = value }
        return HTTPReply(status: response.status, headers: replyHeaders, body: response.body)
    }

    /// The request an HTTP server would hand the service for this URL: path and query split,
    /// header names lowercased.
    static func request(_ method: String, _ url: String, headers: [String: String], body: [UInt8]) -> HTTPRequest {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        let target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        var query: [String: String] = [:]
        if pathEnd < target.endIndex {
            for pair in target[target.index(after: pathEnd)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(kv[0])] = kv.count > 1 ? String(kv[1]) : ""
            }
        }
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        return HTTPRequest(method: method, path: String(target[..<pathEnd]), query: query, headers: lowered, body: body)
    }
}
