/// Fields to set on a task, read from the JSON task form (import, and the REST API).
///
/// A key that is absent leaves the field alone; `null` clears it. The derived keys
/// (`createdAt`, `updatedAt`, `completedAt`) are accepted and ignored.
@_spi(Engine) public struct TaskPatch: Sendable, Equatable {
    public var id: TaskID?
    public var title: String?
    public var notes: String??
    public var done: Bool?
    public var priority: UInt8??
    public var due: Due??
    /// The complete tag set wanted (tags not listed are removed).
    public var tags: [String]?
    public var list: String??
    /// The complete metadata map wanted (keys not listed are removed).
    public var meta: [String: String]?
    /// The complete set of dependencies wanted (those not listed are removed).
    public var dependencies: [TaskID]?
    /// The task is wanted deleted: a live one is removed, and one the store lacks is not made.
    public var deleted = false

    public init(id: TaskID? = nil) { self.id = id }

    /// Why a JSON value is not a valid task form.
    public struct FormError: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public static let knownKeys: Set<String> = [
        "id", "title", "notes", "done", "completedAt", "priority", "due", "tags", "list", "meta",
        "createdAt", "updatedAt",
    ]

    /// Reads a JSON object in the task form.
    public init(json: JSONValue) throws(FormError) {
        guard case .object(let members) = json else { throw FormError(message: "a task must be a JSON object") }
        for (key, value) in members {
            try set(FormField(key: key, value: value))
        }
    }

    /// Sets the field `member` names, or ignores it if it is derived.
    private mutating func set(_ member: FormField) throws(FormError) {
        switch member.key {
        case "id": id = try member.taskID()
        case "title": title = try member.string()
        case "notes": notes = .some(try member.optionalString())
        case "list": list = .some(try member.optionalString())
        case "done": done = try member.bool()
        case "priority": priority = .some(try member.priority())
        case "due": due = .some(try member.due())
        case "tags": tags = try member.tags()
        case "meta": meta = try member.meta()
        case "createdAt", "updatedAt", "completedAt": break
        default: throw FormError(message: "unknown key \"\(member.key)\"")
        }
    }
}

/// One member of a task form, read as the type its key wants; each reader throws an error
/// naming the key and what its value must be.
private struct FormField {
    var key: String
    var value: JSONValue

    func fail(_ what: String) -> TaskPatch.FormError { TaskPatch.FormError(message: "\"\(key)\" must be \(what)") }

    func taskID() throws(TaskPatch.FormError) -> TaskID {
        guard case .string(let s) = value, let id = TaskID(s) else {
            throw fail("a valid task id ([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
        }
        return id
    }

    func string() throws(TaskPatch.FormError) -> String {
        guard case .string(let s) = value else { throw fail("a string") }
        return s
    }

    func optionalString() throws(TaskPatch.FormError) -> String? {
        switch value {
        case .null: return nil
        case .string(let s): return s
        default: throw fail("a string or null")
        }
    }

    func bool() throws(TaskPatch.FormError) -> Bool {
        guard case .bool(let b) = value else { throw fail("true or false") }
        return b
    }

    func priority() throws(TaskPatch.FormError) -> UInt8? {
        switch value {
        case .null: return nil
        case .number(let n) where n == n.rounded() && n >= 0 && n <= 3: return UInt8(n)
        default: throw fail("an integer 0 to 3 or null")
        }
    }

    func due() throws(TaskPatch.FormError) -> Due? {
        switch value {
        case .null: return nil
        case .string(let s):
            guard let d = Due(parsing: s) else { throw fail("YYYY-MM-DD, an ISO-8601 instant or null") }
            return d
        default: throw fail("YYYY-MM-DD, an ISO-8601 instant or null")
        }
    }

    func tags() throws(TaskPatch.FormError) -> [String] {
        guard case .array(let items) = value else { throw fail("an array of strings") }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item, !s.isEmpty else { throw fail("an array of non-empty strings") }
            out.append(s)
        }
        return out
    }

    func meta() throws(TaskPatch.FormError) -> [String: String] {
        guard case .object(let entries) = value else { throw fail("an object of strings") }
        var out: [String: String] = [:]
        for (k, v) in entries {
            guard case .string(let s) = v else { throw fail("an object of strings") }
            out[k] = s
        }
        return out
    }
}

extension TaskPatch {
    /// The task's fields as a patch that would set them all.
    package init(_ t: TaskItem) {
        self.init(id: t.id)
        title = t.title
        notes = .some(t.notes)
        done = t.isDone
        priority = .some(t.priority)
        due = .some(t.due)
        tags = t.tags
        list = .some(t.list)
        meta = t.meta
        dependencies = t.dependencies
    }
}
