import BoundedXML
@_spi(Engine) import CRDTCore
import Synchronization
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// The CalDAV server inside `tasklog serve` (RFC 4791, RFC 6578; Spec/interop.md): each list
/// is a VTODO collection, each task a calendar object. Writes go through the store's log as
/// field writes, exactly as the CLI's do. Authentication is the HTTP service's.
@_spi(Engine) public final class CalDAVService: Sendable {
    let store: TaskStore
    /// Called after every write, to wake the HTTP service's long polls.
    let onWrite: @Sendable () -> Void
    /// Lists made with MKCALENDAR, and the properties clients set on collections.
    let collectionProperties: CollectionProperties
    /// Holds a write's precondition check and the write together.
    let writing = Mutex(())
    /// Each task's calendar object, kept across requests.
    let renders = RenderCache()

    public init(store: TaskStore, onWrite: @escaping @Sendable () -> Void) {
        self.store = store
        self.onWrite = onWrite
        collectionProperties = CollectionProperties(store: store)
    }

    /// Whether a request is for this server: anything under `/dav/` or `/.well-known/caldav`,
    /// and PROPFIND or OPTIONS on `/` (clients discover from the root URL).
    public static func handles(_ request: HTTPRequest) -> Bool {
        let p = request.path
        return p == "/dav" || p.hasPrefix("/dav/") || p.hasPrefix("/.well-known/caldav")
            || (p == "/" && ["PROPFIND", "OPTIONS"].contains(request.method))
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        if request.path.hasPrefix("/.well-known/caldav") {
            return HTTPResponse(status: 301, headers: [("Location", DAVPath.root.href)])
        }
        guard let path = DAVPath(rawPath: request.rawPath) else { return Self.text(404, "no such CalDAV resource: \(request.path)") }
        let budget = Budget()
        do {
            switch request.method {
            case "OPTIONS": return options()
            case "PROPFIND": return try propfind(path, request, budget)
            case "PROPPATCH": return try proppatch(path, request)
            case "REPORT": return try report(path, request, budget)
            case "GET", "HEAD": return try get(path)
            case "PUT": return try put(path, request)
            case "DELETE": return try delete(path, request)
            case "MOVE": return try move(path, request)
            case "MKCALENDAR", "MKCOL": return try makeCollection(path, request)
            default: return Self.text(405, "\(request.method) is not supported on CalDAV resources")
            }
        } catch let refusal as DAVRefusal {
            return refusal.response
        } catch {
            return Self.text(500, "\(error)")
        }
    }

