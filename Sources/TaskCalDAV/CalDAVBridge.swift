@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// `tasklog sync caldav://…`: a collection on a CalDAV server as one more replica
/// (Spec/interop.md, "CalDAV bridge").
///
/// Each sync pulls what changed there since the copy both sides last agreed on (the base),
/// as field writes, then pushes each local change with `If-Match`. A 412 fetches, merges
/// and retries. The bases and ETags are kept in `caldav/` inside the store.
@_spi(Engine) public struct CalDAVBridge: Sendable {
    let store: TaskStore
    let remote: CalDAVRemote
    let state: BridgeState

    /// What one sync moved.
    public struct Report: Equatable, Sendable {
        public var received = 0
        public var removedHere = 0
        public var sent = 0
        public var removedThere = 0
        public var retried = 0
        /// What was skipped there, each as `<href>: <why>`: objects that are not one readable
        /// VTODO, and hrefs outside the collection.
        public var skipped: [String] = []
    }

    public init(store: TaskStore, url: String, password: String?, trustedCertificates: String? = nil) throws(CalDAVBridgeError) {
        self.store = store
        remote = try CalDAVRemote(url: url, password: password, trustedCertificates: trustedCertificates)
        state = BridgeState(store: store, url: remote.url)
        collectionList = Self.list(of: remote.scope)
    }

    /// The list a TaskLog server's collection `/dav/home/<list>/` stands for (`.some(nil)`
    /// for `_`, tasks with no list); nil for any other collection.
    let collectionList: String??

    static func list(of scope: CollectionScope) -> String?? {
        let raw = scope.path.split(separator: "/", omittingEmptySubsequences: false)
        guard raw.count == 5, raw[1] == "dav", raw[2] == "home", let list = DAVPath.decoded(String(raw[3])), !list.isEmpty else { return nil }
        return raw[3] == "_" ? .some(nil) : .some(list)
    }

    /// One exchange: pull, then push. Repeated with nothing changed, it moves nothing.
    public func sync() throws -> Report {
        var report = Report()
        var items: [String: BridgeState.Item] = [:]
        for (href, item) in try state.load() {
            // State written before hrefs were checked may name objects outside the collection.
            if let member = remote.scope.member(href) { items[member] = item } else { report.skipped.append("\(href): outside the collection; forgotten") }
        }
        let (etags, outside) = try remote.etags()
        report.skipped += outside.map { "\($0): outside the collection \(remote.url); ignored" }
        try pull(etags: etags, items: &items, report: &report)
        try push(items: &items, report: &report)
        try state.save(items)
        return report
    }

    /// Applies what changed there: new and edited objects as field writes, deleted ones
    /// as removals.
    private func pull(etags: [String: String], items: inout [String: BridgeState.Item], report: inout Report) throws {
        let changed = etags.filter { items[$0.key]?.etag != $0.value }.map(\.key).sorted()
        var patches: [TaskPatch] = []
        for (href, object) in try remote.fetch(changed).sorted(by: { $0.key < $1.key }) {
            guard let theirs = entry(object.data) else {
                report.skipped.append("\(href): not one readable VTODO")
                continue
            }
            let id = theirs.patch.id!
            let current = try store.task(id)
            let patch: TaskPatch
            if let base = items[href].flatMap({ entry($0.base) }) {
                patch = ThreeWayPatch.changes(from: base.patch(over: current), to: theirs.patch(over: current), over: current)
            } else {
                patch = theirs.patch(over: current)
            }
            // A patch with no field (only the ETag moved) must not touch, or restore, the task.
            if patch != TaskPatch(id: id) { patches.append(patch) }
            items[href] = BridgeState.Item(id: id, etag: object.etag, base: object.data)
        }
        let outcome = try store.apply(patches)
        report.received = outcome.created + outcome.changed
        let gone = items.filter { etags[$0.key] == nil }
        var removed: [TaskID] = []
        for (href, item) in gone {
            items[href] = nil
            if let t = try store.task(item.id), !t.isDeleted { removed.append(item.id) }
        }
        if !removed.isEmpty { try store.remove(removed) }
        report.removedHere = removed.count
    }

