#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// A failure of one request to a remote storage, as the retry layer sees it.
package protocol RetryableFailure: Error {
    /// True when the same request may succeed later: a network error, a 5xx answer, 429, or
    /// a server asking to slow down.
    var isTransient: Bool { get }
    /// True when the request surely never reached the server (the connection was refused),
    /// so even a request that is not idempotent may be sent again.
    var neverSent: Bool { get }
    /// The wait the server asked for (`Retry-After`), or 0 to try again at once (a request
    /// signed again after clock skew); nil for the usual backoff.
    var requestedDelay: Double? { get }
}

/// The one retry layer of the remote storages: jittered exponential backoff, bounded in
/// attempts and in total time. A request that may double its effect is sent again only
/// when it is idempotent or never reached the server.
package struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    package var attempts = 6
    /// The first backoff; each later one doubles, up to ``longestDelay``.
    package var firstDelay = 0.25
    package var longestDelay = 8.0
    /// No new attempt starts when it would begin this many seconds after the first.
    package var totalSeconds = 90.0
    /// A request is cut off when it moves fewer than ``HTTPClient/stallBytes`` bytes in
    /// this many seconds (the client's stall cut-off), and counts as a network error.
    package var stallSeconds = 15

    package init() {}

    /// Runs `request` (given the attempt number, from 0) until it succeeds, fails for good,
    /// or the attempts or the time run out; then throws the last failure.
    package func run<T, Failure: RetryableFailure>(
        idempotent: Bool, _ request: (_ attempt: Int) throws(Failure) -> T
    ) throws(Failure) -> T {
        let deadline = ContinuousClock.now + .milliseconds(Int(totalSeconds * 1000))
        var attempt = 0
        while true {
            do {
                return try request(attempt)
            } catch {
                attempt += 1
                guard error.isTransient, idempotent || error.neverSent, attempt < attempts else { throw error }
                let wait = error.requestedDelay.map { min($0, longestDelay) } ?? backoff(before: attempt)
                guard ContinuousClock.now + .milliseconds(Int(wait * 1000)) < deadline else { throw error }
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            }
        }
    }

    /// The wait before attempt `attempt` (from 1): half the exponential step plus a random
    /// part up to the other half, so clients that failed together do not retry together.
    func backoff(before attempt: Int) -> Double {
        let step = min(longestDelay, firstDelay * Double(1 << min(attempt - 1, 20)))
        return step / 2 + Double.random(in: 0...(step / 2))
    }

    /// The seconds a `Retry-After` header asks for, when it is a small whole number.
    package static func delay(retryAfter value: String?) -> Double? {
        guard let value, let seconds = Int(value.trimmingCharacters(in: " ")), (0...3600).contains(seconds) else { return nil }
        return Double(seconds)
    }
}

extension HTTPClientError: RetryableFailure {
    package var isTransient: Bool {
        switch self {
        case .refused, .timedOut, .unreachable, .stalled: true
        case .failed(_, let status, _): status == 429 || status >= 500
        case .unauthorised, .incompatible, .tooLarge: false
        }
    }

    package var neverSent: Bool {
        if case .refused = self { return true }
        return false
    }

    package var requestedDelay: Double? { nil }
}
