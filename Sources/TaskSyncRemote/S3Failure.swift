import BoundedXML
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// Why an S3 request failed, in one line that says what to check.
package enum S3Failure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No answer: the connection failed, or the answer stopped or stalled.
    case network(HTTPClientError, server: String)
    /// The server answered with an error.
    case answered(S3ErrorAnswer)
    /// A listing that contradicts itself or passes the bounds.
    case badListing(location: String, reason: String)

    package var description: String {
        switch self {
        case .network(let error, let server): Self.describe(error, server: server)
        case .answered(let answer): answer.description
        case .badListing(let location, let reason): "the listing of \(location) cannot be used: \(reason); check the endpoint is an S3 server"
        }
    }

    static func describe(_ error: HTTPClientError, server: String) -> String {
        switch error {
        case .refused: "\(server) refused the connection; check the endpoint and that the S3 server is running"
        case .timedOut(_, let s): "no answer from \(server) within \(Int(s)) s; check the endpoint and the network"
        case .stalled(_, _, let s): "\(server) stopped sending for \(s) s and was cut off; check the network"
        case .unreachable(_, let reason): "cannot reach \(server): \(reason); check the endpoint and the network"
        case .tooLarge(_, let limit): "\(server) sent more than \(HTTPClientError.size(limit)) in one answer; check the endpoint is an S3 server"
        case .unauthorised, .incompatible, .failed: error.description
        }
    }

    /// The failure as the folder protocol reports it: a missing bucket is a missing folder.
    package var syncError: SyncError {
        if case .answered(let answer) = self, answer.code == "NoSuchBucket" { return .folderMissing(answer.location) }
        return .storageFailed(description)
    }
}

/// An S3 error answer: its status, the `Code` and `Message` of its XML body, and what the
/// retry layer needs from its headers.
package struct S3ErrorAnswer: Equatable, Sendable, CustomStringConvertible {
    package var status: Int
    package var code: String
    package var message: String
    /// Where the request went, as `s3://BUCKET/PREFIX`.
    package var location: String
    /// The server's `Date` header: its clock, for a request refused as skewed.
    package var serverDate: String?
    package var retryAfter: Double?

    /// Reads an error answer; a body that is not S3's error XML leaves the code empty.
    init(_ reply: HTTPReply, location: String) {
        status = reply.status
        self.location = location
        serverDate = reply.headers["date"]
        retryAfter = RetryPolicy.delay(retryAfter: reply.headers["retry-after"])
        let tree = try? XMLTree.parse(reply.body, bounds: XMLBounds(elements: 64, attributesPerElement: 8, depth: 8))
        code = Self.clean(tree?.children.first { $0.name == "Code" }?.text ?? "", longest: 64)
        message = Self.clean(tree?.children.first { $0.name == "Message" }?.text ?? "", longest: 200)
    }

    package init(status: Int, code: String, message: String, location: String) {
        self.status = status
        self.code = code
        self.message = message
        self.location = location
    }

    /// The server's words, safe to print on one line: printable ASCII, at most `longest`.
    static func clean(_ text: String, longest: Int) -> String {
        let kept = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(longest)
        return String(String.UnicodeScalarView(kept)).trimmingCharacters(in: " ")
    }

    /// True when the request may succeed if sent again: a 5xx, 429, `SlowDown`, a
    /// conditional write that raced another, or a clock skew that re-signing fixes.
    var isTransient: Bool {
        status >= 500 || status == 429 || ["SlowDown", "ConditionalRequestConflict", "RequestTimeTooSkewed"].contains(code)
    }

    package var description: String {
        switch code {
        case "InvalidAccessKeyId": "\(location): the server does not know the access key; check the access key ID"
        case "SignatureDoesNotMatch": "\(location): the server refused the request's signature; check the secret key and the region"
        case "AccessDenied": "\(location): access denied; check that the access key may list, read, write and delete in that bucket"
        case "RequestTimeTooSkewed": "\(location): the server's clock and this machine's differ too much; set this machine's clock right"
        case "NoSuchBucket": SyncError.folderMissing(location).description
        default:
            "\(location): the server answered \(status)\(code.isEmpty ? "" : " " + code)\(message.isEmpty ? "" : ": " + message); check the endpoint and the bucket"
        }
    }
}

extension S3Failure: RetryableFailure {
    package var isTransient: Bool {
        switch self {
        case .network(let error, _): error.isTransient
        case .answered(let answer): answer.isTransient
        case .badListing: false
        }
    }

    package var neverSent: Bool {
        if case .network(let error, _) = self { return error.neverSent }
        return false
    }

    package var requestedDelay: Double? {
        guard case .answered(let answer) = self else { return nil }
        return answer.code == "RequestTimeTooSkewed" ? 0 : answer.retryAfter
    }
}
