#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import Synchronization

/// One HTTP request, fully received.
@_spi(Engine) public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, percent-decoded.
    public var path: String
    /// The path as sent, still percent-encoded (for paths whose segments may hold `/`).
    public var rawPath: String
    public var query: [String: String]
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(
        method: String, path: String, rawPath: String? = nil, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.rawPath = rawPath ?? path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response.
@_spi(Engine) public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension HTTPResponse {
    /// 401 with a Bearer challenge; CalDAV paths (`/`, `/dav/…`, `/.well-known/…`) also offer
    /// Basic with the token as the password, which is what CalDAV clients answer. The REST and
    /// replication paths do not, so that browsers and HTTP libraries never prompt for it.
    public static func unauthorised(path: String) -> HTTPResponse {
        let calendar = path == "/" || path.hasPrefix("/dav") || path.hasPrefix("/.well-known/")
        var r = HTTPResponse.error(401, calendar ? "missing or wrong token: send it as the password of HTTP Basic" : "missing or wrong bearer token")
        r.headers.append(("WWW-Authenticate", "Bearer"))
        if calendar { r.headers.append(("WWW-Authenticate", "Basic realm=\"TaskLog\", charset=\"UTF-8\"")) }
        return r
    }

    /// A JSON error body: `{"error": "…"}`.
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var w = JSONWriterBridge()
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: w.error(message))
    }
}

/// Why the HTTP server could not start.
@_spi(Engine) public enum HTTPServerError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidAddress(String)
    case couldNotStart(address: String, port: UInt16)
    case tlsUnsupported

    public var description: String {
        switch self {
        case .invalidAddress(let a): "'\(a)' is not an IPv4 or IPv6 address to bind"
        case .couldNotStart(let a, let p):
            "could not listen on \(a):\(p) (is the port in use, the address not on this machine, or the TLS certificate or key unusable?); choose another port or address, or check the PEM files"
        case .tlsUnsupported: "this build of libmicrohttpd has no TLS support; serve plain HTTP on loopback or behind a TLS proxy"
        }
    }
}

/// An HTTP server on libmicrohttpd: one thread per connection, limits on connections, idle
/// time, the time a request head may take, header memory and body size. Requests are handed
/// whole to `handler`, which may block (long polls do).
@_spi(Engine) public final class HTTPServer: Sendable {
    public struct Limits: Sendable {
        /// Connections open at once (fewer if the process may not open that many files).
        public var maxConnections: UInt32 = 1024
        /// Seconds a connection may stay idle (slow or stalled clients are cut off).
        public var idleTimeoutSeconds: UInt32 = 30
        /// Seconds a request head (line and headers) may take, from the connection opening
        /// or the previous response, however slowly it trickles in.
        public var headTimeoutSeconds: Double = 5
        /// Bytes for the request line and headers of one connection.
        public var headerMemory = 32 << 10
        /// The largest body accepted for a request, by method and path; larger ones get 413.
        public var maxBody: @Sendable (_ method: String, _ path: String) -> Int = { _, _ in 1 << 20 }
        /// Checks a request's method, path and `Authorization` header before any body is read
        /// (nil: everyone may send).
        public var authorise: (@Sendable (_ method: String, _ path: String, _ header: String?) -> Bool)?
        /// The most header fields a request may carry; past it the request is refused.
        public var maxHeaderFields = 100

        public init() {}
    }

    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let limits: Limits
    /// The daemon and the callbacks' context, as addresses (C pointers are not Sendable).
    private let daemonAddress: UInt
    private let contextAddress: UInt
    private let stopped = Atomic<Bool>(false)
    /// The port the server listens on (useful when started on port 0).
    public let port: UInt16

