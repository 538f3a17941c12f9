#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import Synchronization

/// One HTTP request, fully received.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string.
    public var path: String
    public var query: [String: String]
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
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
    /// A JSON error body: `{"error": "…"}`.
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var w = JSONWriterBridge()
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: w.error(message))
    }
}

/// Why the HTTP server could not start.
public enum HTTPServerError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidAddress(String)
    case couldNotStart(address: String, port: UInt16)
    case tlsUnsupported

    public var description: String {
        switch self {
        case .invalidAddress(let a): "'\(a)' is not an IPv4 or IPv6 address to bind"
        case .couldNotStart(let a, let p):
            "could not listen on \(a):\(p) (is the port in use, the address not on this machine, or the TLS certificate or key unusable?); choose another --port or --bind, or check the PEM files"
        case .tlsUnsupported: "this build of libmicrohttpd has no TLS support; serve plain HTTP on loopback or behind a TLS proxy"
        }
    }
}

/// An HTTP server on libmicrohttpd: one thread per connection, limits on connections, idle
/// time, header memory and body size. Requests are handed whole to `handler`, which may block
/// (long polls do).
public final class HTTPServer: Sendable {
    public struct Limits: Sendable {
        public var maxConnections: UInt32 = 128
        /// Seconds a connection may stay idle (slow or stalled clients are cut off).
        public var idleTimeoutSeconds: UInt32 = 30
        /// Bytes for the request line and headers of one connection.
        public var headerMemory = 32 << 10
        /// The largest body accepted for a request, by method and path; larger ones get 413.
        public var maxBody: @Sendable (_ method: String, _ path: String) -> Int = { _, _ in 1 << 20 }
        /// Checks the `Authorization` header before any body is read (nil: everyone may send).
        public var authorise: (@Sendable (_ header: String?) -> Bool)?

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
        let start = { (addr: UnsafePointer<sockaddr>, me: UnsafeMutableRawPointer) -> OpaquePointer? in
            tl_mhd_start(
                flags, addr, accessHandler, me, completedHandler, nil, limits.maxConnections,
                limits.idleTimeoutSeconds, limits.headerMemory, tls?.key, tls?.certificate)
        }
        // The callbacks' context lives until MHD_stop_daemon has returned (see stop()).
        let ref = Unmanaged.passRetained(ServerRef(handler: handler, limits: limits))
        let me = ref.toOpaque()
        if isV6 {
            started = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0, me) } }
        } else {
            started = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { start($0, me) } }
        }
        guard let d = started else {
            ref.release()
            throw .couldNotStart(address: address, port: port)
        }
        self.port = tl_mhd_port(d)
        daemonAddress = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(d)))
        contextAddress = UInt(bitPattern: me)
    }

    /// Stops listening and waits for the connection threads to finish.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        MHD_stop_daemon(OpaquePointer(bitPattern: daemonAddress))
        Unmanaged<ServerRef>.fromOpaque(UnsafeRawPointer(bitPattern: contextAddress)!).release()
    }

    deinit { stop() }
}

/// What the C callbacks reach through their context pointer.
final class ServerRef: Sendable {
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let limits: HTTPServer.Limits

    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, limits: HTTPServer.Limits) {
        self.handler = handler
        self.limits = limits
    }
}

/// The body of one request as it arrives.
final class RequestBody {
    var bytes: [UInt8] = []
    let limit: Int
    init(limit: Int) { self.limit = limit }
}

private func header(_ connection: OpaquePointer?, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
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

private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, state in
    let server = Unmanaged<ServerRef>.fromOpaque(cls!).takeUnretainedValue()
    let methodText = method.map { String(cString: $0) } ?? ""
    let pathText = url.map { String(cString: $0) } ?? "/"
    guard let state else { return .NO }
    if state.pointee == nil {
        // First call: only the headers have arrived. Refuse strangers before reading a body.
        if let authorise = server.limits.authorise, !authorise(header(connection, "Authorization")) {
            var r = HTTPResponse.error(401, "missing or wrong bearer token")
            r.headers.append(("WWW-Authenticate", "Bearer"))
            return queue(connection, r)
        }
        let limit = server.limits.maxBody(methodText, pathText)
        if let length = header(connection, "Content-Length").flatMap({ Int($0) }), length > limit {
            return queue(connection, HTTPResponse.error(413, "the request body is larger than \(limit) bytes"))
        }
        state.pointee = Unmanaged.passRetained(RequestBody(limit: limit)).toOpaque()
        return .YES
    }
    let body = Unmanaged<RequestBody>.fromOpaque(state.pointee!).takeUnretainedValue()
    if let size = uploadSize, size.pointee > 0 {
        guard body.bytes.count + size.pointee <= body.limit, let data = uploadData else {
            return .NO  // over the limit without a Content-Length: close the connection
        }
        data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) {
            body.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: size.pointee))
        }
        size.pointee = 0
        return .YES
    }
    var query: [String: String] = [:]
    for key in ["since", "timeout"] {
        if let v = MHD_lookup_connection_value(connection, .GET_ARGUMENT_KIND, key) { query[key] = String(cString: v) }
    }
    var headers: [String: String] = [:]
    for name in ["authorization", "content-type", "tasklog-protocol"] {
        if let v = header(connection, name) { headers[name] = v }
    }
    let request = HTTPRequest(method: methodText, path: pathText, query: query, headers: headers, body: body.bytes)
    return queue(connection, server.handler(request))
}

private let completedHandler: MHD_RequestCompletedCallback = { _, _, state, _ in
    if let state, let p = state.pointee {
        Unmanaged<RequestBody>.fromOpaque(p).release()
        state.pointee = nil
    }
}

import TaskModel

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