    func options() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [
            ("DAV", "1, 3, calendar-access, extended-mkcol"),
            ("Allow", "OPTIONS, GET, HEAD, PUT, DELETE, MOVE, PROPFIND, PROPPATCH, REPORT, MKCALENDAR"),
        ])
    }

    static func text(_ status: Int, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array((message + "\n").utf8))
    }

    static func multistatus(_ m: Multistatus) -> HTTPResponse {
        HTTPResponse(status: 207, headers: [("Content-Type", "application/xml; charset=utf-8")], body: m.bytes)
    }

    /// The request body as XML, or nil when it is empty.
    static func xml(_ request: HTTPRequest) throws(DAVRefusal) -> XMLTree? {
        guard request.body.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return nil }
        do {
            return try XMLTree.parse(request.body, bounds: .request)
        } catch {
            throw DAVRefusal(status: error.isOverBound ? 413 : 400, message: error.description)
        }
    }

    // MARK: Members

    /// A task as a calendar object: its name in its collection and its rendering.
    struct Member {
        var task: TaskItem
        var rendering: RenderCache.Rendering

        /// The meta key of a name a client chose other than `<id>.ics`.
        static let hrefKey = "ical.href"

        var data: String { rendering.data }
        var etag: String { rendering.etag }
        var name: String { Self.name(of: task) }
        var href: String { rendering.href }
        static func name(of task: TaskItem) -> String { task.meta[hrefKey] ?? task.id.rawValue + ".ics" }
        static func href(of task: TaskItem) -> String { DAVPath.object(list: task.list, name: name(of: task)).href }
    }

    /// Turns tasks read after it into members; made once per request, after any write.
    struct Members {
        let cache: RenderCache
        let version: VersionVector
        func callAsFunction(_ task: TaskItem) -> Member {
            Member(task: task, rendering: cache.rendering(of: task, refreshedTo: version))
        }
    }

    /// Brings the render cache up to the store's version.
    func membering() throws -> Members {
        let version = try store.version
        let reader = RenderCache.Reader(
            touched: { try self.touched(since: $0, upTo: version) }, task: { try self.store.task($0) },
            all: { try self.store.tasks(TaskQuery(status: .all)) })
        try renders.refresh(to: version, reader: reader)
        return Members(cache: renders, version: version)
    }

    /// The live tasks of one collection, each rendered only when reached (so a request past
    /// its budget stops rendering).
    func members(of list: String?) throws -> LazyMapSequence<[TaskItem], Member> {
        let member = try membering()
        return try tasks(of: list).lazy.map(member.callAsFunction)
    }

    /// The live tasks of one collection, unrendered.
    func tasks(of list: String?) throws -> [TaskItem] { try store.tasks(TaskQuery(status: .all)).filter { $0.list == list } }

    /// The live tasks of a collection that exists: the one for tasks with no list, a list of a
    /// live task, or one made with MKCALENDAR. Otherwise 404.
    func existingMembers(of list: String?) throws -> LazyMapSequence<[TaskItem], Member> {
        let found = try members(of: list)
        guard let list, found.isEmpty, try !collectionProperties.entry(list).made else { return found }
        throw DAVRefusal(status: 404, message: "no list '\(list)': put a task into it, or make it with MKCALENDAR")
    }

    /// The task at `name` in a collection, if any: one lookup in the render cache's index,
    /// then the task itself, so a missing name costs nothing however large other tasks are.
    /// `turning` may be given when a request looks up many names, so the cache is refreshed once.
    func member(list: String?, name: String, turning given: Members? = nil) throws -> Member? {
        let member = try given ?? membering()
        guard let id = renders.task(at: RenderCache.Place(list: list, name: name)), let t = try store.task(id), !t.isDeleted,
            RenderCache.Place(of: t) == RenderCache.Place(list: list, name: name)
        else { return nil }
        return member(t)
    }

    /// Every collection: one per list of a live task or made with MKCALENDAR, and the one
    /// for tasks with no list.
    func collections() throws -> [String?] {
        var lists = Set(try store.tasks(TaskQuery(status: .all)).compactMap(\.list))
        lists.formUnion(try collectionProperties.madeLists())
        return [nil] + lists.sorted().map { Optional($0) }
    }

    /// The collections' sync token and ctag: the store's version as a cursor.
    func syncToken() throws -> String { "urn:tasklog:sync:" + VersionCoding.cursor(try store.version) }
}

/// A request refused with a status and a one-line reason (or a CalDAV precondition).
struct DAVRefusal: Error {
    var status: Int
    var message: String
    /// A precondition element (`c:no-uid-conflict`…), sent as a DAV:error body.
    var precondition: String?

    init(status: Int, message: String, precondition: String? = nil) {
        self.status = status
        self.message = message
        self.precondition = precondition
    }

    var response: HTTPResponse {
        guard let precondition else { return CalDAVService.text(status, message) }
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:error xmlns:d=\"DAV:\" xmlns:c=\"urn:ietf:params:xml:ns:caldav\">"
            + precondition + "<d:responsedescription>" + XMLText.escaped(message) + "</d:responsedescription></d:error>\n"
        return HTTPResponse(status: status, headers: [("Content-Type", "application/xml; charset=utf-8")], body: Array(body.utf8))
    }
}