    /// Starts listening on `address`:`port` (port 0 picks a free one).
    public init(
        address: String, port: UInt16, limits: Limits = Limits(), tls: (certificate: String, key: String)? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        self.handler = handler
        self.limits = limits
        if tls != nil && tl_mhd_has_tls() == 0 { throw .tlsUnsupported }
        var flags = MHD_USE_THREAD_PER_CONNECTION.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
            | MHD_USE_POLL.rawValue
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let isV6: Bool
        if inet_pton(AF_INET, address, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            isV6 = false
        } else if inet_pton(AF_INET6, address, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            flags |= MHD_USE_IPv6.rawValue
            isV6 = true
        } else {
            throw .invalidAddress(address)
        }
        var started: OpaquePointer?
        let connections = Self.connectionsAllowed(limits.maxConnections)
        let guardian = ConnectionGuard(headTimeout: limits.headTimeoutSeconds, highWater: Int(connections) - Int(min(Self.roomForNewcomers, connections / 2)))
        // The callbacks' context lives until MHD_stop_daemon has returned (see stop()).
        let ref = Unmanaged.passRetained(ServerRef(handler: handler, limits: limits, guardian: guardian))
        let me = ref.toOpaque()
        let start = { (addr: UnsafePointer<sockaddr>, me: UnsafeMutableRawPointer) -> OpaquePointer? in
            tls?.key.withCString { key in
                tls?.certificate.withCString { certificate in
                    Self.start(flags, addr, me, connections, limits, tls: (key, certificate))
                }
            } ?? Self.start(flags, addr, me, connections, limits, tls: nil)
        }
        if isV6 {
            started = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0, me) } }
        } else {
            started = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0, me) } }
        }
        guard let d = started else {
            ref.release()
            throw .couldNotStart(address: address, port: port)
        }
        guardian.start()
        self.port = tl_mhd_port(d)
        daemonAddress = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(d)))
        contextAddress = UInt(bitPattern: me)
    }

    /// Stops listening and waits for the connection threads to finish.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        MHD_stop_daemon(OpaquePointer(bitPattern: daemonAddress))
        let ref = Unmanaged<ServerRef>.fromOpaque(UnsafeRawPointer(bitPattern: contextAddress)!)
        ref.takeUnretainedValue().guardian.stop()
        ref.release()
    }

    /// Connections kept free below the limit: past it, the oldest connection still sending
    /// its head is cut for each new one.
    static let roomForNewcomers: UInt32 = 16

    /// `wanted`, or fewer when the process may not open that many files (the soft limit is
    /// raised toward the hard one first).
    static func connectionsAllowed(_ wanted: UInt32) -> UInt32 {
        var files = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0 else { return min(wanted, 512) }
        let needed = rlim_t(wanted) + 128  // the store's files, curl's, the standard ones
        if files.rlim_cur < needed && files.rlim_max > files.rlim_cur {
            files.rlim_cur = min(needed, files.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        let room = files.rlim_cur > 128 + rlim_t(roomForNewcomers) * 2 ? files.rlim_cur - 128 : rlim_t(roomForNewcomers) * 2
        return UInt32(min(rlim_t(wanted), room))
    }

    private static func start(
        _ flags: UInt32, _ address: UnsafePointer<sockaddr>, _ context: UnsafeMutableRawPointer, _ connections: UInt32,
        _ limits: Limits, tls: (key: UnsafePointer<CChar>, certificate: UnsafePointer<CChar>)?
    ) -> OpaquePointer? {
        var config = tl_mhd_config(
            handler: accessHandler, completed: completedHandler, uri_log: requestStarted,
            notify_connection: connectionNotice, context: context, connection_limit: connections,
            connection_timeout: limits.idleTimeoutSeconds, memory_limit: limits.headerMemory,
            tls_key: tls?.key, tls_cert: tls?.certificate)
        return tl_mhd_start(flags, address, &config)
    }

    deinit { stop() }
}

/// What the C callbacks reach through their context pointer.
final class ServerRef: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let limits: HTTPServer.Limits
    let guardian: ConnectionGuard

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, limits: HTTPServer.Limits, guardian: ConnectionGuard) {
        self.handler = handler
        self.limits = limits
        self.guardian = guardian
    }
}

/// One request as it arrives: the target as sent, then the body.
final class RequestState {
    let rawTarget: String
    /// Set once the head has been seen whole (the access handler's first call).
    var target: RequestTarget?
    var bytes: [UInt8] = []
    var limit = 0
    init(rawTarget: String) { self.rawTarget = rawTarget }
}

private func header(_ connection: OpaquePointer?, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
}

/// Every header field of the request by lowercased name (repeated fields joined by ", "), or
/// nil when there are more than `limit` of them. Their bytes are already bounded by the
/// connection's header memory.
private func allHeaders(_ connection: OpaquePointer?, limit: Int) -> [String: String]? {
    final class Collected {
        var fields: [String: String] = [:]
        var count = 0
        let limit: Int
        init(limit: Int) { self.limit = limit }
    }
    let collected = Collected(limit: limit)
    let visit: MHD_KeyValueIterator = { cls, _, key, value in
        let c = Unmanaged<Collected>.fromOpaque(cls!).takeUnretainedValue()
        c.count += 1
        guard c.count <= c.limit, let key else { return .NO }
        let name = String(cString: key).lowercased()
        let text = value.map { String(cString: $0) } ?? ""
        c.fields[name] = c.fields[name].map { $0 + ", " + text } ?? text
        return .YES
    }
    withExtendedLifetime(collected) {
        _ = MHD_get_connection_values(connection, .HEADER_KIND, visit, Unmanaged.passUnretained(collected).toOpaque())
    }
    return collected.count > limit ? nil : collected.fields
}

