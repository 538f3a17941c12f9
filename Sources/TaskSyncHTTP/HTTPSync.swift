@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// Exchanges operations with an HTTP peer (`tasklog serve`) in two round trips: pull what
/// this store lacks (sending its version vector), then push what the peer lacks (known from
/// the pull's answer). Large transfers go in bounded pieces; a dropped connection loses
/// nothing, since a repeated exchange sends only what is still missing
/// (Spec/sync-http.md).
public struct HTTPSync: Sendable {
    public let store: TaskStore
    /// The peer's base URL, such as `http://127.0.0.1:4984`.
    public let peer: String
    let token: String?
    let client: any HTTPTransport

    /// - Parameter trustedCertificates: a PEM file of certificates to trust for `https://`
    ///   peers (for a self-signed server certificate); nil uses the system's.
    public init(store: TaskStore, peer: String, token: String?, timeoutSeconds: Double = 30, trustedCertificates: String? = nil) {
        var curl = HTTPClient()
        curl.timeoutSeconds = timeoutSeconds
        curl.trustedCertificates = trustedCertificates
        self.init(store: store, peer: peer, token: token, transport: curl)
    }

    /// Exchanges through `transport` instead of the network (simulations, tests).
    @_spi(Engine) public init(store: TaskStore, peer: String, token: String?, transport: any HTTPTransport) {
        self.store = store
        self.peer = peer.hasSuffix("/") ? String(peer.dropLast()) : peer
        self.token = token
        client = transport
    }

    /// The largest pull answer taken: the 4 MiB the server aims at, one segment past it that
    /// may hold a single commit of the largest record (64 MiB), and 4 MiB for probes and framing.
    static let pullAnswerLimit = HTTPService.pullLimit + FormatConstants.maxRawPayload + (4 << 20)
    /// The largest push answer taken (JSON: a version vector, forks and problems).
    static let pushAnswerLimit = 4 << 20
    /// The largest changes-feed answer taken (every task changed since the cursor).
    static let feedAnswerLimit = 64 << 20

    var headers: [String: String] {
        var h = ["TaskLog-Protocol": HTTPService.protocolVersion]
        if let token { h["Authorization"] = "Bearer \(token)" }
        return h
    }

    func check(_ r: HTTPReply, _ url: String) throws(HTTPClientError) {
        switch r.status {
        case 200...299: return
        case 401: throw .unauthorised(url: url)
        case 404, 405, 409:
            throw .incompatible(url: url, reason: "HTTP \(r.status): \(errorMessage(r))")
        default: throw .failed(url: url, status: r.status, message: errorMessage(r))
        }
    }

    func errorMessage(_ r: HTTPReply) -> String {
        if let v = try? JSONParser.parse(r.body), case .string(let m)? = v["error"] { return m }
        return String(decoding: r.body.prefix(200), as: UTF8.self)
    }

    /// One full exchange in both directions.
    /// - Returns: what moved, and (in `cursor`) the peer's changes-feed cursor after it.
    public func sync() throws -> (report: SyncReport, cursor: String?) {
        var report = SyncReport()
        var (peerVersion, cursor) = try pull(&report)
        report.peerHeldOwnThrough = peerVersion[store.replica]
        let peerSettledForks = try push(after: peerVersion, probing: !report.forks.isEmpty, &report)
        if peerSettledForks {
            // The peer settled a fork this store's push showed it: fetch the outcome at once.
            (peerVersion, cursor) = try pull(&report)
        }
        return (report, cursor)
    }

    /// Pulls what this store lacks, in pieces while the peer says more remain.
    /// - Returns: the peer's version and changes-feed cursor.
    private func pull(_ report: inout SyncReport) throws -> (VersionVector, String?) {
        var peerVersion = VersionVector()
        var cursor: String?
        // Replicas whose logs must come from the start to settle a fork.
        var fromStart = Set<ReplicaID>()
        var askedFromStart = Set<ReplicaID>()
        while true {
            let url = peer + "/v1/replication/pull"
            var h = headers
            h["Content-Type"] = "application/json"
            var asking = try store.version
            for r in fromStart { asking[r] = 0 }
            let body = Array("{\"version\":\(VersionCoding.json(asking))}".utf8)
            let r = try client.send("POST", url, headers: h, body: body, timeout: nil, limit: Self.pullAnswerLimit)
            try check(r, url)
            guard r.headers["tasklog-protocol"] == HTTPService.protocolVersion,
                let v = r.headers["tasklog-version"].flatMap(VersionCoding.parseCursor)
            else { throw HTTPClientError.incompatible(url: url, reason: "the answer lacks the TaskLog headers") }
            peerVersion = v
            cursor = r.headers["tasklog-version"]
            let segments = try SegmentBundle.decode(r.body)
            let outcome = SegmentBundle.integrate(segments, into: store)
            report.operationsIn += outcome.operations
            report.bytesIn += r.body.count
            report.filesIn += segments.count
            report.skipped += outcome.problems.map { (path: url, reason: $0) }
            for var f in outcome.forks {
                f.source = peer
                report.note(f)
            }
            // A fork whose branches part before what arrived: ask for the replica from its start, once.
            fromStart = Set(outcome.needFromStart).subtracting(askedFromStart)
            askedFromStart.formUnion(fromStart)
            for r in outcome.needFromStart where !fromStart.contains(r) {
                report.skipped.append((path: url, reason: StoreError.forkNeedsEarlierOperations(replica: r, seq: 0).description))
            }
            if !fromStart.isEmpty { continue }
            // Stop when the peer has nothing more, or when a round made no progress.
            if r.headers["tasklog-more"] != "1" || segments.isEmpty || (outcome.operations == 0 && outcome.forks.isEmpty) { break }
        }
        return (peerVersion, cursor)
    }

