@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

// `list`, `list WORD…`, `search WORD…` and `list` with a filter, as a table or as JSON: the
// store is read in parts side by side (TaskStore.scanTasks(_:words:makeSink:)), each task
// tested in place, and only those shown are made into rows or JSON, in the listing's order.

extension Context {
    /// Prints as a JSON array, written as it comes, the tasks `query`, `filter` and `waiting`
    /// keep, the first `limit` of them. Without a filter nearly every task is written, and a
    /// part beside the first could only hold them: the store is then read in one part.
    func printJSONListing(_ store: TaskStore, _ query: TaskQuery, _ filter: ListFilter?, _ waiting: WaitingRule, limit: Int?) throws {
        let array = JSONArrayOutput(limit: limit)
        _ = try store.scanTasks(query, words: Self.words(filter), sideBySide: filter != nil) { _ in
            FilteredPart(filter, waiting, limit: limit, output: JSONArrayPart(array))
        }
        report(store)
        array.finish()
    }

    /// Prints as a table the tasks `query`, `filter` and `waiting` keep, the first `limit` of
    /// them, each row made as its task is read. Prints nothing and returns false when some
    /// task may name a parent or a dependency: the table then needs the tasks side by side.
    func printTable(_ store: TaskStore, _ query: TaskQuery, _ filter: ListFilter?, _ waiting: WaitingRule, limit: Int?) throws -> Bool {
        let clock = DueClock()
        let (parts, linked) = try store.scanTasks(query, words: Self.words(filter)) { _ in
            FilteredPart(filter, waiting, limit: limit, output: TableRowsPart(clock: clock))
        }
        guard !linked else { return false }
        report(store)
        let rows = parts.map(\.output.rows)
        if min(limit ?? .max, rows.map(\.count).reduce(0, +)) == 0 {
            Output.line("no tasks")
        } else {
            Output.bytes(TableRows.rendered(rows, first: limit) + [10])
        }
        return true
    }

    /// The words a listing looks for, if any: a saved task without them is not read.
    private static func words(_ filter: ListFilter?) -> WordSearch? {
        filter.flatMap { $0.words.isEmpty ? nil : $0.words }
    }
}

/// Hands on to `output` the tasks a listing's filter and waiting rule admit, the first
/// `limit` of them; a saved task is tested in place.
struct FilteredPart<Output: TaskPartSink>: TaskPartSink {
    let filter: ListFilter?
    let waiting: WaitingRule
    var output: Output
    private var room: Int

    init(_ filter: ListFilter?, _ waiting: WaitingRule, limit: Int?, output: Output) {
        self.filter = filter
        self.waiting = waiting
        self.output = output
        room = limit ?? .max
    }

    mutating func take(_ task: TaskItem) {
        guard room > 0, filter?.admits(task) ?? true, waiting.admits(task) else { return }
        room -= 1
        output.take(task)
    }

    mutating func take(_ task: borrowing SavedTask) {
        guard room > 0, filter?.admits(task) ?? true, waiting.admits(waitUntil: task.waitUntil) else { return }
        room -= 1
        output.take(task)
    }

    var wantsPause: Bool { output.wantsPause }
    mutating func takeTurn() { output.takeTurn() }
}

/// The rows of one part of a table, in a store where no task names a parent or a dependency.
struct TableRowsPart: TaskPartSink {
    let clock: DueClock
    private(set) var rows = TableRows()

    init(clock: DueClock) { self.clock = clock }

    mutating func take(_ task: TaskItem) { rows.append(task, state: Render.state(ofUnlinked: task, clock: clock), clock: clock) }
    mutating func take(_ task: borrowing SavedTask) { rows.append(task, clock: clock) }
    var wantsPause: Bool { false }
    func takeTurn() {}
}

/// A JSON array of tasks written by the parts of a listing (``JSONArrayPart``), the first
/// `limit` tasks that come. Only the part whose turn it is writes to it.
final class JSONArrayOutput {
    private var writer = JSONTaskArrayWriter()
    private let limit: Int

    init(limit: Int?) { self.limit = limit ?? .max }

    func take(_ task: TaskItem) { if writer.count < limit { writer.take(task) } }
    func take(_ task: borrowing SavedTask) { if writer.count < limit { writer.take(task) } }

    /// Adds the tasks a part held until its turn, as many as the limit leaves room for.
    func take(held: JSONWriter, ends: [Int]) { writer.take(held: held, ends: ends, first: min(ends.count, limit - writer.count)) }

    /// Closes the array and writes what is left.
    func finish() { writer.finish() }
}

/// One part of a JSON array of tasks written in parts: in its turn each task goes to the
/// array as it comes; before, the part holds them, and asks for a pause once it holds
/// ``heldBound`` bytes, so that what waits for its turn stays bounded.
struct JSONArrayPart: TaskPartSink {
    static let heldBound = 8 << 20
    let array: JSONArrayOutput
    private var held = JSONWriter()
    /// Where each task held ends in `held`.
    private var ends: [Int] = []
    private var inTurn = false

    init(_ array: JSONArrayOutput) { self.array = array }

    mutating func take(_ task: TaskItem) {
        if inTurn { return array.take(task) }
        if !ends.isEmpty { held.raw(",\n") }
        held.task(task)
        ends.append(held.count)
    }

    mutating func take(_ task: borrowing SavedTask) {
        if inTurn { return array.take(task) }
        if !ends.isEmpty { held.raw(",\n") }
        held.task(task)
        ends.append(held.count)
    }

    var wantsPause: Bool { !inTurn && held.count >= Self.heldBound }

    mutating func takeTurn() {
        inTurn = true
        array.take(held: held, ends: ends)
        held = JSONWriter()
        ends = []
    }
}
