@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Puts tasks in an order of its own (all of them, none added or dropped).
@_spi(Engine) public typealias TaskOrdering = @Sendable ([TaskItem]) -> [TaskItem]

/// What `GET /v1/tasks` was asked for: which tasks, matching what, in which order
/// (Spec/sync-http.md, "REST endpoints"). Every parameter is optional.
struct ListRequest {
    enum Status: String { case open, done, all, deleted }

    var status = Status.all
    /// Folded, as the command line folds `--tag`.
    var tag: String?
    var list: String?
    var words = WordSearch([])
    var sort = "created"

    /// Longest `q` accepted: the words of a search box, not a document.
    static let maxWordsLength = 1000

    init(_ query: [String: String], extraOrders: Set<String>) throws(HTTPResponseBox) {
        if let text = query["status"] {
            guard let s = Status(rawValue: text) else { throw HTTPResponseBox(.error(400, "'status' must be open, done, all or deleted")) }
            status = s
        }
        tag = query["tag"].flatMap { $0.isEmpty ? nil : TextFolding.folded($0) }
        list = query["list"].flatMap { $0.isEmpty ? nil : $0 }
        if let q = query["q"] {
            guard q.utf8.count <= Self.maxWordsLength else { throw HTTPResponseBox(.error(400, "'q' is longer than \(Self.maxWordsLength) bytes")) }
            words = WordSearch(q.split(separator: " ").map(String.init))
        }
        if let s = query["sort"] {
            let known = TaskQuery.SortKey.allCases.map(\.rawValue) + extraOrders.sorted()
            guard known.contains(s) else { throw HTTPResponseBox(.error(400, "'sort' must be one of \(known.joined(separator: ", "))")) }
            sort = s
        }
    }

    /// Whether `t` matches the tag, list and words (its status is the store query's).
    func admits(_ t: TaskItem) -> Bool {
        if let tag, !t.tags.contains(where: { TextFolding.folded($0) == tag }) { return false }
        if let list, t.list != list { return false }
        return words.isEmpty || words.matches(t)
    }

    /// The store's query for the status, in the created order.
    var storeQuery: TaskQuery {
        TaskQuery(status: status == .open ? .open : status == .done ? .done : .all, list: list)
    }
}

extension HTTPService {
    /// `GET /v1/tasks[?status=&tag=&list=&q=&sort=]`: the tasks asked for, in the order asked,
    /// with the cursor of the changes feed they reflect in `TaskLog-Version`.
    func listTasks(_ request: HTTPRequest) -> HTTPResponse {
        do {
            let asked = try ListRequest(request.query, extraOrders: Set(extraOrders.keys))
            // Read first: a change landing during the listing is then reported by the feed.
            let version = try store.version
            var tasks: [TaskItem]
            if asked.status == .deleted {
                tasks = try store.state().allTasks.filter { $0.isDeleted && asked.admits($0) }
            } else {
                tasks = try store.tasks(asked.storeQuery).filter(asked.admits)
            }
            if let order = extraOrders[asked.sort] {
                tasks = order(tasks)
            } else if let key = TaskQuery.SortKey(rawValue: asked.sort) {
                tasks = TaskQuery(status: .all, sort: key).apply(to: tasks)
            }
            var answer = Self.json(200) { $0.taskArray(tasks) }
            answer.headers.append(("TaskLog-Version", VersionCoding.cursor(version)))
            return answer
        } catch let refusal as HTTPResponseBox {
            return refusal.response
        } catch {
            return Self.failure(error)
        }
    }
}
