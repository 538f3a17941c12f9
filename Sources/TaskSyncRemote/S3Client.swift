#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSodium
import Synchronization
@_spi(Engine) import TaskSyncHTTP

/// Signed requests to one S3 bucket, each through the retry layer. When the server refuses
/// a request as signed at a skewed time, the offset of its `Date` is kept and the request
/// signed again with the corrected time.
package final class S3Client: Sendable {
    let addressing: S3Addressing
    let credentials: S3Credentials
    let http: HTTPClient
    let retry: RetryPolicy
    /// Where requests go, for messages: `s3://BUCKET/PREFIX`.
    let location: String
    /// The scheme and host requests go to, for network errors.
    let server: String
    /// Seconds to add to this machine's clock to get the server's.
    package let clockOffset = Mutex<Int>(0)

    package init(location: S3Location, credentials: S3Credentials, retry: RetryPolicy) {
        addressing = S3Addressing(bucket: location.bucket, region: credentials.region, endpoint: credentials.endpoint)
        self.credentials = credentials
        self.retry = retry
        self.location = location.description
        server = addressing.base
        var http = HTTPClient()
        http.signing = HTTPClient.SigV4(region: credentials.region, accessKey: credentials.accessKeyID, secretKey: credentials.secretAccessKey)
        http.stallWindow = retry.stallSeconds
        self.http = http
    }

    /// The limit given to a HEAD request: no body comes, but its `Content-Length` is the
    /// object's size, which the client compares with the limit.
    static let headLimit = Int.max / 2

    /// One request: the object `key` (the bucket when nil), and the statuses that are
    /// answers rather than failures.
    package struct Request {
        var method: String
        var key: String?
        var query: [(String, String)] = []
        var headers: [String: String] = [:]
        var body: [UInt8]? = nil
        /// The most bytes the answer's body may have.
        var limit: Int
        var accept: Set<Int>
    }

    /// Sends `request` through the retry layer (every request of ours is idempotent).
    /// - Throws: an ``S3Failure`` for a status not in `accept`, a 404 for a missing bucket,
    ///   or no answer.
    package func send(_ request: Request) throws(S3Failure) -> HTTPReply {
        let url = addressing.url(key: request.key, query: request.query)
        var headers = request.headers
        headers["x-amz-content-sha256"] = Self.sha256Hex(request.body ?? [])
        if let token = credentials.sessionToken { headers["x-amz-security-token"] = token }
        return try retry.run(idempotent: true) { (_: Int) throws(S3Failure) -> HTTPReply in
            let offset = clockOffset.withLock { $0 }
            var signed = headers
            if offset != 0 { signed["x-amz-date"] = Self.amzDate(time(nil) + offset) }
            let reply: HTTPReply
            do throws(HTTPClientError) {
                reply = try http.send(request.method, url, headers: signed, body: request.body, limit: request.limit)
            } catch {
                throw .network(error, server: server)
            }
            if request.accept.contains(reply.status), !(reply.status == 404 && Self.isMissingBucket(reply)) { return reply }
            let answer = S3ErrorAnswer(reply, location: location)
            if answer.code == "RequestTimeTooSkewed", let date = answer.serverDate, let serverTime = Self.parseHTTPDate(date) {
                clockOffset.withLock { $0 = serverTime - time(nil) }
            }
            throw .answered(answer)
        }
    }

    /// A 404 that says the bucket, not the key, is missing.
    static func isMissingBucket(_ reply: HTTPReply) -> Bool {
        reply.body.count < 4096 && String(decoding: reply.body, as: UTF8.self).contains("<Code>NoSuchBucket</Code>")
    }

    /// The hex SHA-256 of `bytes`, the `x-amz-content-sha256` S3 checks the body against.
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = sodium_init()
        _ = bytes.withUnsafeBufferPointer { crypto_hash_sha256(&digest, $0.baseAddress, UInt64($0.count)) }
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// `seconds` since 1970 as Signature Version 4 writes a time: `20250102T030405Z`.
    static func amzDate(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// Seconds since 1970 of an HTTP date (`Mon, 07 Dec 2026 18:12:06 GMT`); nil if it is not one.
    static func parseHTTPDate(_ text: String) -> Int? {
        let words = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard text.utf8.count < 64, words.count == 6, words[5] == "GMT", let month = months.firstIndex(of: String(words[2])),
            let day = Int32(words[1]), let year = Int32(words[3]), (1970...9999).contains(year)
        else { return nil }
        let clock = words[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var parts = tm()
        (parts.tm_year, parts.tm_mon, parts.tm_mday) = (year - 1900, Int32(month), day)
        (parts.tm_hour, parts.tm_min, parts.tm_sec) = (clock[0], clock[1], clock[2])
        return Int(timegm(&parts))
    }
}
