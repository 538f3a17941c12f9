#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
import CSodium
import Dispatch
import Synchronization
@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// The HTTP peer's endpoints (Spec/sync-http.md): REST for tasks, the changes feed, and the
/// replication endpoints that `tasklog sync http://…` uses. Every write goes through the
/// store's log, exactly as the CLI's do.
@_spi(Engine) public final class HTTPService: Sendable {
    /// The protocol version spoken on the replication endpoints.
    public static let protocolVersion = "1"
    /// The most a pull answer carries before it says more remain.
    static let pullLimit = 4 << 20
    /// The largest replication push body: a batch of about ``pullLimit`` plus one piece
    /// holding a single commit as large as a record may be.
    static let pushLimit = pullLimit + FormatConstants.maxRawPayload + (4 << 20)
    /// The largest REST body.
    static let restLimit = 1 << 20

    let store: TaskStore
    /// BLAKE2b of the token, or nil for guest mode.
    let tokenDigest: [UInt8]?
    let generation = Atomic<UInt64>(0)
    let stopping = StopFlag()

    /// Orders of the list beyond the store's own, by the `sort` value that asks for them.
    let extraOrders: [String: TaskOrdering]

    /// - Parameter orders: list orders by name, for `GET /v1/tasks?sort=<name>` (such as an
    ///   urgency ranking from a planning module); the store's own keys cannot be replaced.
    public init(store: TaskStore, token: String?, orders: [String: TaskOrdering] = [:]) {
        self.store = store
        extraOrders = orders
        tokenDigest = token.map(HTTPService.digest)
        _ = sodium_init()
    }

    static func digest(_ s: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var bytes = Array(s.utf8)
        crypto_generichash(&out, 32, &bytes, UInt64(bytes.count), nil, 0)
        return out
    }

    /// Server limits suited to these endpoints.
    public var limits: HTTPServer.Limits {
        var l = HTTPServer.Limits()
        l.maxBody = { method, path in path.hasPrefix("/v1/replication/") ? HTTPService.pushLimit : HTTPService.restLimit }
        l.authorise = { [self] _, _, header in authorised(header: header) }
        return l
    }

    /// Watches the store's files so long polls wake for writes by any process; runs until
    /// ``shutdown()``.
    public func startWatching() {
        let logs = store.path + "/logs"
        DispatchQueue.global().async { [self] in
            let watcher = FileWatcher(roots: [logs], pollInterval: 0.5)
            var seen = try? store.version
            while watcher.wait(shouldStop: { stopping.isSet }) {
                // Compare versions rather than count what this read applied: another request
                // may have read the new commits first.
                let now = try? store.version
                if now != seen {
                    seen = now
                    bump()
                }
            }
        }
    }

    /// Ends long polls promptly (before the server stops).
    public func shutdown() { stopping.set() }

    /// Wakes the long polls of the changes feed (after a write by another front end).
    public func bump() { generation.add(1, ordering: .releasing) }

    /// The password of HTTP Basic credentials (`base64(user:password)`).
    static func basicPassword(_ encoded: String) -> String? {
        var out = [UInt8](repeating: 0, count: encoded.utf8.count)
        var length = 0
        let ok = encoded.withCString { sodium_base642bin(&out, out.count, $0, strlen($0), nil, &length, nil, sodium_base64_VARIANT_ORIGINAL) }
        guard ok == 0, let colon = out[..<length].firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(validating: out[(colon + 1)..<length], as: UTF8.self)
    }