    /// Sends local changes: edits with `If-Match`, new tasks with `If-None-Match: *`,
    /// removals with DELETE.
    private func push(items: inout [String: BridgeState.Item], report: inout Report) throws {
        let known = Set(items.values.map(\.id))
        for (href, item) in items.sorted(by: { $0.key < $1.key }) {
            let current = try store.task(item.id)
            guard let current, !current.isDeleted else {
                let reply = try remote.send("DELETE", remote.absolute(href), headers: ["If-Match": item.etag])
                if (200..<300).contains(reply.status) || reply.status == 404 {
                    items[href] = nil
                    report.removedThere += 1
                } else if reply.status != 412 {
                    throw CalDAVBridgeError.refused(url: remote.absolute(href), method: "DELETE", status: reply.status, message: Self.text(reply))
                }
                continue
            }
            try update(href: href, item: item, task: current, items: &items, report: &report)
        }
        for task in try store.tasks(TaskQuery(status: .all)) where !known.contains(task.id) {
            let name = DAVPath.encoded(task.meta["ical.uid"] ?? task.id.rawValue) + ".ics"
            let href = remote.scope.path + name
            let data = ICalendar.object(of: task, namingList: true)
            let reply = try remote.send("PUT", remote.absolute(href), headers: ["If-None-Match": "*", "Content-Type": "text/calendar; charset=utf-8"], body: Array(data.utf8))
            guard (200..<300).contains(reply.status) else {
                if reply.status == 412 { continue }  // made there meanwhile: the next pull brings it
                throw CalDAVBridgeError.refused(url: remote.absolute(href), method: "PUT", status: reply.status, message: Self.text(reply))
            }
            try record(reply, href: href, sent: data, task: task, items: &items)
            report.sent += 1
        }
    }

    /// Keeps what the server holds after a PUT: the data sent, under the strong ETag the
    /// answer gave; without one (RFC 4791 lets a server store the data changed), the object
    /// fetched back, whose changes are written here.
    private func record(_ reply: HTTPReply, href: String, sent data: String, task: TaskItem, items: inout [String: BridgeState.Item]) throws {
        if let etag = reply.headers["etag"], !etag.isEmpty, !etag.hasPrefix("W/") {
            items[href] = BridgeState.Item(id: task.id, etag: etag, base: data)
            return
        }
        guard let stored = try remote.fetch([href])[href] else {
            // The next listing shows its ETag, and the pull brings what the server made of it.
            items[href] = BridgeState.Item(id: task.id, etag: "", base: data)
            return
        }
        if let sent = mine(data, task), let theirs = entry(stored.data) {
            let patch = ThreeWayPatch.changes(from: sent.patch(over: task), to: theirs.patch(over: task), over: task)
            if patch != TaskPatch(id: task.id) { try store.apply([patch]) }
        }
        items[href] = BridgeState.Item(id: task.id, etag: stored.etag, base: stored.data)
    }

    /// Puts a task that changed here since its base; on 412, merges what changed there and
    /// tries again (three times at most, then leaves it to the next sync).
    private func update(href: String, item: BridgeState.Item, task: TaskItem, items: inout [String: BridgeState.Item], report: inout Report) throws {
        var item = item
        var task = task
        for attempt in 0..<3 {
            let data = ICalendar.object(of: task, namingList: true)
            guard let mine = mine(data, task), let base = entry(item.base) else { return }
            if ThreeWayPatch.same(mine.patch(over: task), base.patch(over: task)) { return }
            let reply = try remote.send("PUT", remote.absolute(href), headers: ["If-Match": item.etag, "Content-Type": "text/calendar; charset=utf-8"], body: Array(data.utf8))
            if (200..<300).contains(reply.status) {
                try record(reply, href: href, sent: data, task: task, items: &items)
                report.sent += 1
                return
            }
            guard reply.status == 412, attempt < 2 else {
                if reply.status == 412 { return }
                throw CalDAVBridgeError.refused(url: remote.absolute(href), method: "PUT", status: reply.status, message: Self.text(reply))
            }
            report.retried += 1
            guard let fresh = try remote.fetch([href])[href], let theirs = entry(fresh.data) else { return }
            try store.apply([ThreeWayPatch.changes(from: base.patch(over: task), to: theirs.patch(over: task), over: task)])
            item = BridgeState.Item(id: task.id, etag: fresh.etag, base: fresh.data)
            items[href] = item
            guard let merged = try store.task(task.id) else { return }
            task = merged
        }
    }

    /// The one task an object there states, or nil when it is not one readable VTODO. Without
    /// `X-TASKLOG-LIST`, its list is the one a TaskLog server's collection stands for.
    func entry(_ data: String) -> ICalendar.Entry? {
        guard var e = Self.only(data) else { return nil }
        if e.patch.list == nil, let collectionList { e.patch.list = .some(collectionList) }
        return e
    }

    /// The task as this bridge renders it (`data`): its own list, named or not.
    func mine(_ data: String, _ task: TaskItem) -> ICalendar.Entry? {
        guard var e = Self.only(data) else { return nil }
        if e.patch.list == nil { e.patch.list = .some(task.list) }
        return e
    }

    static func only(_ data: String) -> ICalendar.Entry? {
        guard let entries = try? ICalendar.entries(of: data), entries.count == 1 else { return nil }
        return entries[0]
    }

    static func text(_ reply: HTTPReply) -> String {
        String(decoding: reply.body.prefix(200), as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }
}
