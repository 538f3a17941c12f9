@_spi(Engine) import TaskModel

extension TaskwarriorJSON {
    /// One task read: the task as Taskwarrior states it, and the meta entries that keep the
    /// attributes it has no field for.
    package struct Entry: Equatable {
        /// Title, done or deleted, due, list, tags and notes; priority (nil when absent:
        /// the caller decides whether absent means none or 0).
        package var patch: TaskPatch
        package var meta: [String: String]
        /// The uuid as written, and the uuids its `depends` names.
        var uuid = ""
        var depends: [String] = []
    }

    /// The tasks of `task export` output.
    package static func entries(of bytes: [UInt8]) throws(InterchangeError) -> [Entry] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw InterchangeError.task(0, "\(error)")
        }
        guard case .array(let items) = value else { throw InterchangeError.task(0, "expected a JSON array of tasks") }
        var out: [Entry] = []
        for (i, item) in items.enumerated() {
            guard case .object(let members) = item else { throw InterchangeError.task(i + 1, "not a JSON object") }
            out.append(try entry(Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }), number: i + 1))
        }
        return linked(out)
    }

    static func entry(_ m: [String: JSONValue], number: Int) throws(InterchangeError) -> Entry {
        func text(_ key: String) -> String? { if case .string(let s)? = m[key] { s } else { nil } }
        guard let description = text("description"), !description.isEmpty else {
            throw InterchangeError.task(number, "it has no description")
        }
        guard let id = text(idAttribute).flatMap(TaskID.init) ?? text("uuid").flatMap(TaskID.init) else {
            throw InterchangeError.task(number, "its uuid is missing or not a task id")
        }
        var patch = TaskPatch(id: id)
        patch.title = description
        patch.deleted = text("status") == "deleted"
        patch.done = text("status") == "completed" || text("status") == "recurring"
        patch.priority = ["H": 3, "M": 2, "L": 1][text("priority") ?? ""].map { .some($0) }
        patch.list = .some(text("project"))
        patch.due = .some(nil)
        if let due = text("due") {
            guard let parsed = Self.due(due) else { throw InterchangeError.task(number, "due \(due) is not a Taskwarrior time") }
            patch.due = .some(parsed)
        }
        if case .array(let tags)? = m["tags"] { patch.tags = tags.compactMap { if case .string(let s) = $0 { s } else { nil } } } else { patch.tags = [] }
        patch.notes = .some(notes(ofAnnotations: m["annotations"]))
        let meta = try keptMeta(m, number: number).merging(try planningMeta(m, number: number)) { _, register in register }
        return Entry(patch: patch, meta: meta, uuid: text("uuid") ?? "", depends: dependsUUIDs(m["depends"]))
    }

    /// A Taskwarrior time (`YYYYMMDDTHHMMSSZ`) as a due date: a date when it is midnight UTC,
    /// an instant otherwise.
    static func due(_ s: String) -> Due? {
        let u = Array(s.utf8)
        guard u.count == 16, u[8] == UInt8(ascii: "T"), u[15] == UInt8(ascii: "Z") else { return nil }
        let d = String(decoding: u[0..<8], as: UTF8.self)
        let t = String(decoding: u[9..<15], as: UTF8.self)
        let iso = "\(d.prefix(4))-\(d.dropFirst(4).prefix(2))-\(d.suffix(2))T\(t.prefix(2)):\(t.dropFirst(2).prefix(2)):\(t.suffix(2))Z"
        guard let ms = CivilTime.parseInstant(iso) else { return nil }
        return t == "000000" ? .date(days: ms / 86_400_000) : .instant(milliseconds: ms)
    }

    /// The entries with `depends` and `tasklogparent` read as task ids (a uuid of the file names
    /// the task it exports, also one with a `tasklogid`). A parent's dependencies on its own
    /// children are the subtask links the children state, not dependencies.
    static func linked(_ entries: [Entry]) -> [Entry] {
        let ids = Dictionary(entries.compactMap { e in e.patch.id.map { (e.uuid, $0) } }, uniquingKeysWith: { a, _ in a })
        let task = { (uuid: String) in ids[uuid] ?? TaskID(uuid) }
        var children: [String: Set<String>] = [:]
        for e in entries { if let p = e.meta[PlanningKey.parent] { children[p, default: []].insert(e.uuid) } }
        return entries.map { e in
            var e = e
            e.patch.dependencies = e.depends.filter { !(children[e.uuid] ?? []).contains($0) }.compactMap(task)
            e.meta[PlanningKey.parent] = e.meta[PlanningKey.parent].flatMap(task)?.rawValue
            return e
        }
    }
}
