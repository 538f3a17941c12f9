@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel

/// Each task's calendar object, kept across requests: rendering 10,000 tasks costs more than
/// answering for them. The cache holds the store version it is valid for. Before each
/// request it drops the tasks that commits since then touched, so an entry always matches
/// the task it was rendered from. It also keeps every live task's place (list and name), so
/// finding the task an href names, or finding none, costs one lookup.
final class RenderCache: Sendable {
    /// A task's object: its URL path, its bytes as a client GETs them, its ETag, and the last
    /// two escaped for XML.
    struct Rendering: Sendable {
        let href: String
        let data: String
        let etag: String
        let xmlData: String
        let xmlETag: String

        init(_ task: TaskItem) {
            href = CalDAVService.Member.href(of: task)
            data = ICalendar.object(of: task)
            let h = ContentHash.xxh3_128(Array(data.utf8))
            etag = "\"" + String(h.high, radix: 16) + String(h.low, radix: 16) + "\""
            xmlData = XMLText.escaped(data)
            xmlETag = XMLText.escaped(etag)
        }
    }

    /// Where a calendar object lives: its collection's list and its name there.
    struct Place: Hashable, Sendable {
        var list: String?
        var name: String

        init(list: String?, name: String) {
            self.list = list
            self.name = name
        }

        init(of task: TaskItem) { self.init(list: task.list, name: CalDAVService.Member.name(of: task)) }
    }

    /// How the cache reads the store while it refreshes.
    struct Reader {
        /// The tasks commits after a version touched.
        var touched: (VersionVector) throws -> [TaskID]
        /// One task, live or deleted.
        var task: (TaskID) throws -> TaskItem?
        /// Every live task.
        var all: () throws -> [TaskItem]
    }

    private struct State {
        var version: VersionVector?
        var entries: [TaskID: Rendering] = [:]
        /// The live tasks at each place (several only when replicas disagree on a name).
        var occupants: [Place: Set<TaskID>] = [:]
        var places: [TaskID: Place] = [:]

        mutating func place(_ id: TaskID, at place: Place?) {
            if let old = places.removeValue(forKey: id) {
                occupants[old]?.remove(id)
                if occupants[old]?.isEmpty == true { occupants[old] = nil }
            }
            guard let place else { return }
            places[id] = place
            occupants[place, default: []].insert(id)
        }
    }

    private let state = Mutex(State())

    /// Makes the cache valid for `version`: drops and re-places what `reader.touched(since)`
    /// names, or starts afresh when the store's version did not grow from the cache's (a
    /// store that went back). Refreshes run one at a time.
    func refresh(to version: VersionVector, reader: Reader) throws {
        try state.withLock { s in
            guard s.version != version else { return }
            if let since = s.version, version.includes(since) {
                for id in try reader.touched(since) {
                    s.entries[id] = nil
                    s.place(id, at: try reader.task(id).flatMap { $0.isDeleted ? nil : Place(of: $0) })
                }
            } else {
                s = State()
                for task in try reader.all() { s.place(task.id, at: Place(of: task)) }
            }
            s.version = version
        }
    }

    /// The live task at `place` as of the cache's version, if any. Of several, the one whose
    /// name is its own id's wins, then the smallest id.
    func task(at place: Place) -> TaskID? {
        guard let found = state.withLock({ $0.occupants[place] }) else { return nil }
        if place.name.hasSuffix(".ics"), let own = TaskID(String(place.name.dropLast(4))), found.contains(own) { return own }
        return found.min()
    }

    /// The task's rendering, made now if the cache lacks it. `task` was read after the cache
    /// was refreshed to `version`; a rendering is kept only while the cache is still there,
    /// since a later refresh may already have dropped a newer state of the task.
    func rendering(of task: TaskItem, refreshedTo version: VersionVector) -> Rendering {
        if let r = state.withLock({ $0.entries[task.id] }) { return r }
        let r = Rendering(task)
        state.withLock { s in
            if s.version == version { s.entries[task.id] = r }
        }
        return r
    }
}
