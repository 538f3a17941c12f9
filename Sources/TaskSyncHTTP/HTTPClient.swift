#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CCurl

/// Why a request to a peer failed, in words that say what to do.
public enum HTTPClientError: Error, Equatable, Sendable, CustomStringConvertible {
    case refused(url: String)
    case timedOut(url: String, seconds: Double)
    case unreachable(url: String, reason: String)
    case unauthorised(url: String)
    case incompatible(url: String, reason: String)
    case failed(url: String, status: Int, message: String)
    /// The answer's body or headers passed what the request accepts (`limit` bytes).
    case tooLarge(url: String, limit: Int)
    /// Fewer than `bytes` bytes moved in `seconds` seconds.
    case stalled(url: String, bytes: Int, seconds: Int)

    public var description: String {
        switch self {
        case .refused(let u): "connection to \(u) refused; is 'tasklog serve' running there, on that port?"
        case .timedOut(let u, let s): "no answer from \(u) within \(Int(s)) s; check the address and the network"
        case .unreachable(let u, let r): "cannot reach \(u): \(r)"
        case .unauthorised(let u): "\(u) refused the token (401); check that it is the token the server was started with"
        case .incompatible(let u, let r): "\(u) is not a compatible TaskLog peer (\(r)); run the same tasklog version on both sides"
        case .failed(let u, let status, let m): "\(u) answered \(status): \(m)"
        case .tooLarge(let u, let limit):
            "\(u) sent more than \(Self.size(limit)) in one answer, more than the protocol allows; check that the URL is a TaskLog peer"
        case .stalled(let u, let bytes, let seconds):
            "\(u) sent fewer than \(bytes) bytes in \(seconds) s and was cut off; check the network, and that the URL is a TaskLog peer"
        }
    }

    /// `limit` in MiB or KiB, as the Spec states the bounds.
    package static func size(_ limit: Int) -> String {
        limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
    }
}

/// An answer from a peer.
@_spi(Engine) public struct HTTPReply: Sendable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// How `HTTPSync` reaches a peer: libcurl over the network by default; simulations pass
/// their own (in-process, with injected faults).
@_spi(Engine) public protocol HTTPTransport: Sendable {
    /// - Parameter limit: the most bytes of body the answer may have; past it the transfer
    ///   stops with ``HTTPClientError/tooLarge(url:limit:)``.
    func send(
        _ method: String, _ url: String, headers: [String: String], body: [UInt8]?, timeout: Double?, limit: Int
    ) throws(HTTPClientError) -> HTTPReply
}

