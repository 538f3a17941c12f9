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

    public var description: String {
        switch self {
        case .refused(let u): "connection to \(u) refused; is 'tasklog serve' running there, on that port?"
        case .timedOut(let u, let s): "no answer from \(u) within \(Int(s)) s; check the address and the network"
        case .unreachable(let u, let r): "cannot reach \(u): \(r)"
        case .unauthorised(let u): "\(u) refused the token (401); pass the server's token with --token or TASKLOG_TOKEN"
        case .incompatible(let u, let r): "\(u) is not a compatible TaskLog peer (\(r)); run the same tasklog version on both sides"
        case .failed(let u, let status, let m): "\(u) answered \(status): \(m)"
        }
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
    func send(
        _ method: String, _ url: String, headers: [String: String], body: [UInt8]?, timeout: Double?
    ) throws(HTTPClientError) -> HTTPReply
}

/// A blocking HTTP client on libcurl.
package struct HTTPClient: HTTPTransport {
    package var timeoutSeconds: Double = 30
    /// A PEM file of certificates to trust instead of the system's.
    package var trustedCertificates: String?

    final class Sink {
        var body: [UInt8] = []
        var headers: [String: String] = [:]
    }

    static let initialised: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        return true
    }()

    package init(trustedCertificates: String? = nil) { self.trustedCertificates = trustedCertificates }

    package func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
        timeout: Double? = nil
    ) throws(HTTPClientError) -> HTTPReply {
        _ = HTTPClient.initialised
        guard let curl = curl_easy_init() else { throw .unreachable(url: url, reason: "libcurl could not start") }
        defer { curl_easy_cleanup(curl) }
        let sink = Sink()
        let seconds = timeout ?? timeoutSeconds
        setOptions(curl, method, url, seconds: seconds)
        Self.collectReply(curl, into: sink)
        let code = Self.perform(curl, headers: headers, body: body)
        switch code {
        case CURLE_OK: break
        case CURLE_COULDNT_CONNECT: throw .refused(url: url)
        case CURLE_OPERATION_TIMEDOUT: throw .timedOut(url: url, seconds: seconds)
        default: throw .unreachable(url: url, reason: String(cString: curl_easy_strerror(code)))
        }
        var status = 0
        tl_curl_get_response_code(curl, &status)
        return HTTPReply(status: status, headers: sink.headers, body: sink.body)
    }

    /// Sets the request line, the time limits, no proxy, and the certificates to trust.
    private func setOptions(_ curl: UnsafeMutableRawPointer, _ method: String, _ url: String, seconds: Double) {
        tl_curl_set_string(curl, CURLOPT_URL, url)
        tl_curl_set_string(curl, CURLOPT_CUSTOMREQUEST, method)
        tl_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
        tl_curl_set_long(curl, CURLOPT_TIMEOUT_MS, Int(seconds * 1000))
        tl_curl_set_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(min(seconds, 10) * 1000))
        tl_curl_set_string(curl, CURLOPT_NOPROXY, "*")
        if let trustedCertificates { tl_curl_set_string(curl, CURLOPT_CAINFO, trustedCertificates) }
    }

    /// Has libcurl put the reply's body and headers in `sink`, which the caller keeps alive
    /// until the transfer ends.
    private static func collectReply(_ curl: UnsafeMutableRawPointer, into sink: Sink) {
        let context = Unmanaged.passUnretained(sink).toOpaque()
        tl_curl_set_write_function(curl) { data, size, count, ctx in
            let sink = Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue()
            data!.withMemoryRebound(to: UInt8.self, capacity: size * count) {
                sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size * count))
            }
            return size * count
        }
        tl_curl_set_pointer(curl, CURLOPT_WRITEDATA, context)
        tl_curl_set_header_function(curl) { data, size, count, ctx in
            let sink = Unmanaged<Sink>.fromOpaque(ctx!).takeUnretainedValue()
            let line = data!.withMemoryRebound(to: UInt8.self, capacity: size * count) {
                String(decoding: UnsafeBufferPointer(start: $0, count: size * count), as: UTF8.self)
            }
            if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: " \r\n")
                sink.headers[name] = value
            }
            return size * count
        }
        tl_curl_set_pointer(curl, CURLOPT_HEADERDATA, context)
    }

    /// Sends the request with `headers` and `body` (none if nil), and waits for the reply.
    private static func perform(_ curl: UnsafeMutableRawPointer, headers: [String: String], body: [UInt8]?) -> CURLcode {
        var list: UnsafeMutablePointer<curl_slist>?
        for (k, v) in headers { list = curl_slist_append(list, "\(k): \(v)") }
        list = curl_slist_append(list, "Expect:")
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
