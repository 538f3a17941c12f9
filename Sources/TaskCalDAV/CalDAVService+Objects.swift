@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// GET, PUT, DELETE and MOVE of tasks. A PUT becomes field writes: only what differs from
/// the task as stored is written, so concurrent edits of different fields all survive.
extension CalDAVService {
    func get(_ path: DAVPath) throws -> HTTPResponse {
        switch path {
        case .object(let list, let name):
            guard let m = try member(list: list, name: name) else { throw DAVRefusal(status: 404, message: "no task at \(path.href)") }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/calendar; charset=utf-8"), ("ETag", m.etag)], body: Array(m.data.utf8))
        case .collection(let list):
            let tasks = try tasks(of: list)
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/calendar; charset=utf-8")], body: Array(ICalendar.calendar(of: tasks).utf8))
        default:
            return Self.text(200, "TaskLog CalDAV: the task lists are under \(DAVPath.homeHref)")
        }
    }

    /// Checks `If-Match` and `If-None-Match` against the resource's current ETag (RFC 7232:
    /// If-Match compares strongly, so a weak ETag never matches; If-None-Match weakly).
    static func checkPreconditions(_ request: HTTPRequest, current: Member?) throws(DAVRefusal) {
        if let none = request.headers["if-none-match"], let current {
            if none.trimmingWhitespace == "*" || etags(none, weak: true).contains(current.etag) {
                throw DAVRefusal(status: 412, message: "a task already exists at \(current.href) (If-None-Match)")
            }
        }
        if let match = request.headers["if-match"] {
            guard let current else { throw DAVRefusal(status: 412, message: "no task exists here to match If-Match") }
            if match.trimmingWhitespace != "*" && !etags(match, weak: false).contains(current.etag) {
                throw DAVRefusal(
                    status: 412, message: "the task changed since ETag \(match) was read, or that ETag is weak; fetch it again, then retry")
            }
        }
    }

    /// The ETags of an If-Match or If-None-Match list: weak ones without their `W/` prefix
    /// when `weak` comparison is wanted, otherwise left out (they never match strongly).
    static func etags(_ header: String, weak: Bool) -> [String] {
        header.split(separator: ",").compactMap { e in
            let t = String(e).trimmingWhitespace
            guard t.hasPrefix("W/") else { return t }
            return weak ? String(t.dropFirst(2)) : nil
        }
    }

    func put(_ path: DAVPath, _ request: HTTPRequest) throws -> HTTPResponse {
        guard case .object(let list, let name) = path else { throw DAVRefusal(status: 405, message: "PUT a task to \(DAVPath.homeHref)<list>/<name>.ics") }
        let entry = try Self.entry(request.body)
        return try writing.withLock { _ in
            let current = try member(list: list, name: name)
            try Self.checkPreconditions(request, current: current)
            guard let id = entry.patch.id else { throw DAVRefusal(status: 400, message: "the VTODO has no UID") }
            if let current, current.task.id != id {
                throw DAVRefusal(status: 403, message: "the UID differs from the task's at \(path.href)", precondition: "<c:no-uid-conflict>\(href(current.href))</c:no-uid-conflict>")
            }
            let existing = try store.task(id)
            if current == nil, let other = existing, !other.isDeleted {
                let at = Member.href(of: other)
                throw DAVRefusal(status: 403, message: "a task with this UID is already at \(at)", precondition: "<c:no-uid-conflict>\(href(at))</c:no-uid-conflict>")
            }
            var patch = entry.patch(over: existing)
            patch.list = .some(list)
            if name != id.rawValue + ".ics" { patch.meta![Member.hrefKey] = name }
            let created = try store.apply([patch]).created == 1 || existing?.isDeleted == true
            onWrite()
            return HTTPResponse(status: created ? 201 : 204)
        }
    }

