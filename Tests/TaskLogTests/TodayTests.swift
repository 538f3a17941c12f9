import Foundation
@_spi(Engine) import TaskModel
@testable import TaskPlanning
@_spi(Engine) import TaskStore
import Testing

/// `today` and `top` on a store holding each kind of task, made through the library (the
/// registers as meta keys, the dependency as its tag-set element), read by the library from
/// the snapshot and from the loaded state, and by the CLI in UTC.
@Suite("today and top")
struct TodayTests {
    let dir = TemporaryDirectory()

    /// A store of every kind, as of `now`; its path.
    func planningStore(now: Int64) throws -> String {
        let path = dir.sub("store")
        let store = try TaskStore.open(at: path)
        let today = FixedOffsetZone(hours: 0).civil(milliseconds: now).days
        func date(_ offset: Int64) -> Due { .date(days: today + offset) }
        func add(_ title: String, priority: UInt8? = nil, due: Due? = nil, meta: [String: String] = [:]) throws -> TaskItem {
            try store.add(NewTask(title: title, priority: priority, due: due, meta: meta))
        }
        _ = try add("overdue", priority: 0, due: date(-2))
        _ = try add("due today", priority: 1, due: date(0))
        _ = try add("scheduled", meta: [PlanningKey.scheduled: date(0).description])
        _ = try add("waiting", due: date(-5), meta: [PlanningKey.wait: date(1).description])
        _ = try add("in progress", meta: [PlanningKey.start: Due.instant(milliseconds: now - 3_600_000).description])
        let blocked = try add("blocked", priority: 3, due: date(0))
        let dependency = try add("dependency", priority: 2)
        _ = try add("far", priority: 3, due: date(40))
        _ = try add("plain")
        _ = try add("low", priority: 1)
        _ = try store.commit([.addTag(blocked.id, PlanningKey.dependencyElement(dependency.id))])
        return path
    }

    static let topOrder = ["overdue", "due today", "far", "in progress", "dependency", "scheduled", "low", "plain", "blocked"]
    static let sections: [String: [String]] = [
        "overdue": ["overdue"], "due_today": ["due today", "blocked"], "scheduled": ["scheduled"],
        "in_progress": ["in progress"], "next": ["far", "dependency", "low"],
    ]

    func titles(_ view: TodayView) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: TodayView.Section.allCases.map { ($0.rawValue, view[$0].map(\.title)) })
    }

    @Test("the library ranks and sections the same from the snapshot as from the loaded state")
    func libraryViews() throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let path = try planningStore(now: now)
        let today = FixedOffsetZone(hours: 0).civil(milliseconds: now).days
        let compacting = try TaskStore.open(at: path)
        _ = try compacting.compact()
        let fromSnapshot = try TaskStore.open(at: path)
        #expect(try Urgency.top(20, in: fromSnapshot, now: now, today: today).map(\.title) == Self.topOrder)
        #expect(titles(try TodayView(fromSnapshot, next: 3, now: now, zone: FixedOffsetZone(hours: 0))) == Self.sections)
        let loaded = try TaskStore.open(at: path)
        _ = try loaded.state()
        #expect(try Urgency.top(20, in: loaded, now: now, today: today).map(\.title) == Self.topOrder)
        #expect(try Urgency.top(2, in: loaded, now: now, today: today).map(\.title) == Array(Self.topOrder.prefix(2)))
        #expect(titles(try TodayView(loaded, next: 3, now: now, zone: FixedOffsetZone(hours: 0))) == Self.sections)
        #expect(Urgency.ranked(try loaded.state().liveTasks, now: now, today: today).map(\.title) == Self.topOrder)
    }

    @Test("tasklog today --json and top --json give the sections and the urgency order")
    func cliViews() throws {
        let path = try planningStore(now: Int64(Date().timeIntervalSince1970 * 1000))
        let env = ["TZ": "UTC"]
        let today = try CLI.run(["today", "3", "--json"], store: path, environment: env)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(today.stdout.utf8)) as? [String: [[String: Any]]], "\(today)")
        #expect(object.mapValues { $0.compactMap { $0["title"] as? String } } == Self.sections)
        let top = try CLI.run(["top", "20", "--json"], store: path, environment: env)
        let ranked = try #require(try JSONSerialization.jsonObject(with: Data(top.stdout.utf8)) as? [[String: Any]], "\(top)")
        #expect(ranked.compactMap { $0["title"] as? String } == Self.topOrder)
        let text = try CLI.run(["today"], store: path, environment: env).stdout
        #expect(text.hasPrefix("Overdue\n") && text.contains("\nIn progress\n") && !text.contains("waiting"), "\(text)")
        #expect(try CLI.run(["today", "-1"], store: path, environment: env).status == 2)
    }
}
