@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TestSupport
import Testing

/// The cycle rule of Spec/crdt.md, "Subtasks, dependencies and dates": concurrent moves on
/// several replicas, merged in any order, give one forest on every replica.
@Suite("task tree")
struct TaskTreeTests {
    static let wall: Int64 = 1_767_225_600_000

    /// Random concurrent parent writes on 2 to 4 replicas over a few shared tasks, with
    /// partial syncs between them; every replica's log in full.
    static func history(_ rng: inout SplitMix64) -> Gen.History {
        let n = rng.int(2...4)
        let replicas = (1...n).map { ReplicaID(high: 0x7E57, low: UInt64($0)) }
        let tasks = Array(Gen.taskIDs.prefix(rng.int(3...Gen.taskIDs.count)))
        var clocks = Array(repeating: HybridLogicalClock(), count: n)
        var views = Array(repeating: TaskState(), count: n)
        var logs = Array(repeating: [Commit](), count: n)
        var delivered = Array(repeating: Array(repeating: 0, count: n), count: n)
        func write(_ r: Int, _ ops: [TaskOperation], at now: Int64) {
            let c = Commit(firstSeq: views[r].version[replicas[r]] + 1, time: clocks[r].tick(wall: UInt64(now)), operations: ops)
            precondition(views[r].apply(c, from: replicas[r]))
            logs[r].append(c)
            delivered[r][r] += 1
        }
        write(0, tasks.map { .add($0) } + tasks.map { .set($0, .title("t")) }, at: wall)
        for r in 1..<n {
            precondition(views[r].apply(logs[0][0], from: replicas[0]))
            delivered[r][0] = 1
        }
        var now = wall
        for _ in 0..<rng.int(4...24) {
            now += Int64(rng.int(0...2))
            let r = rng.int(0...(n - 1))
            if rng.chance(0.25) {
                let s = (r + rng.int(1...(n - 1))) % n
                while delivered[r][s] < logs[s].count && rng.chance(0.7) {
                    precondition(views[r].apply(logs[s][delivered[r][s]], from: replicas[s]))
                    clocks[r].observe(logs[s][delivered[r][s]].time, wall: UInt64(now))
                    delivered[r][s] += 1
                }
                continue
            }
            let child = rng.pick(tasks)
            let parent: TaskID? = rng.chance(0.15) ? nil : rng.pick(tasks)
            var ops: [TaskOperation] = [.set(child, .parent(parent))]
            if rng.chance(0.05) { ops.append(.remove(child, observed: views[r].observedDots(of: child).sorted())) }
            write(r, ops, at: now)
        }
        var out: [ReplicaID: [Commit]] = [:]
        for i in 0..<n { out[replicas[i]] = logs[i] }
        return Gen.History(logs: out)
    }

    /// The forest as each live task's effective parent.
    static func forest(_ state: TaskState) -> [TaskID: TaskID?] {
        let tree = TaskTree(state: state)
        var parents: [TaskID: TaskID?] = [:]
        for t in tree.tasks { parents[t.id] = .some(tree.parent(of: t.id)) }
        return parents
    }

    @Test("random concurrent parent writes on 2 to 4 replicas merged in any order give one forest with no cycle")
    func concurrentMovesConverge() {
        var cycles = 0
        forEachSeed(300) { seed, rng in
            let h = Self.history(&rng)
            let reference = Gen.state(applying: h.sequential)
            let expected = Self.forest(reference)
            for _ in 0..<4 {
                let other = Gen.state(applying: Gen.interleaving(h, &rng))
                #expect(Self.forest(other) == expected, "interleaving, seed \(seed)")
                var merged = Gen.partialState(h, &rng)
                merged.merge(Gen.partialState(h, &rng))
                merged.merge(reference)
                #expect(Self.forest(merged) == expected, "merged partial states, seed \(seed)")
            }
            let tree = TaskTree(state: reference)
            cycles += tree.cutLinks.count
            Self.expectForest(tree, seed: seed)
        }
        #expect(cycles > 20, "the histories must form cycles for the rule to be tested")
    }

    /// No task is its own ancestor, and walking down from the roots reaches every live task once.
    static func expectForest(_ tree: TaskTree, seed: UInt64) {
        var reached = Set<TaskID>()
        var stack = tree.tasks.filter { tree.parent(of: $0.id) == nil }.map(\.id)
        while let id = stack.popLast() {
            #expect(reached.insert(id).inserted, "reached twice, seed \(seed)")
            stack += tree.children(of: id).map(\.id)
        }
        #expect(reached == Set(tree.tasks.map(\.id)), "every task reachable, seed \(seed)")
    }

    @Test("in a cycle made on two replicas, the link written earlier is cut")
    func oldestLinkLoses() {
        let (a, b) = (Gen.taskIDs[0], Gen.taskIDs[1])
        let (r1, r2) = (Gen.replicas[0], Gen.replicas[1])
        let made = Commit(firstSeq: 1, time: Timestamp(physical: 100, logical: 0), operations: [.add(a), .add(b)])
        let aUnderB = Commit(firstSeq: 3, time: Timestamp(physical: 200, logical: 0), operations: [.set(a, .parent(b))])
        let bUnderA = Commit(firstSeq: 1, time: Timestamp(physical: 300, logical: 0), operations: [.set(b, .parent(a))])
        for order in [[(r1, made), (r1, aUnderB), (r2, bUnderA)], [(r2, bUnderA), (r1, made), (r1, aUnderB)]] {
            let tree = TaskTree(state: Gen.state(applying: order))
            #expect(tree.parent(of: a) == nil && tree.parent(of: b) == a && tree.cutLinks == [a])
        }
    }

    @Test("a chain 10,000 deep, and a cycle through all of it, are built without recursion and quickly")
    func deepChain() {
        let ids = (0..<10_000).map { TaskID("chain-\($0)")! }
        let items = ids.enumerated().map { i, id in
            TaskItem(
                id: id, title: "t", notes: nil, isDone: false, completedAt: nil, priority: nil, due: nil, tags: [], list: nil,
                meta: [PlanningKey.parent: ids[(i + 1) % ids.count].rawValue], createdAt: .zero, updatedAt: .zero, isDeleted: false)
        }
        let start = ContinuousClock.now
        let tree = TaskTree(items) { _ in [:] }
        let outline = tree.outline(items)
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(tree.cutLinks.count == 1 && outline.map(\.depth).max() == 9_999)
        Self.expectForest(tree, seed: 0)
    }
}