    /// The one task a PUT body states.
    static func entry(_ body: [UInt8]) throws(DAVRefusal) -> ICalendar.Entry {
        func invalid(_ e: InterchangeError) -> DAVRefusal {
            DAVRefusal(status: 400, message: e.description, precondition: "<c:valid-calendar-data/>")
        }
        let top: [ICalendarComponent]
        do {
            top = try ICalendarComponent.parse(String(decoding: body, as: UTF8.self))
        } catch {
            throw invalid(error)
        }
        guard top.count == 1, top[0].name == "VCALENDAR" else {
            throw DAVRefusal(status: 400, message: "the body must be one VCALENDAR", precondition: "<c:valid-calendar-data/>")
        }
        guard top[0].components.contains(where: { $0.name == "VTODO" }) else {
            throw DAVRefusal(status: 403, message: "task lists hold VTODOs only", precondition: "<c:supported-calendar-component/>")
        }
        let entries: [ICalendar.Entry]
        do {
            entries = try ICalendar.entries(of: top[0])
        } catch {
            throw invalid(error)
        }
        guard entries.count == 1 else {
            throw DAVRefusal(status: 400, message: "a calendar object holds one UID, this one \(entries.count)", precondition: "<c:valid-calendar-object-resource/>")
        }
        let tags = entries[0].patch.tags?.count ?? 0
        guard tags <= DAVLimits.tagsPerTask else {
            throw DAVRefusal(status: 413, message: "a task takes at most \(DAVLimits.tagsPerTask) CATEGORIES values, this one \(tags)")
        }
        return entries[0]
    }

    func delete(_ path: DAVPath, _ request: HTTPRequest) throws -> HTTPResponse {
        if case .collection(let list) = path { return try deleteCollection(list) }
        guard case .object(let list, let name) = path else {
            throw DAVRefusal(status: 403, message: "only tasks and lists can be deleted")
        }
        return try writing.withLock { _ in
            guard let current = try member(list: list, name: name) else { throw DAVRefusal(status: 404, message: "no task at \(path.href)") }
            try Self.checkPreconditions(request, current: current)
            try store.remove([current.task.id])
            onWrite()
            return HTTPResponse(status: 204)
        }
    }

    /// DELETE of a list's collection removes every task in it (each can be restored, as after
    /// `tasklog rm`). The collection of tasks with no list cannot be deleted.
    func deleteCollection(_ list: String?) throws -> HTTPResponse {
        guard let list else {
            throw DAVRefusal(status: 403, message: "the collection of tasks with no list cannot be deleted; DELETE each task")
        }
        return try writing.withLock { _ in
            let ids = try tasks(of: list).map(\.id)
            let made = try collectionProperties.entry(list).made
            guard made || !ids.isEmpty else { throw DAVRefusal(status: 404, message: "no list \(list)") }
            try collectionProperties.replace(list, with: .init())
            if !ids.isEmpty {
                try store.remove(ids)
                onWrite()
            }
            return HTTPResponse(status: 204)
        }
    }

    /// Whether a URL's authority names the server the request's `Host` header does (a
    /// default port may be left out on either side).
    static func isThisServer(_ authority: String, host: String?) -> Bool {
        func normal(_ a: String) -> String {
            let lower = a.lowercased()
            for port in [":80", ":443"] where lower.hasSuffix(port) { return String(lower.dropLast(port.count)) }
            return lower
        }
        guard let host else { return false }
        return normal(authority) == normal(host.trimmingWhitespace)
    }

    /// MOVE to another collection changes the task's list (and its name, if given another).
    func move(_ path: DAVPath, _ request: HTTPRequest) throws -> HTTPResponse {
        guard case .object(let list, let name) = path else { throw DAVRefusal(status: 403, message: "only tasks can be moved") }
        guard let destination = request.headers["destination"].map(DAVPath.split),
            case .object(let toList, let toName)? = DAVPath(rawPath: destination.path)
        else { throw DAVRefusal(status: 400, message: "Destination must name \(DAVPath.homeHref)<list>/<name>.ics") }
        if let authority = destination.authority, !Self.isThisServer(authority, host: request.headers["host"]) {
            throw DAVRefusal(status: 502, message: "Destination is on another server (\(authority)); MOVE only within this one")
        }
        return try writing.withLock { _ in
            guard let current = try member(list: list, name: name) else { throw DAVRefusal(status: 404, message: "no task at \(path.href)") }
            try Self.checkPreconditions(request, current: current)
            if let there = try member(list: toList, name: toName), there.task.id != current.task.id {
                throw DAVRefusal(status: 412, message: "a task already exists at \(there.href)")
            }
            var patch = TaskPatch(id: current.task.id)
            patch.list = .some(toList)
            var meta = current.task.meta
            meta[Member.hrefKey] = toName == current.task.id.rawValue + ".ics" ? nil : toName
            patch.meta = meta
            try store.apply([patch])
            onWrite()
            return HTTPResponse(status: 201, headers: [("Location", DAVPath.object(list: toList, name: toName).href)])
        }
    }
}