/// A blocking HTTP client on libcurl. Every answer is bounded: its headers by
/// ``headerLimit``, its body by the caller's limit, checked against `Content-Length` before
/// the body arrives and again as it arrives (Spec/sync-http.md, "Client rules").
package struct HTTPClient: HTTPTransport {
    /// The time a whole request may take, unless the caller gives its own.
    package var timeoutSeconds: Double = 30
    /// A PEM file of certificates to trust instead of the system's.
    package var trustedCertificates: String?
    /// Signs each request for an S3 service when set (libcurl's AWS Signature Version 4).
    package var signing: SigV4?
    /// The stall cut-off's window: a request with no timeout of its own stops when fewer than
    /// ``stallBytes`` bytes move in this many seconds.
    package var stallWindow = HTTPClient.stallSeconds

    /// The most bytes of headers an answer may have.
    package static let headerLimit = 1 << 20
    /// A request with no timeout of its own stops when fewer than ``stallBytes`` bytes arrive
    /// in ``stallSeconds`` (a long poll, silent by design, gives its own timeout instead).
    package static let stallSeconds = 15
    package static let stallBytes = 1024

    /// A body handler: gets each piece of a 2xx answer's body as it arrives instead of the
    /// reply keeping it, and returns false to stop the transfer.
    package typealias Consumer = (UnsafeRawBufferPointer) -> Bool

    final class Sink {
        let curl: UnsafeMutableRawPointer
        let limit: Int
        let consume: Consumer?
        var body: [UInt8] = []
        var headers: [String: String] = [:]
        var headerBytes = 0
        var bodyBytes = 0
        var tooLarge = false
        var consumerStopped = false

        init(curl: UnsafeMutableRawPointer, limit: Int, consume: Consumer?) {
            self.curl = curl
            self.limit = limit
            self.consume = consume
        }
    }

    static let initialised: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        return true
    }()

    package init(trustedCertificates: String? = nil) { self.trustedCertificates = trustedCertificates }

    /// What libcurl needs to sign a request with AWS Signature Version 4 for S3. The caller
    /// adds the `x-amz-content-sha256` header (S3 needs it), and may add `x-amz-date` to
    /// sign with another time and `x-amz-security-token` for a session token: libcurl
    /// signs every `x-amz-` header it is given.
    package struct SigV4: Sendable {
        package var region: String
        package var accessKey: String
        package var secretKey: String

        package init(region: String, accessKey: String, secretKey: String) {
            self.region = region
            self.accessKey = accessKey
            self.secretKey = secretKey
        }
    }

    package func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: Double? = nil, limit: Int
    ) throws(HTTPClientError) -> HTTPReply {
        try send(method, url, headers: headers, body: body, timeout: timeout, limit: limit, consume: nil)
    }

    /// Sends a request; a 2xx answer's body goes to `consume` when given (the reply's body is
    /// then empty). When `consume` stops the transfer, the reply is returned as it stands.
    package func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: Double? = nil, limit: Int, consume: Consumer?
    ) throws(HTTPClientError) -> HTTPReply {
        _ = HTTPClient.initialised
        guard let curl = curl_easy_init() else { throw .unreachable(url: url, reason: "libcurl could not start") }
        defer { curl_easy_cleanup(curl) }
        let sink = Sink(curl: curl, limit: limit, consume: consume)
        let seconds = timeout ?? timeoutSeconds
        setOptions(curl, method, url, seconds: seconds, stallCheck: timeout == nil, limit: limit)
        Self.collectReply(curl, into: sink)
        let started = ContinuousClock.now
        let code = Self.perform(curl, headers: headers, body: body, refuseExpect: signing == nil)
        var status = 0
        tl_curl_get_response_code(curl, &status)
        let reply = HTTPReply(status: status, headers: sink.headers, body: sink.body)
        if sink.tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            throw .tooLarge(url: url, limit: sink.headerBytes > Self.headerLimit ? Self.headerLimit : limit)
        }
        switch code {
        case CURLE_OK: return reply
        case CURLE_WRITE_ERROR where sink.consumerStopped: return reply
        case CURLE_COULDNT_CONNECT: throw .refused(url: url)
        case CURLE_OPERATION_TIMEDOUT:
            let elapsed = started.duration(to: .now) / .seconds(1)
            if elapsed < seconds - 1 { throw .stalled(url: url, bytes: Self.stallBytes, seconds: stallWindow) }
            throw .timedOut(url: url, seconds: seconds)
        default: throw .unreachable(url: url, reason: String(cString: curl_easy_strerror(code)))
        }
    }

    /// Sets the request line, the time and size limits, no proxy, the certificates to trust
    /// and the signature. A HEAD request waits for no body.
    private func setOptions(_ curl: UnsafeMutableRawPointer, _ method: String, _ url: String, seconds: Double, stallCheck: Bool, limit: Int) {
        tl_curl_set_string(curl, CURLOPT_URL, url)
        tl_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method)
        tl_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
        tl_curl_set_long(curl, CURLOPT_TIMEOUT_MS, Int(seconds * 1000))
        tl_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(min(seconds, 10) * 1000))
        if method == "HEAD" { tl_curl_set_long(curl, CURLOPT_NOBODY, 1) }
        if stallCheck {
            tl_curl_set_long(curl, CURLOPT_LOW_SPEED_LIMIT, Self.stallBytes / stallWindow + 1)
            tl_curl_set_long(curl, CURLOPT_LOW_SPEED_TIME, stallWindow)
        }
        tl_curl_set_offset(curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit))
        tl_curl_set_string(curl, CURLOPT_NOPROXY, "*")
        if let trustedCertificates { tl_curl_set_string(curl, CURLOPT_CAINFO, trustedCertificates) }
        if let signing {
            tl_curl_set_string(curl, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):s3")
            // Apart, not as "key:secret": a colon in either would split them wrongly.
            tl_curl_set_string(curl, CURLOPT_USERNAME, signing.accessKey)
            tl_curl_set_string(curl, CURLOPT_PASSWORD, signing.secretKey)
        }
    }

    /// Has libcurl put the reply's body and headers in `sink`, which the caller keeps alive
    /// until the transfer ends. Past a limit, or when the consumer says so, the callbacks
    /// return 0, which stops the transfer.
    private static func collectReply(_ curl: UnsafeMutableRawPointer, into sink: Sink) {
        let context = Unmanaged.passUnretained(sink).toOpaque()
        tl_curl_set_write_function(curl) { data, size, count, ctx in
            let sink = Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue()
            return sink.take(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        tl_curl_set_pointer(curl, CURLOPT_WRITEDATA, context)
        tl_curl_set_header_function(curl) { data, size, count, ctx in
            let sink = Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue()
            return sink.header(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
        }
        tl_curl_set_pointer(curl, CURLOPT_HEADERDATA, context)
    }

    /// Sends the request with `headers` and `body` (none if nil), and waits for the reply.
    /// `refuseExpect` drops libcurl's `Expect: 100-continue`; a signed request keeps it, as
    /// libcurl 7.88 would sign the empty header it takes to drop it, which the server never sees.
    private static func perform(_ curl: UnsafeMutableRawPointer, headers: [String: String], body: [UInt8]?, refuseExpect: Bool) -> CURLcode {
        var list: UnsafeMutablePointer<curl_slist>?
        for (k, v) in headers { list = curl_slist_append(list, "\(k): \(v)") }
        if refuseExpect { list = curl_slist_append(list, "Expect:") }
        defer { curl_slist_free_all(list) }
        tl_curl_set_pointer(curl, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list))
        var payload = body ?? []
        return payload.withUnsafeMutableBytes { buf in
            if body != nil {
                tl_curl_set_offset(curl, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(buf.count))
                if let base = buf.baseAddress {
                    tl_curl_set_pointer(curl, CURLOPT_POSTFIELDS, base)
                } else {
                    tl_curl_set_string(curl, CURLOPT_POSTFIELDS, "")
                }
            }
            return curl_easy_perform(curl)
        }
    }
}

extension HTTPClient.Sink {
    /// Takes a piece of the body; false stops the transfer (past the limit, or the consumer's call).
    func take(_ piece: UnsafeRawBufferPointer) -> Bool {
        bodyBytes += piece.count
        guard bodyBytes <= limit else {
            tooLarge = true
            return false
        }
        var status = 0
        if let consume, tl_curl_get_response_code(curl, &status) == CURLE_OK, (200..<300).contains(status) {
            consumerStopped = !consume(piece)
            return !consumerStopped
        }
        if body.capacity < bodyBytes {
            // Grow to at most the limit, so a body near it never holds twice the limit.
            body.reserveCapacity(min(max(bodyBytes, body.capacity * 2), limit))
        }
        body.append(contentsOf: piece.bindMemory(to: UInt8.self))
        return true
    }

    /// Takes a header line; false stops the transfer (past the header limit, or a
    /// `Content-Length` over the body limit). A new head (after a 100 or a redirect) starts afresh.
    func header(_ line: UnsafeRawBufferPointer) -> Bool {
        headerBytes += line.count
        guard headerBytes <= HTTPClient.headerLimit else {
            tooLarge = true
            return false
        }
        let text = String(decoding: line.bindMemory(to: UInt8.self), as: UTF8.self)
        if text.hasPrefix("HTTP/") { headers = [:] }
        guard let colon = text.firstIndex(of: ":") else { return true }
        let name = text[..<colon].lowercased()
        let value = text[text.index(after: colon)...].trimmingCharacters(in: " \r\n")
        headers[name] = value
        if name == "content-length", let length = Int(value), length > limit {
            tooLarge = true
            return false
        }
        return true
    }
}
