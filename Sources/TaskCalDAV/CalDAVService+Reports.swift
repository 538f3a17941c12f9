import BoundedXML
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// REPORT: `calendar-query`, `calendar-multiget` and `sync-collection` (RFC 6578), the last
/// driven by the log's version: what changed since a token is what its commits touched.
extension CalDAVService {
    func report(_ path: DAVPath, _ request: HTTPRequest, _ budget: Budget) throws -> HTTPResponse {
        guard let body = try Self.xml(request) else { throw DAVRefusal(status: 400, message: "REPORT needs a body") }
        let wanted = Wanted(body)
        if body.is(NS.caldav, "calendar-multiget") { return try multiget(body, wanted: wanted, budget) }
        guard case .collection(let list) = path else {
            throw DAVRefusal(status: 403, message: "\(body.name) runs on a task list collection, not \(path.href)")
        }
        if body.is(NS.caldav, "calendar-query") { return try query(list, body, wanted: wanted, budget) }
        if body.is(NS.dav, "sync-collection") { return try sync(list, body, wanted: wanted, budget) }
        throw DAVRefusal(status: 403, message: "unsupported report \(body.name)", precondition: "<d:supported-report/>")
    }

    func query(_ list: String?, _ body: XMLTree, wanted: Wanted, _ budget: Budget) throws -> HTTPResponse {
        let filter = try CalendarFilter(body.child(NS.caldav, "filter"))
        var m = Multistatus()
        for member in try existingMembers(of: list) {
            try budget.check(m)
            guard filter.matches(member) else { continue }
            answer(&m, href: member.href, properties: properties(of: member), wanted: wanted)
        }
        return Self.multistatus(m)
    }

    /// Answers each href once, in the order first named: its properties, or 404. A missing
    /// href costs one index lookup.
    func multiget(_ body: XMLTree, wanted: Wanted, _ budget: Budget) throws -> HTTPResponse {
        let hrefs = body.all(NS.dav, "href")
        guard hrefs.count <= DAVLimits.hrefsPerMultiget else {
            throw DAVRefusal(
                status: 413, message: "a calendar-multiget names at most \(DAVLimits.hrefsPerMultiget) hrefs, this one \(hrefs.count); split it")
        }
        var m = Multistatus()
        var answered = Set<String>()
        let turning = try membering()
        for href in hrefs {
            let path = DAVPath.path(ofHref: href.text)
            guard answered.insert(path).inserted else { continue }
            try budget.check(m)
            if case .object(let list, let name)? = DAVPath(rawPath: path), let member = try member(list: list, name: name, turning: turning) {
                answer(&m, href: member.href, properties: properties(of: member), wanted: wanted)
            } else {
                m.add(href: path, status: "404 Not Found")
            }
        }
        return Self.multistatus(m)
    }

    func sync(_ list: String?, _ body: XMLTree, wanted: Wanted, _ budget: Budget) throws -> HTTPResponse {
        let given = body.child(NS.dav, "sync-token")?.text.trimmingWhitespace ?? ""
        let member = try membering()
        let version = member.version
        let token = "urn:tasklog:sync:" + VersionCoding.cursor(version)
        var m = Multistatus()
        if given.isEmpty {
            for member in try existingMembers(of: list) {
                try budget.check(m)
                answer(&m, href: member.href, properties: properties(of: member), wanted: wanted)
            }
        } else {
            guard given.hasPrefix("urn:tasklog:sync:"), let since = VersionCoding.parseCursor(String(given.dropFirst(17))) else {
                throw DAVRefusal(status: 403, message: "the sync token is not one this server gave", precondition: "<d:valid-sync-token/>")
            }
            for id in try touched(since: since, upTo: version) {
                try budget.check(m)
                let t = try store.task(id)
                if let t, !t.isDeleted, t.list == list {
                    let found = member(t)
                    answer(&m, href: found.href, properties: properties(of: found), wanted: wanted)
                } else {
                    let name = t?.meta[Member.hrefKey] ?? id.rawValue + ".ics"
                    m.add(href: DAVPath.object(list: list, name: name).href, status: "404 Not Found")
                }
            }
        }
        m.append("<d:sync-token>\(XMLText.escaped(token))</d:sync-token>")
        return Self.multistatus(m)
    }

    /// The tasks that commits after `since` touched, each once, in log order.
    func touched(since: VersionVector, upTo version: VersionVector) throws -> [TaskID] {
        var ids: [TaskID] = []
        var seen = Set<TaskID>()
        for (replica, held) in version.sortedEntries where held > since[replica] {
            for c in try store.commits(of: replica, after: since[replica]) {
                for id in c.operations.compactMap(\.task) where seen.insert(id).inserted { ids.append(id) }
            }
        }
        return ids
    }
}