    // MARK: Dispatch

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard authorised(request) else { return .unauthorised(path: request.path) }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch (request.method, parts.count > 1 ? Array(parts.dropFirst()) : []) {
        case ("GET", ["v1", "tasks"]): return listTasks(request)
        case (_, ["v1", "tasks"]): return .error(405, "use GET on /v1/tasks")
        case (let method, let p) where p.count == 3 && p[0] == "v1" && p[1] == "tasks":
            guard let id = TaskID(p[2]) else { return .error(400, "'\(p[2])' is not a valid task id") }
            switch method {
            case "GET": return getTask(id)
            case "PUT": return putTask(id, request.body)
            case "PATCH": return patchTask(id, request.body)
            case "DELETE": return deleteTask(id)
            default: return .error(405, "use GET, PUT, PATCH or DELETE on /v1/tasks/{id}")
            }
        case ("GET", ["v1", "top"]): return topTasks(request)
        case ("GET", ["v1", "today"]): return todayView(request)
        case (_, ["v1", "today"]): return .error(405, "use GET on /v1/today")
        case ("POST", ["v1", "parse"]): return parseQuick(request)
        case (_, ["v1", "parse"]): return .error(405, "use POST on /v1/parse")
        case (_, ["v1", "top"]): return .error(405, "use GET on /v1/top")
        case ("GET", ["v1", "changes"]): return changes(request)
        case (_, ["v1", "changes"]): return .error(405, "use GET on /v1/changes")
        case ("POST", ["v1", "replication", "pull"]): return pull(request)
        case ("POST", ["v1", "replication", "push"]): return push(request)
        case (_, ["v1", "replication", "pull"]), (_, ["v1", "replication", "push"]):
            return .error(405, "use POST")
        default: return .error(404, "no such endpoint: \(request.method) \(request.path)")
        }
    }

    func authorised(_ request: HTTPRequest) -> Bool { authorised(header: request.headers["authorization"]) }

    /// Whether an `Authorization` header carries the token: as a Bearer token, or as the
    /// password of HTTP Basic with any user name. The scheme is case-insensitive; the
    /// comparison takes the same time whatever the token given.
    public func authorised(header value: String?) -> Bool {
        guard let expected = tokenDigest else { return true }
        guard let value, value.count > 6 else { return false }
        let token: String
        switch value.prefix(6).lowercased() {
        case "bearer" where value.count > 7: token = value.dropFirst(7).trimmingCharacters(in: " \t")
        case "basic ": guard let password = Self.basicPassword(value.dropFirst(6).trimmingCharacters(in: " \t")) else { return false }
            token = password
        default: return false
        }
        let given = HTTPService.digest(token)
        return given.withUnsafeBytes { g in expected.withUnsafeBytes { e in sodium_memcmp(g.baseAddress, e.baseAddress, 32) == 0 } }
    }

    // MARK: REST

    static func json(_ status: Int, _ write: (inout JSONWriter) -> Void) -> HTTPResponse {
        var w = JSONWriter()
        write(&w)
        w.raw("\n")
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: w.bytes)
    }

    static func failure(_ e: Error) -> HTTPResponse {
        if case StoreError.invalidArgument(let m) = e { return .error(400, m) }
        if case StoreError.circularLink = e { return .error(400, "\(e)") }
        return .error(500, "\(e)")
    }

    /// The widget view: the most urgent open tasks, in `top` order (Spec/sync-http.md).
    func topTasks(_ request: HTTPRequest) -> HTTPResponse {
        var n = 2
        if let text = request.query["n"] {
            guard let v = Int(text), (0...Self.topLimit).contains(v) else { return .error(400, "'n' must be a whole number from 0 to \(Self.topLimit)") }
            n = v
        }
        let now = Int64(Posix.wallClockMilliseconds())
        var today = LocalZone().civil(milliseconds: now).days
        if let text = request.query["today"] {
            guard let days = CivilTime.parseDate(Substring(text)) else { return .error(400, "'today' must be the client's date as YYYY-MM-DD") }
            today = days
        }
        do {
            let tasks = try Urgency.top(n, in: store, now: now, today: today)
            return Self.json(200) { $0.taskArray(tasks) }
        } catch {
            return Self.failure(error)
        }
    }

    static let topLimit = 1000

    func live(_ id: TaskID) throws -> TaskItem? {
        guard let t = try store.task(id), !t.isDeleted else { return nil }
        return t
    }

    func getTask(_ id: TaskID) -> HTTPResponse {
        do {
            guard let t = try live(id) else { return .error(404, "no task \(id)") }
            return Self.json(200) { $0.task(t) }
        } catch {
            return Self.failure(error)
        }
    }

    func patch(from body: [UInt8], id: TaskID) -> Result<TaskPatch, HTTPResponseBox> {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            return .failure(HTTPResponseBox(.error(400, "\(error)")))
        }
        do {
            var p = try TaskPatch(json: value)
            if let given = p.id, given != id {
                return .failure(HTTPResponseBox(.error(400, "the body's id '\(given)' differs from the URL's '\(id)'")))
            }
            p.id = id
            return .success(p)
        } catch {
            return .failure(HTTPResponseBox(.error(400, error.description)))
        }
    }

    /// A PUT carries the task form, or `{"quick": text, "at": ms?}` read as a quick add.
    func putTask(_ id: TaskID, _ body: [UInt8]) -> HTTPResponse {
        let asked: Result<TaskPatch, HTTPResponseBox>
        if let value = try? JSONParser.parse(body), value["quick"] != nil {
            asked = quickAdd(from: value, key: "quick").map { Self.patch($0, id: id) }
        } else {
            asked = patch(from: body, id: id)
        }
        switch asked {
        case .failure(let r): return r.response
        case .success(let p):
            do {
                let created = try store.apply([p]).created == 1
                bump()
                let t = try store.task(id)!
                return Self.json(created ? 201 : 200) { $0.task(t) }
            } catch {
                return Self.failure(error)
            }
        }
    }

    func patchTask(_ id: TaskID, _ body: [UInt8]) -> HTTPResponse {
        switch patch(from: body, id: id) {
        case .failure(let r): return r.response
        case .success(let p):
            do {
                guard try live(id) != nil else { return .error(404, "no task \(id)") }
                try store.apply([p])
                bump()
                return Self.json(200) { $0.task(try! store.task(id)!) }
            } catch {
                return Self.failure(error)
            }
        }
    }

    func deleteTask(_ id: TaskID) -> HTTPResponse {
        do {
            guard try live(id) != nil else { return .error(404, "no task \(id)") }
            try store.remove([id])
            bump()
            return HTTPResponse(status: 204)
        } catch {
            return Self.failure(error)
        }
    }

    // MARK: Changes feed

    func changes(_ request: HTTPRequest) -> HTTPResponse {
        var since = VersionVector()
        if let text = request.query["since"] {
            guard let v = VersionCoding.parseCursor(text) else { return .error(400, "'since' is not a valid cursor (take it from an earlier answer)") }
            since = v
        }
        var timeoutMs = 30_000
        if let text = request.query["timeout"] {
            guard let t = Int(text), t >= 0 else { return .error(400, "'timeout' must be milliseconds ≥ 0") }
            timeoutMs = min(t, 120_000)
        }
        let deadline = FileWatcher.now() + Double(timeoutMs) / 1000
        while true {
            let seen = generation.load(ordering: .acquiring)
            do {
                let version = try store.version
                var ids: [TaskID] = []
                var known = Set<TaskID>()
                for (replica, held) in version.sortedEntries where held > since[replica] {
                    for c in try store.commits(of: replica, after: since[replica]) {
                        for id in c.operations.compactMap(\.task) where known.insert(id).inserted { ids.append(id) }
                    }
                }
                if !ids.isEmpty || FileWatcher.now() >= deadline || stopping.isSet {
                    let tasks = try ids.compactMap { try store.task($0) }
                    let cursor = VersionCoding.cursor(version)
                    return Self.json(200) { w in
                        w.raw("{\"changes\":[")
                        for (i, t) in tasks.enumerated() {
                            if i > 0 { w.raw(",") }
                            w.raw("\n")
                            w.change(t)
                        }
                        w.raw(tasks.isEmpty ? "],\"cursor\":" : "\n],\"cursor\":")
                        w.string(cursor)
                        w.raw("}")
                    }
                }
            } catch {
                return Self.failure(error)
            }
            while generation.load(ordering: .acquiring) == seen && FileWatcher.now() < deadline && !stopping.isSet {
                usleep(5_000)
            }
        }
    }

    // MARK: Replication

    func checkProtocol(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.headers["tasklog-protocol"] == Self.protocolVersion else {
            return .error(409, "this peer speaks replication protocol \(Self.protocolVersion); upgrade the older side")
        }
        return nil
    }

    func pull(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = checkProtocol(request) { return refusal }
        guard let body = try? JSONParser.parse(request.body), let have = VersionCoding.parse(body["version"]) else {
            return .error(400, "expected {\"version\": {\"<replica>\": seq, …}}")
        }
        do {
            let version = try store.version
            let (segments, _, more) = try SegmentBundle.missing(from: store, after: have, limit: Self.pullLimit, probes: true)
            return HTTPResponse(
                status: 200,
                headers: [("Content-Type", SegmentBundle.contentType), ("TaskLog-Protocol", Self.protocolVersion),
                          ("TaskLog-Version", VersionCoding.cursor(version)), ("TaskLog-More", more ? "1" : "0")],
                body: SegmentBundle.encode(segments))
        } catch {
            return Self.failure(error)
        }
    }

    func push(_ request: HTTPRequest) -> HTTPResponse {
        if let refusal = checkProtocol(request) { return refusal }
        let segments: [[UInt8]]
        do {
            segments = try SegmentBundle.decode(request.body)
        } catch {
            return .error(400, error.description)
        }
        let outcome = SegmentBundle.integrate(segments, into: store)
        if outcome.operations > 0 || !outcome.forks.isEmpty { bump() }
        do {
            let version = try store.version
            return Self.json(outcome.problems.isEmpty ? 200 : 422) { w in
                w.raw("{\"received\":")
                w.number(outcome.operations)
                w.raw(",\"version\":")
                w.raw(json: VersionCoding.json(version))
                w.raw(",\"forks\":[")
                for (i, f) in outcome.forks.enumerated() {
                    if i > 0 { w.raw(",") }
                    w.raw(json: "{\"replica\":\"\(f.replica.hex)\",\"seq\":\(f.seq),\"keptHeld\":\(f.keptHeld),\"movedTo\":\"\(f.movedTo.hex)\",\"movedOperations\":\(f.movedOperations)}")
                }
                w.raw("]")
                for (key, list) in [("problems", outcome.problems), ("fromStart", outcome.needFromStart.map(\.hex))] {
                    w.raw(json: ",\"\(key)\":[")
                    for (i, p) in list.enumerated() {
                        if i > 0 { w.raw(",") }
                        w.string(p)
                    }
                    w.raw("]")
                }
                w.raw("}")
            }
        } catch {
            return Self.failure(error)
        }
    }
}

/// A response carried through `Result` (which needs an Error).
struct HTTPResponseBox: Error {
    var response: HTTPResponse
    init(_ r: HTTPResponse) { response = r }
}
