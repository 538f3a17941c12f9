import Foundation
@_spi(Engine) import TaskModel
@testable import TaskPlanning
@_spi(Engine) import TaskStore
import Testing

/// Ranking through the urgency plan (`snapshot-plan`) gives what ranking every task gives:
/// random stores with every kind of register, some of their log after the snapshot, ranked
/// at several instants and in several zones.
@Suite("urgency plan")
struct UrgencyPlanTests {
    let dir = TemporaryDirectory()
    static let day: Int64 = 86_400_000
    /// 2026-03-01T00:00Z, around which the random dates fall.
    static let base: Int64 = 1_772_323_200_000

    /// A random store of `count` tasks, compacted (so with a snapshot and its plan), then
    /// given `later` random operations after the snapshot; its path.
    func randomStore(_ name: String, seed: UInt64, count: Int, later: Int) throws -> String {
        var rng = SeededGenerator(state: seed)
        let path = dir.sub(name)
        let store = try TaskStore.open(at: path)
        var ids: [TaskID] = []
        while ids.count < count {
            // Several adds in one commit share a creation time: ties go to the id.
            let batch = (0..<Int.random(in: 1...4, using: &rng)).map { _ in TaskID.random() }
            try store.commit(batch.flatMap { Self.randomTask($0, &rng) })
            ids += batch
        }
        for _ in 0..<(count / 3) { try store.commit(Self.randomEdit(ids, &rng)) }
        try removeSome(of: ids, from: store, &rng)
        _ = try store.compact()
        #expect(FileManager.default.fileExists(atPath: path + "/snapshot-plan"))
        for _ in 0..<later {
            if Int.random(in: 0..<8, using: &rng) == 0 {
                let id = TaskID.random()
                try store.commit(Self.randomTask(id, &rng))
                ids.append(id)
            } else {
                try store.commit(Self.randomEdit(ids, &rng))
            }
        }
        if later > 0 { try removeSome(of: ids, from: store, &rng) }
        return path
    }

    /// Removes a few of `ids` that are live (a remove names the dots the store knows).
    func removeSome(of ids: [TaskID], from store: TaskStore, _ rng: inout SeededGenerator) throws {
        let live = Set(try store.tasks(TaskQuery(status: .all)).map(\.id))
        try store.remove(Array(ids.filter(live.contains).shuffled(using: &rng).prefix(4)))
    }

    static func randomDue(_ rng: inout SeededGenerator) -> Due? {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0, 1: return nil
        case 2, 3: return .date(days: base / day + Int64.random(in: -40...40, using: &rng))
        case 4: return .instant(milliseconds: base + Int64.random(in: -3...3, using: &rng) * day + Int64.random(in: 0..<day, using: &rng))
        default: return [.date(days: 4_000_000_000_000), .date(days: -4_000_000_000_000), .instant(milliseconds: 1 << 62)].randomElement(using: &rng)!
        }
    }

    static func randomTask(_ id: TaskID, _ rng: inout SeededGenerator) -> [TaskOperation] {
        var ops: [TaskOperation] = [.add(id), .set(id, .title("t\(id.rawValue.prefix(6))"))]
        if Bool.random(using: &rng) { ops.append(.set(id, .priority(UInt8.random(in: 0...3, using: &rng)))) }
        if let due = randomDue(&rng) { ops.append(.set(id, .due(due))) }
        for key in [PlanningKey.wait, PlanningKey.scheduled, PlanningKey.start] where Int.random(in: 0..<4, using: &rng) == 0 {
            ops.append(.set(id, .meta(key: key, value: (randomDue(&rng) ?? .date(days: base / day)).description)))
        }
        return ops
    }

    /// A write to a random task: a register, done or not, a dependency, or a remove.
    static func randomEdit(_ ids: [TaskID], _ rng: inout SeededGenerator) -> [TaskOperation] {
        let id = ids.randomElement(using: &rng)!
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return [.set(id, .done(Bool.random(using: &rng)))]
        case 1: return [.set(id, .due(randomDue(&rng)))]
        case 2: return [.set(id, .priority(Bool.random(using: &rng) ? nil : UInt8.random(in: 0...3, using: &rng)))]
        case 3, 4: return [.addTag(id, PlanningKey.dependencyElement(ids.randomElement(using: &rng)!))]
        case 5: return [.add(id)]
        default:
            let key = [PlanningKey.wait, PlanningKey.scheduled, PlanningKey.start].randomElement(using: &rng)!
            return [.set(id, .meta(key: key, value: Bool.random(using: &rng) ? nil : randomDue(&rng)?.description))]
        }
    }

    /// The plan's answers and every task's, at `now` in `zone`, for several counts.
    func expectSameRanking(_ path: String, now: Int64, zone: FixedOffsetZone, _ comment: String) throws {
        let today = zone.civil(milliseconds: now).days
        for n in [0, 1, 3, 10, 1000] {
            let planned = try #require(try Urgency.topThroughPlan(n, in: try TaskStore.open(at: path), now: now, today: today))
            let full = try Urgency.topOfEveryTask(n, in: try TaskStore.open(at: path), now: now, today: today)
            #expect(planned.map(\.id) == full.map(\.id), "top \(n), \(comment)")
        }
        for n in [0, 2, 50] {
            let planned = try #require(try TodayView.throughPlan(try TaskStore.open(at: path), next: n, now: now, zone: zone))
            let full = try TodayView(everyTaskOf: try TaskStore.open(at: path), next: n, now: now, zone: zone)
            #expect(planned == full, "today \(n), \(comment)")
        }
    }

    @Test("a snapshot a background seal writes gets its plan, and a store with its state loaded ranks through it")
    func backgroundSnapshotsGetTheirPlan() throws {
        var options = TaskStore.Options()
        (options.sealThreshold, options.durable, options.lockLease) = (4 << 10, false, .zero)
        let path = dir.sub("background")
        let store = try TaskStore.open(at: path, options: options)
        _ = try store.state()
        for i in 0..<400 {
            _ = try store.add(NewTask(title: "task \(i)", priority: UInt8(i % 4), due: i % 3 == 0 ? nil : .date(days: Self.base / Self.day + Int64(i % 40) - 20)))
        }
        store.waitForMaintenance()
        #expect(FileManager.default.fileExists(atPath: path + "/snapshot"))
        #expect(try store.checkUrgencyPlan() == .right)
        let today = Self.base / Self.day
        for n in [1, 7, 400] {
            let planned = try #require(try Urgency.topThroughPlan(n, in: store, now: Self.base, today: today))
            #expect(planned.map(\.id) == (try Urgency.topOfEveryTask(n, in: store, now: Self.base, today: today)).map(\.id))
        }
    }

    @Test("random stores rank the same through the plan as by reading every task, at any now and in any zone")
    func randomStoresRankTheSame() throws {
        for seed in UInt64(1)...10 {
            let path = try randomStore("s\(seed)", seed: seed, count: 120, later: seed % 3 == 0 ? 0 : 40)
            var rng = SeededGenerator(state: seed &* 7919)
            for _ in 0..<6 {
                let now = Self.base + Int64.random(in: -5...5, using: &rng) * Self.day + Int64.random(in: 0..<Self.day, using: &rng)
                let zone = FixedOffsetZone(hours: Int.random(in: -12...14, using: &rng))
                try expectSameRanking(path, now: now, zone: zone, "seed \(seed) now \(now) zone \(zone.hours)")
            }
        }
    }
}
