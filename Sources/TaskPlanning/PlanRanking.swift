import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Why ranking through the urgency plan stopped: the plan or the body disagrees with itself
/// (the plan is then set aside and every task read), or the store failed.
enum PlanFailure: Error {
    case damaged(String)
    case store(StoreError)
}

/// A task ranked through the urgency plan: its key, and where it is: at an offset of the
/// snapshot's body, or an item at hand.
struct PlanCandidate {
    var key: RankKey
    var offset: Int?
    var item: TaskItem?
}

/// Ranks the open tasks of a store through the snapshot's urgency plan (``UrgencySource``),
/// reading only the tasks it needs: a saved task as the plan lists it unless the log after
/// the snapshot touched it; those touched are ranked from their merged items. Gives what
/// ranking every task gives (``UrgencyRanking``).
struct PlanRanking {
    let store: TaskStore
    let source: UrgencySource
    let reader: SavedTaskReader
    let now: Int64
    let today: Int64
    /// Whether a task that a ranked one depends on is open (live and not done), as looked up.
    private var isOpen: [TaskID: Bool] = [:]

    /// The ranking of `store` at `now` and `today`, or nil when it has no usable snapshot.
    init?(_ store: TaskStore, now: Int64, today: Int64) throws(PlanFailure) {
        let source: UrgencySource?
        do { source = try store.urgencySource() } catch { throw .store(error) }
        guard let source else { return nil }
        reader = SavedTaskReader(source.saved, head: source.head, check: source.checkBody)
        (self.store, self.source, self.now, self.today) = (store, source, now, today)
    }

    var plan: UrgencyPlan { source.plan }

    /// The facts of the task of entry `i` of `list`, checked against the entry, and its
    /// offset; nil when the log after the snapshot touched or removed it.
    func facts(_ list: UrgencyPlan.List, _ i: Int) throws(PlanFailure) -> (facts: UrgencyFacts, offset: Int)? {
        var found: (facts: UrgencyFacts, offset: Int)?
        try forEachEntry(list, i..<(i + 1)) { facts, offset, _ in found = (facts, offset) }
        return found
    }

    /// Hands `body` the tasks of entries `range` of `list`, read in place, each with its
    /// facts checked against its entry and its offset; those the log after the snapshot
    /// touched or removed are left out.
    func forEachEntry(
        _ list: UrgencyPlan.List, _ range: Range<Int>,
        _ body: (UrgencyFacts, Int, borrowing SavedTask) throws(PlanFailure) -> Void
    ) throws(PlanFailure) {
        var failure: PlanFailure?
        do {
            let entries = try plan.entries(list, range)
            try reader.read(at: entries.map(\.offset)) { i, task, live in
                guard source.after.leavesAsSaved(task.id, live: live) else { return true }
                let facts = UrgencyFacts(task)
                let split = UrgencyPlan.split(list.role == .rank ? facts.due : facts.scheduled)
                guard !task.isDone, split.form == list.form, split.value == entries[i].value,
                    list.role == .scheduled || facts.planFacts.rankClass == list.rankClass
                else {
                    failure = .damaged("the urgency plan lists task \(facts.id) where it does not belong")
                    return false
                }
                do throws(PlanFailure) {
                    try body(facts, entries[i].offset, task)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        } catch {
            throw .damaged("\(error)")
        }
        if let failure { throw failure }
    }

    /// The bound of the scores of the tasks of `list` from entry `i` on.
    func bound(_ list: UrgencyPlan.List, _ i: Int) throws(PlanFailure) -> Double {
        let value: Int64
        do { value = try plan.entry(list, i).value } catch { throw .damaged("\(error)") }
        let due: Due? = switch list.form {
        case .none: nil
        case .date: .date(days: value)
        case .instant: .instant(milliseconds: value)
        }
        return UrgencyFacts(bounding: due, rankClass: list.rankClass).score(now: now, today: today)!
    }

    /// The key of a task with `facts` (blocked ones scored down), or nil when it is waiting.
    mutating func key(_ facts: UrgencyFacts) throws(PlanFailure) -> RankKey? {
        guard var score = facts.score(now: now, today: today) else { return nil }
        if !facts.dependencies.isEmpty, try isBlocked(facts.dependencies) { score += Urgency.blockedTerm }
        return RankKey(score: score, dueKey: facts.due?.sortKey ?? .max, created: facts.created, id: facts.id)
    }

    /// Whether a task depending on `dependencies` is blocked: one of them is open.
    mutating func isBlocked(_ dependencies: [TaskID]) throws(PlanFailure) -> Bool {
        try lookUp(dependencies)
        return dependencies.contains { isOpen[$0]! }
    }

    /// Looks up whether each of `ids` not looked up yet is open.
    mutating func lookUp(_ ids: some Sequence<TaskID>) throws(PlanFailure) {
        let missing = Set(ids.filter { isOpen[$0] == nil })
        guard !missing.isEmpty else { return }
        let found: [TaskID: TaskItem]
        do { found = try store.liveTasks(missing) } catch { throw .store(error) }
        for id in missing { isOpen[id] = found[id].map { !$0.isDone } ?? false }
    }

    /// The open tasks the log after the snapshot touched, as merged, with their facts.
    func touched() throws(PlanFailure) -> [(item: TaskItem, facts: UrgencyFacts)] {
        let ids = source.after.touchedIDs
        guard !ids.isEmpty else { return [] }
        do {
            return try store.liveTasks(Set(ids)).values.filter { !$0.isDone }.map { ($0, UrgencyFacts($0)) }
        } catch {
            throw .store(error)
        }
    }

    /// The task saved at `offset`, as an item.
    func item(at offset: Int) throws(PlanFailure) -> TaskItem {
        var item: TaskItem?
        do { try reader.read(at: offset) { task, _ in item = task.item } } catch { throw .damaged("\(error)") }
        return item!
    }

    /// The items of `candidates`, in their order.
    func items(_ candidates: [PlanCandidate]) throws(PlanFailure) -> [TaskItem] {
        var out: [TaskItem] = []
        out.reserveCapacity(candidates.count)
        for c in candidates {
            if let item = c.item { out.append(item) } else { out.append(try item(at: c.offset!)) }
        }
        return out
    }
}