    /// Pushes what the peer lacks, own and relayed, in bounded bodies.
    /// - Parameter probing: also send this store's last commit of each replica the peer holds
    ///   as much of (after settling a fork, so the peer notices it too).
    /// - Returns: whether the peer settled a fork.
    private func push(after peerVersion: VersionVector, probing: Bool, _ report: inout SyncReport) throws -> Bool {
        var sent = peerVersion
        var resent = Set<ReplicaID>()
        var settled = false
        var probes = probing
        while true {
            let (segments, ops, more) = try SegmentBundle.missing(from: store, after: sent, limit: HTTPService.pullLimit, probes: probes)
            probes = false
            if segments.isEmpty { break }
            let url = peer + "/v1/replication/push"
            var h = headers
            h["Content-Type"] = SegmentBundle.contentType
            let body = SegmentBundle.encode(segments)
            let r = try client.send("POST", url, headers: h, body: body, timeout: nil, limit: Self.pushAnswerLimit)
            if r.status == 422 {
                report.skipped.append((path: url, reason: "the peer could not use some operations: \(String(decoding: r.body, as: UTF8.self))"))
            } else {
                try check(r, url)
            }
            report.operationsOut += ops
            report.bytesOut += body.count
            report.filesOut += segments.count
            guard let v = try? JSONParser.parse(r.body), let now = VersionCoding.parse(v["version"]) else { break }
            if case .array(let forks)? = v["forks"] {
                for f in forks {
                    guard case .string(let replica)? = f["replica"], let id = ReplicaID(hex: replica), case .number(let seq)? = f["seq"],
                        case .bool(let keptThere)? = f["keptHeld"], case .string(let moved)? = f["movedTo"], let to = ReplicaID(hex: moved),
                        case .number(let count)? = f["movedOperations"]
                    else { continue }
                    // Told from this side: the branch held here is the one that arrived there.
                    var fork = ResolvedFork(replica: id, seq: UInt64(seq), keptHeld: !keptThere, movedTo: to, movedOperations: UInt64(count))
                    fork.source = "\(peer) (settled there)"
                    report.note(fork)
                    settled = true
                }
            }
            // The peer met a fork it cannot place without these replicas' logs from the start.
            var again = Set<ReplicaID>()
            if case .array(let list)? = v["fromStart"] {
                for case .string(let hex) in list { if let id = ReplicaID(hex: hex), !resent.contains(id) { again.insert(id) } }
            }
            if again.isEmpty && (!more || now == sent) { break }
            sent = now
            for id in again { sent[id] = 0 }
            resent.formUnion(again)
        }
        return settled
    }

    /// Waits (long poll) until the peer has changes after `cursor`, or `timeoutMs` passes.
    /// - Returns: the new cursor and whether anything changed.
    public func waitForChanges(after cursor: String?, timeoutMs: Int) throws(HTTPClientError) -> (cursor: String?, changed: Bool) {
        var url = peer + "/v1/changes?timeout=\(timeoutMs)"
        if let cursor { url += "&since=\(cursor)" }
        let r = try client.send("GET", url, headers: headers, body: nil, timeout: Double(timeoutMs) / 1000 + 10, limit: Self.feedAnswerLimit)
        try check(r, peer + "/v1/changes")
        guard let v = try? JSONParser.parse(r.body), case .string(let next)? = v["cursor"], case .array(let changes)? = v["changes"] else {
            throw .incompatible(url: url, reason: "the changes feed answered something else")
        }
        return (next, !changes.isEmpty)
    }
}
