@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@testable import TaskPlanning
import TestSupport
import Testing

/// The urgency formula (Spec/cli.md, "Urgency") on tasks built from operations, at day 100.
@Suite("urgency")
struct UrgencyTests {
    static let today: Int64 = 100
    static let now: Int64 = today * 86_400_000 + 36_000_000  // 10:00 UTC

    func task(_ id: String, _ writes: [FieldWrite], tags: [String] = [], created: UInt64 = 10) -> TaskItem {
        TaskStateTests.items([(id, created, writes, tags)])[0]
    }

    func score(_ t: TaskItem, open: Set<String> = []) -> Double? {
        Urgency.score(t, now: Self.now, today: Self.today) { open.contains($0.rawValue) }
    }

    @Test("a task due today never falls below one due in four weeks or later by priority alone")
    func dueTodayBeatsFarPriority() throws {
        let priorities: [UInt8?] = [nil, 0, 1, 2, 3]
        let todays: [Due] = [.date(days: Self.today), .instant(milliseconds: Self.now + 3_600_000)]
        for p in priorities {
            for q in priorities {
                for days in [28, 40, 365] as [Int64] {
                    for due in todays {
                        let near = try #require(score(task("a", [.priority(p), .due(due)])))
                        let far = try #require(score(task("b", [.priority(q), .due(.date(days: Self.today + days))])))
                        #expect(near > far, "due today priority \(String(describing: p)) vs \(days) days priority \(String(describing: q))")
                    }
                }
            }
        }
    }

    @Test("every overdue task outranks every task that is not, and ranks higher the later it is")
    func overdueFirst() throws {
        let late = try #require(score(task("a", [.due(.date(days: Self.today - 1))])))
        let later = try #require(score(task("b", [.due(.date(days: Self.today - 5))])))
        let passed = try #require(score(task("c", [.due(.instant(milliseconds: Self.now - 60_000))])))
        let best = try #require(score(task("d", [
            .priority(3), .due(.date(days: Self.today)), .meta(key: PlanningKey.start, value: "2026-01-01T00:00:00Z"),
            .meta(key: PlanningKey.scheduled, value: "1970-01-01"),
        ])))
        #expect(best == 12 + 6 + 4 + 3)
        #expect(late == 31 && later == 35 && passed > 30 && passed < late)
        #expect(min(late, passed) > best)
    }

    @Test("the most distant dates and instants a device may send rank without overflow")
    func extremeDues() throws {
        for due: Due in [.date(days: .max), .date(days: .min), .instant(milliseconds: .max), .instant(milliseconds: .min)] {
            let s = try #require(score(task("a", [.due(due)])))
            #expect(s == Urgency.dueFar || s == Urgency.overdueBase + Urgency.overdueDays, "\(due)")
        }
    }

    @Test("a waiting task is not ranked until its wait has passed; a done one never")
    func waitingAndDone() {
        #expect(score(task("a", [.meta(key: PlanningKey.wait, value: "1970-04-12")])) == nil)  // day 101
        #expect(score(task("b", [.meta(key: PlanningKey.wait, value: "1970-04-11")])) == 0)  // day 100: today
        #expect(score(task("c", [.meta(key: PlanningKey.wait, value: "1970-04-11T11:00:00Z")])) == nil)
        #expect(score(task("d", [.meta(key: PlanningKey.wait, value: "1970-04-11T09:00:00Z")])) == 0)
        #expect(score(task("e", [.done(true), .priority(3)])) == nil)
    }

    @Test("a task blocked by an open dependency sorts after every unblocked one")
    func blockedLast() throws {
        let dependency = PlanningKey.dependencyElement(TaskID("dep")!)
        let blocked = task("a", [.priority(3), .due(.date(days: Self.today - 9))], tags: [dependency])
        #expect(try #require(score(blocked, open: ["dep"])) < 0)
        #expect(score(blocked) == 45.0, "a dependency done or gone blocks nothing")
        let tasks = TaskStateTests.items([
            ("a", 1, [.priority(3), .due(.date(days: Self.today - 9))], [dependency]),
            ("dep", 2, [.priority(0)], []),
            ("idle", 3, [], []),
        ])
        #expect(Urgency.ranked(tasks, now: Self.now, today: Self.today).map(\.id.rawValue) == ["dep", "idle", "a"])
        let doneDependency = TaskStateTests.items([
            ("a", 1, [.priority(3), .due(.date(days: Self.today - 9))], [dependency]), ("dep", 2, [.done(true)], []),
        ])
        #expect(Urgency.ranked(doneDependency, now: Self.now, today: Self.today).map(\.id.rawValue) == ["a"])
    }

    @Test("ties go to the sooner due, then the created order; done tasks are left out")
    func rankedOrder() {
        let tasks = TaskStateTests.items([
            ("a", 10, [.priority(1)], []),
            ("b", 20, [.priority(1), .due(.date(days: 3))], []),
            ("c", 30, [.priority(1), .due(.date(days: 2))], []),
            ("d", 40, [.priority(3), .done(true)], []),
            ("e", 50, [], []),
            ("f", 60, [.priority(2)], []),
            ("g", 1, [.priority(1)], []),
        ])
        #expect(Urgency.ranked(tasks, now: 0, today: 0).map(\.id.rawValue) == ["c", "b", "f", "g", "a", "e"])
        // On day 3, c (due day 2) is overdue and b is due today.
        #expect(Urgency.ranked(tasks, now: 3 * 86_400_000, today: 3).prefix(3).map(\.id.rawValue) == ["c", "b", "f"])
    }

    @Test("the few most urgent of many, kept in one pass, are the first of the full ranking")
    func bestOfManyIsThePrefixOfTheRanking() {
        var rng = SplitMix64(seed: 38)
        let specs: [(String, UInt64, [FieldWrite], [String])] = (0..<400).map { i in
            var writes: [FieldWrite] = [.priority(rng.chance(0.2) ? nil : UInt8(rng.int(0...3)))]
            if rng.chance(0.7) { writes.append(.due(.date(days: Self.today + Int64(rng.int(-12...60))))) }
            if rng.chance(0.1) { writes.append(.meta(key: PlanningKey.start, value: "1970-01-01T00:00:00Z")) }
            let tags = rng.chance(0.1) ? [PlanningKey.dependencyElement(TaskID("t\(rng.int(0...399))")!)] : []
            return ("t\(i)", UInt64(rng.int(1...50)), writes, tags)
        }
        var ranking = UrgencyRanking(now: Self.now, today: Self.today)
        for t in TaskStateTests.items(specs) { ranking.take(UrgencyFacts(t), item: t) }
        let all = ranking.ordered(limit: .max).map(\.id)
        #expect(all.count == 400)
        for n in [0, 1, 2, 5, 60, 99, 100, 399] {
            #expect(ranking.ordered(limit: n).map(\.id) == Array(all.prefix(n)), "n \(n)")
        }
    }
}
