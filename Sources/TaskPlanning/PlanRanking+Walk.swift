import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// The `n` best of the candidates offered, best first (``RankKey/precedes(_:_:)``).
struct BestCandidates {
    let n: Int
    private(set) var kept: [PlanCandidate] = []

    init(_ n: Int) { self.n = n }

    var isFull: Bool { kept.count >= n }
    /// The last kept, which a newcomer must precede once ``isFull``.
    var last: RankKey? { kept.last?.key }

    mutating func offer(_ c: PlanCandidate) {
        if isFull, let last, !RankKey.precedes(c.key, last) { return }
        var (low, high) = (0, kept.count)
        while low < high {
            let mid = (low + high) / 2
            if RankKey.precedes(c.key, kept[mid].key) { high = mid } else { low = mid + 1 }
        }
        kept.insert(c, at: low)
        if kept.count > n { kept.removeLast() }
    }
}

/// Where a walk stands in one rank list of the plan.
struct PlanCursor {
    let list: UrgencyPlan.List
    var next: Int
    /// No later entry can be among the best.
    var finished = false
    /// The bound at `next`, once worked out.
    var bound: Double?
}

extension PlanRanking {
    /// Offers to `best` the tasks of the rank lists from the cursors on that `admits` lets
    /// through, reading them most hopeful first: always the list whose next entry has the
    /// highest bound. A list is left once its next entry, at its bound, would not precede the
    /// last of a full `best`: its later entries, due no sooner and created no earlier, score
    /// no higher. The walk ends when no list is left.
    mutating func walk(
        _ cursors: inout [PlanCursor], into best: inout BestCandidates, admits: (UrgencyFacts) -> Bool
    ) throws(PlanFailure) {
        guard best.n > 0 else { return }
        while let pick = try mostHopeful(&cursors) {
            let bound = cursors[pick].bound!
            if best.isFull, let last = best.last, bound < last.score { return }
            let list = cursors[pick].list
            guard let (facts, offset) = try facts(list, cursors[pick].next) else {
                cursors[pick].next += 1
                cursors[pick].bound = nil
                continue
            }
            let hope = RankKey(score: bound, dueKey: facts.due?.sortKey ?? .max, created: facts.created, id: facts.id)
            if best.isFull, let last = best.last, !RankKey.precedes(hope, last) {
                cursors[pick].finished = true
                continue
            }
            cursors[pick].next += 1
            cursors[pick].bound = nil
            if admits(facts), let key = try key(facts) { best.offer(PlanCandidate(key: key, offset: offset)) }
        }
    }

    /// The cursor whose next entry has the highest bound, each bound worked out once; nil
    /// when every list is finished or read to its end.
    private func mostHopeful(_ cursors: inout [PlanCursor]) throws(PlanFailure) -> Int? {
        var pick: Int?
        for i in cursors.indices where !cursors[i].finished && cursors[i].next < cursors[i].list.count {
            if cursors[i].bound == nil { cursors[i].bound = try bound(cursors[i].list, cursors[i].next) }
            if pick == nil || cursors[i].bound! > cursors[pick!].bound! { pick = i }
        }
        return pick
    }

    /// The `n` most urgent open tasks, best first.
    mutating func top(_ n: Int) throws(PlanFailure) -> [TaskItem] {
        var best = BestCandidates(n)
        for (item, facts) in try touched() {
            if let key = try key(facts) { best.offer(PlanCandidate(key: key, item: item)) }
        }
        var cursors = plan.lists.filter { $0.role == .rank }.map { PlanCursor(list: $0, next: 0) }
        try walk(&cursors, into: &best) { _ in true }
        return try items(best.kept)
    }
}

extension PlanRanking {
    /// `body` run on the ranking of `store` through its urgency plan; nil when it cannot be
    /// ranked so (no usable snapshot), or the plan turned out damaged (it is then removed,
    /// and the next ranking builds it anew).
    static func through<R>(
        _ store: TaskStore, now: Int64, today: Int64, _ body: (inout PlanRanking) throws(PlanFailure) -> R
    ) throws(StoreError) -> R? {
        do {
            guard var ranking = try PlanRanking(store, now: now, today: today) else { return nil }
            return try body(&ranking)
        } catch {
            switch error {
            case .store(let e): throw e
            case .damaged:
                store.discardUrgencyPlan()
                return nil
            }
        }
    }
}

extension Urgency {
    /// ``top(_:in:now:today:)`` through the snapshot's urgency plan (``PlanRanking/through(_:now:today:_:)``).
    static func topThroughPlan(_ n: Int, in store: TaskStore, now: Int64, today: Int64) throws(StoreError) -> [TaskItem]? {
        try PlanRanking.through(store, now: now, today: today) { (ranking) throws(PlanFailure) in try ranking.top(n) }
    }
}
