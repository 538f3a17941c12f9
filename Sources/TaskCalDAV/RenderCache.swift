@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel

/// Each task's calendar object, kept across requests: rendering 10,000 tasks costs more than
/// answering for them. The cache holds the store version it is valid for. Before each
/// request it drops the tasks that commits since then touched, so an entry always matches
/// the task it was rendered from.
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

    private struct State {
        var version: VersionVector?
        var entries: [TaskID: Rendering] = [:]
    }

    private let state = Mutex(State())

    /// Makes the cache valid for `version`: drops what `touched(since)` names, or everything
    /// when the store's version did not grow from the cache's (a store that went back).
    func refresh(to version: VersionVector, touched: (VersionVector) throws -> [TaskID]) rethrows {
        let since = state.withLock { $0.version }
        guard since != version else { return }
        var stale: [TaskID]? = nil
        if let since, version.includes(since) { stale = try touched(since) }
        state.withLock { s in
            // Another request may have refreshed meanwhile; dropping more is always safe.
            if let stale { for id in stale { s.entries[id] = nil } } else { s.entries = [:] }
            s.version = version
        }
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
