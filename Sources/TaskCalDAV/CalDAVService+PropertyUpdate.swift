import BoundedXML
@_spi(Engine) import TaskSyncHTTP

/// PROPPATCH (RFC 4918 9.2) and MKCALENDAR with properties (RFC 4791 5.3.1): a collection's
/// display name, description, colour and order, kept by ``CollectionProperties``.
extension CalDAVService {
    /// One property a request sets (with its text) or removes (nil).
    struct PropertyChange {
        var name: PropertyName
        var value: String?
        var element: XMLTree
    }

    /// The changes of a `propertyupdate`, `mkcalendar` or `mkcol` body, in document order.
    static func changes(in body: XMLTree) -> [PropertyChange] {
        body.children.filter { $0.namespace == NS.dav && ($0.name == "set" || $0.name == "remove") }.flatMap { op in
            (op.child(NS.dav, "prop")?.children ?? []).map { e in
                PropertyChange(name: PropertyName(e.namespace, e.name), value: op.name == "set" ? e.text : nil, element: e)
            }
        }
    }

    /// Properties MKCALENDAR may name that describe what every collection here already is;
    /// they are accepted and not kept.
    static let describedOnMake: Set<PropertyName> = [
        PropertyName(NS.dav, "resourcetype"), PropertyName(NS.caldav, "supported-calendar-component-set"),
        PropertyName(NS.caldav, "calendar-timezone"),
    ]

    /// The status of one change applied to `entry`: 200, 409 for a value out of bounds, 403
    /// for a property that cannot be set.
    static func apply(_ change: PropertyChange, to entry: inout CollectionProperties.Entry, making: Bool) -> Int {
        if making && describedOnMake.contains(change.name) {
            let comps = change.element.all(NS.caldav, "comp").map { $0.attributes["name"]?.uppercased() }
            return change.name.name != "supported-calendar-component-set" || comps.contains("VTODO") ? 200 : 403
        }
        guard let accepts = CollectionProperties.settable[change.name] else { return 403 }
        guard let raw = change.value else {
            entry.values[change.name] = nil
            return 200
        }
        let value = String(raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        guard change.element.children.isEmpty, value.utf8.count <= CollectionProperties.maxValueBytes, accepts(value) else { return 409 }
        entry.values[change.name] = value
        return 200
    }

    /// Applies every change or none: when one fails, the others get 424 (RFC 4918 9.2).
    func update(_ list: String?, _ changes: [PropertyChange], making: Bool) throws(DAVRefusal) -> (statuses: [(PropertyName, Int)], saved: Bool) {
        var entry = try collectionProperties.entry(list)
        if making { entry.made = true }
        var statuses = changes.map { ($0.name, Self.apply($0, to: &entry, making: making)) }
        guard statuses.allSatisfy({ $0.1 == 200 }) else {
            statuses = statuses.map { ($0.0, $0.1 == 200 ? 424 : $0.1) }
            return (statuses, false)
        }
        try collectionProperties.replace(list, with: entry)
        return (statuses, true)
    }

    /// PROPPATCH: a collection's settable properties; everything else is answered 403.
    func proppatch(_ path: DAVPath, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let body = try Self.xml(request), body.is(NS.dav, "propertyupdate") else {
            throw DAVRefusal(status: 400, message: "PROPPATCH needs a DAV:propertyupdate body")
        }
        let changes = Self.changes(in: body)
        let statuses: [(PropertyName, Int)] = try writing.withLock { _ in
            guard case .collection(let list) = path else { return changes.map { ($0.name, 403) } }
            _ = try existingMembers(of: list)
            return try update(list, changes, making: false).statuses
        }
        return Self.multistatus(Self.propstats(href: path.href, statuses, root: nil))
    }

    /// MKCALENDAR (or MKCOL) of `/dav/home/<list>/`, with the properties its body sets. The
    /// list shows as an empty collection until a task is put into it or it is deleted.
    func makeCollection(_ path: DAVPath, _ request: HTTPRequest) throws -> HTTPResponse {
        guard case .collection(let list?) = path else { throw DAVRefusal(status: 403, message: "only a list may be made: MKCALENDAR /dav/home/<list>/") }
        let body = try Self.xml(request)
        if let body, !body.is(NS.caldav, "mkcalendar"), !body.is(NS.dav, "mkcol") {
            throw DAVRefusal(status: 400, message: "MKCALENDAR takes a CALDAV:mkcalendar body, MKCOL a DAV:mkcol one")
        }
        let root = request.method == "MKCOL" ? "d:mkcol-response" : "c:mkcalendar-response"
        let result = try writing.withLock { _ in try update(list, body.map(Self.changes) ?? [], making: true) }
        guard result.saved else {
            var answer = Self.multistatus(Self.propstats(href: path.href, result.statuses, root: root))
            answer.status = 403
            return answer
        }
        return HTTPResponse(status: 201)
    }

    /// A response listing each property under its status; under `root` instead of a
    /// multistatus when given (the body of a failed MKCALENDAR).
    static func propstats(href: String, _ statuses: [(PropertyName, Int)], root: String?) -> Multistatus {
        let reasons = [200: "OK", 403: "Forbidden", 409: "Conflict", 424: "Failed Dependency"]
        var m = root.map { Multistatus(root: $0) } ?? Multistatus()
        if root == nil { m.append("<d:response><d:href>\(XMLText.escaped(href))</d:href>") }
        for status in Set(statuses.map(\.1)).sorted() {
            m.append("<d:propstat><d:prop>" + statuses.filter { $0.1 == status }.map { $0.0.element("") }.joined())
            m.append("</d:prop><d:status>HTTP/1.1 \(status) \(reasons[status] ?? "")</d:status></d:propstat>")
        }
        if root == nil { m.append("</d:response>") }
        return m
    }
}
