import BoundedXML
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskSyncHTTP

/// PROPFIND and PROPPATCH: the properties of the root, the principal, the calendar home,
/// each collection and each task.
extension CalDAVService {
    static let calendarData = PropertyName(NS.caldav, "calendar-data")

    /// What a PROPFIND or REPORT asks for: named properties, or all (`allprop`).
    enum Wanted {
        case all
        case named([PropertyName])

        init(_ body: XMLTree?) {
            guard let body, let prop = body.child(NS.dav, "prop") else {
                self = .all
                return
            }
            self = .named(prop.children.map { PropertyName($0.namespace, $0.name) })
        }
    }

    func propfind(_ path: DAVPath, _ request: HTTPRequest, _ budget: Budget) throws -> HTTPResponse {
        let wanted = Wanted(try Self.xml(request))
        let depth = request.headers["depth"] ?? "1"
        var m = Multistatus()
        let token = try syncToken()
        switch path {
        case .root, .principal:
            answer(&m, href: path.href, properties: try properties(of: path, token: token), wanted: wanted)
        case .home:
            answer(&m, href: path.href, properties: try properties(of: path, token: token), wanted: wanted)
            if depth != "0" {
                for list in try collections() {
                    let c = DAVPath.collection(list: list)
                    answer(&m, href: c.href, properties: try properties(of: c, token: token), wanted: wanted)
                }
            }
        case .collection(let list):
            let members = try existingMembers(of: list)
            answer(&m, href: path.href, properties: try properties(of: path, token: token), wanted: wanted)
            if depth != "0" {
                for member in members {
                    try budget.check(m)
                    answer(&m, href: member.href, properties: properties(of: member), wanted: wanted)
                }
            }
        case .object(let list, let name):
            guard let member = try member(list: list, name: name) else { throw DAVRefusal(status: 404, message: "no task at \(path.href)") }
            answer(&m, href: member.href, properties: properties(of: member), wanted: wanted)
        }
        return Self.multistatus(m)
    }

    /// Adds one resource: the wanted properties it has, and those it lacks.
    func answer(_ m: inout Multistatus, href: String, properties: [PropertyName: String], wanted: Wanted) {
        switch wanted {
        case .all:
            m.add(href: href, found: properties.filter { $0.key != Self.calendarData }.sorted { $0.key.name < $1.key.name }, missing: [])
        case .named(let names):
            m.add(href: href, found: names.compactMap { n in properties[n].map { (n, $0) } }, missing: names.filter { properties[$0] == nil })
        }
    }

    func properties(of path: DAVPath, token: String) throws -> [PropertyName: String] {
        var p: [PropertyName: String] = [
            PropertyName(NS.dav, "current-user-principal"): href(DAVPath.principalHref),
            PropertyName(NS.dav, "principal-URL"): href(DAVPath.principalHref),
            PropertyName(NS.caldav, "calendar-home-set"): href(DAVPath.homeHref),
            PropertyName(NS.dav, "current-user-privilege-set"): Self.privileges,
            PropertyName(NS.dav, "owner"): href(DAVPath.principalHref),
        ]
        let resourceType = PropertyName(NS.dav, "resourcetype")
        let name = PropertyName(NS.dav, "displayname")
        switch path {
        case .root:
            p[resourceType] = "<d:collection/>"
        case .principal:
            p[resourceType] = "<d:collection/><d:principal/>"
            p[name] = "TaskLog"
            p[PropertyName(NS.caldav, "calendar-user-address-set")] = href("urn:tasklog:owner")
        case .home:
            p[resourceType] = "<d:collection/>"
            p[name] = "Task lists"
        case .collection(let list):
            p[resourceType] = "<d:collection/><c:calendar/>"
            p[name] = XMLText.escaped(list ?? "Tasks")
            p[PropertyName(NS.caldav, "supported-calendar-component-set")] = "<c:comp name=\"VTODO\"/>"
            p[PropertyName(NS.caldav, "supported-calendar-data")] = "<c:calendar-data content-type=\"text/calendar\" version=\"2.0\"/>"
            p[PropertyName(NS.calendarServer, "getctag")] = XMLText.escaped(token)
            p[PropertyName(NS.dav, "sync-token")] = XMLText.escaped(token)
            p[PropertyName(NS.dav, "supported-report-set")] = ["calendar-query", "calendar-multiget"].map {
                "<d:supported-report><d:report><c:\($0)/></d:report></d:supported-report>"
            }.joined() + "<d:supported-report><d:report><d:sync-collection/></d:report></d:supported-report>"
            for (key, value) in try collectionProperties.entry(list).values { p[key] = XMLText.escaped(value) }
        case .object: break
        }
        return p
    }

    func properties(of member: Member) -> [PropertyName: String] {
        [
            PropertyName(NS.dav, "resourcetype"): "",
            PropertyName(NS.dav, "getetag"): member.rendering.xmlETag,
            PropertyName(NS.dav, "getcontenttype"): "text/calendar; charset=utf-8; component=VTODO",
            PropertyName(NS.dav, "getcontentlength"): String(member.data.utf8.count),
            PropertyName(NS.dav, "displayname"): XMLText.escaped(member.task.title),
            PropertyName(NS.dav, "current-user-privilege-set"): Self.privileges,
            Self.calendarData: member.rendering.xmlData,
        ]
    }

    func href(_ h: String) -> String { "<d:href>\(XMLText.escaped(h))</d:href>" }

    static let privileges = ["read", "write", "write-properties", "write-content", "bind", "unbind", "read-current-user-privilege-set"]
        .map { "<d:privilege><d:\($0)/></d:privilege>" }.joined()
}
