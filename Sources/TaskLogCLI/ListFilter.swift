@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// What `list` (and `search`) keeps beyond the store's query (Spec/cli.md, "Listing"): words of
/// the title or notes, every `--tag` and `--list` given, and due dates. Words and tags match
/// case- and accent-insensitively. A date counts as its whole local day: before D means
/// before D's first moment, after D after its last.
struct ListFilter {
    var words: WordSearch
    var tags: [String] = []
    var lists: [String] = []
    var overdue = false
    var before: Int64?
    var after: Int64?
    /// The time now and the local date, read once (as the table shows them).
    let clock = DueClock()

    /// The filter the arguments ask for, or nil when the store's query says it all.
    init?(_ context: Context, words: [String]) throws(UsageError) {
        self.words = WordSearch(words.flatMap { $0.split(separator: " ").map(String.init) })
        let a = context.arguments
        tags = try a.values(Options.tagFilter).map(TextFolding.folded)
        lists = try a.values(Options.listFilter)
        overdue = a.has(Flags.overdue)
        let (before, after) = (try a.value(Options.dueBefore), try a.value(Options.dueAfter))
        self.before = before.map { start(of: $0) }
        self.after = after.map { end(of: $0) }
        // Tags match case-insensitively, which the store's query (exact) does not.
        if self.words.isEmpty && tags.isEmpty && lists.count <= 1 && !overdue && before == nil && after == nil { return nil }
    }

    func admits(_ t: TaskItem) -> Bool {
        if !words.isEmpty && !words.matches(t) { return false }
        if !tags.isEmpty {
            let own = Set(t.tags.map(TextFolding.folded))
            guard tags.allSatisfy(own.contains) else { return false }
        }
        if !lists.allSatisfy({ $0 == t.list }) { return false }
        return admits(due: t.due)
    }

    /// ``admits(_:)-(TaskItem)`` for a saved task, tested in place: what it says of the task
    /// made an item.
    func admits(_ t: borrowing SavedTask) -> Bool {
        if !words.isEmpty && !words.matches(t) { return false }
        for tag in tags where !t.hasTag(folded: tag) { return false }
        for list in lists where !t.isOnList(list) { return false }
        return admits(due: t.savedDue)
    }

    private func admits(due: Due?) -> Bool {
        guard overdue || before != nil || after != nil else { return true }
        guard let due else { return false }
        if overdue && !due.isOverdue(now: clock.now, today: clock.today) { return false }
        if let before, end(of: due) > before { return false }
        if let after, start(of: due) < after { return false }
        return true
    }

    /// The first millisecond a due covers: a date's local midnight, or the instant.
    private func start(of due: Due) -> Int64 {
        switch due {
        case .date(let d): clock.zone.instant(days: d, hour: 0, minute: 0)
        case .instant(let ms): ms
        }
    }

    /// The first millisecond after a due: the next local midnight, or the instant plus one.
    private func end(of due: Due) -> Int64 {
        switch due {
        case .date(let d): clock.zone.instant(days: d + 1, hour: 0, minute: 0)
        case .instant(let ms): ms + 1
        }
    }
}
