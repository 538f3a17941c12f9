/// Fields to set on a task, read from the JSON task form (import, and the REST API).
///
/// A key that is absent leaves the field alone; `null` clears it. The derived keys
/// (`createdAt`, `updatedAt`, `completedAt`) are accepted and ignored.
public struct TaskPatch: Sendable, Equatable {
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
            func fail(_ what: String) -> FormError { FormError(message: "\"\(key)\" must be \(what)") }
            func optionalString() throws(FormError) -> String? {
                switch value {
                case .null: return nil
                case .string(let s): return s
                default: throw fail("a string or null")
                }
            }
            switch key {
            case "id":
                guard case .string(let s) = value, let id = TaskID(s) else {
                    throw fail("a valid task id ([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
                }
                self.id = id
            case "title":
                guard case .string(let s) = value else { throw fail("a string") }
                title = s
            case "notes": notes = .some(try optionalString())
            case "list": list = .some(try optionalString())
            case "done":
                guard case .bool(let b) = value else { throw fail("true or false") }
                done = b
            case "priority":
                switch value {
                case .null: priority = .some(nil)
                case .number(let n) where n == n.rounded() && n >= 0 && n <= 3: priority = .some(UInt8(n))
                default: throw fail("an integer 0 to 3 or null")
                }
            case "due":
                switch value {
                case .null: due = .some(nil)
                case .string(let s):
                    guard let d = Due(parsing: s) else { throw fail("YYYY-MM-DD, an ISO-8601 instant or null") }
                    due = .some(d)
                default: throw fail("YYYY-MM-DD, an ISO-8601 instant or null")
                }
            case "tags":
                guard case .array(let items) = value else { throw fail("an array of strings") }
                var out: [String] = []
                for item in items {
                    guard case .string(let s) = item, !s.isEmpty else { throw fail("an array of non-empty strings") }
                    out.append(s)
                }
                tags = out
            case "meta":
                guard case .object(let entries) = value else { throw fail("an object of strings") }
                var out: [String: String] = [:]
                for (k, v) in entries {
                    guard case .string(let s) = v else { throw fail("an object of strings") }
                    out[k] = s
                }
                meta = out
            case "createdAt", "updatedAt", "completedAt":
                break
            default:
                throw FormError(message: "unknown key \"\(key)\"")
            }
        }
    }
}