private func queue(_ connection: OpaquePointer?, _ response: HTTPResponse) -> MHD_Result {
    var body = response.body
    let r = body.withUnsafeMutableBytes { buf in
        MHD_create_response_from_buffer(buf.count, buf.baseAddress, .RESPMEM_MUST_COPY)
    }
    guard let r else { return .NO }
    for (name, value) in response.headers { MHD_add_response_header(r, name, value) }
    let result = MHD_queue_response(connection, UInt32(response.status), r)
    MHD_destroy_response(r)
    return result
}

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, uploadData, uploadSize, state in
    let server = Unmanaged<ServerRef>.fromOpaque(cls!).takeUnretainedValue()
    let methodText = method.map { String(cString: $0) } ?? ""
    guard let state, let pointer = state.pointee else { return .NO }
    let request = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
    guard let target = request.target else { return headArrived(server, connection, request, method: methodText) }
    if let size = uploadSize, size.pointee > 0 {
        guard request.bytes.count + size.pointee <= request.limit, let data = uploadData else {
            return .NO  // over the limit without a Content-Length: close the connection
        }
        data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) {
            request.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: size.pointee))
        }
        size.pointee = 0
        return .YES
    }
    guard let headers = allHeaders(connection, limit: server.limits.maxHeaderFields) else {
        return queue(connection, HTTPResponse.error(431, "the request has more than \(server.limits.maxHeaderFields) header fields"))
    }
    let rawPath = String(request.rawTarget.prefix { $0 != "?" })
    let whole = HTTPRequest(method: methodText, path: target.path, rawPath: rawPath, query: target.query, headers: headers, body: request.bytes)
    return queue(connection, server.handler(whole))
}

/// The first call for a request: only the head has arrived. Strangers and bad targets are
/// answered before any body is read.
private func headArrived(_ server: ServerRef, _ connection: OpaquePointer?, _ request: RequestState, method: String) -> MHD_Result {
    server.guardian.headArrived(tl_mhd_connection_fd(connection))
    let target: RequestTarget
    do {
        target = try RequestTarget(raw: request.rawTarget)
    } catch {
        let refused = server.limits.authorise.map { !$0(method, "", header(connection, "Authorization")) } ?? false
        return queue(connection, refused ? HTTPResponse.unauthorised(path: String(request.rawTarget.prefix { $0 != "?" })) : HTTPResponse.error(400, error.message))
    }
    if let authorise = server.limits.authorise, !authorise(method, target.path, header(connection, "Authorization")) {
        return queue(connection, HTTPResponse.unauthorised(path: String(request.rawTarget.prefix { $0 != "?" })))
    }
    let limit = server.limits.maxBody(method, target.path)
    if let length = header(connection, "Content-Length").flatMap({ Int($0) }), length > limit {
        return queue(connection, HTTPResponse.error(413, "the request body is larger than \(limit) bytes"))
    }
    request.target = target
    request.limit = limit
    return .YES
}

/// A request line arrived: its state, holding the target exactly as sent.
private let requestStarted: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
    _, uri, _ in
    Unmanaged.passRetained(RequestState(rawTarget: uri.map { String(cString: $0) } ?? "/")).toOpaque()
}

private let completedHandler: MHD_RequestCompletedCallback = { cls, connection, state, _ in
    if let state, let p = state.pointee {
        Unmanaged<RequestState>.fromOpaque(p).release()
        state.pointee = nil
    }
    if let cls { Unmanaged<ServerRef>.fromOpaque(cls).takeUnretainedValue().guardian.answered(tl_mhd_connection_fd(connection)) }
}

private let connectionNotice: MHD_NotifyConnectionCallback = { cls, connection, _, code in
    let guardian = Unmanaged<ServerRef>.fromOpaque(cls!).takeUnretainedValue().guardian
    let fd = tl_mhd_connection_fd(connection)
    if code == .CONNECTION_NOTIFY_STARTED { guardian.opened(fd) } else { guardian.closed(fd) }
}

@_spi(Engine) import TaskModel

/// Builds small JSON bodies with the model's writer.
struct JSONWriterBridge {
    mutating func error(_ message: String) -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"error\":")
        w.string(message)
        w.raw("}\n")
        return w.bytes
    }
}
