#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension TaskStore {
    /// ``scanTasks(_:into:)`` in parts side by side, one sink per part, split where the
    /// snapshot's task index says tasks start: what a search of a large store needs
    /// (``TaskState/forEachTask(_:mergingSaved:head:splits:words:into:)``). `makeSink` makes
    /// the sink of part k; the sinks used are returned in order, each having had its turn.
    /// When the state is read instead (as ``scanTasks(_:into:)`` says when), one sink gets
    /// every task.
    /// - Parameters:
    ///   - words: a saved task whose title and notes do not hold them is stepped over unread:
    ///     every sink must refuse such a task anyway.
    ///   - sideBySide: false reads in one part (for a listing that writes about every task,
    ///     which a second part could only hold until its turn).
    /// - Returns: the sinks, and whether a live task may name a parent or a dependency (when
    ///   none does, no task's place or STATE in a listing depends on another); with a limit
    ///   in `query`, of the tasks read before it was reached.
    /// - Throws: ``StoreError/damagedSnapshot(path:reason:)`` when the snapshot turns out
    ///   damaged after tasks were handed out (it is removed; listing again reads the logs).
    package func scanTasks<Sink: TaskPartSink>(
        _ query: TaskQuery, words: WordSearch?, sideBySide: Bool = true, makeSink: (_ part: Int) -> Sink
    ) throws(StoreError) -> (sinks: [Sink], linked: Bool) {
        let prepared = query.sort == .created ? try savedListing() : nil
        guard let (saved, head, after, index) = prepared else { return try listedFromState(query, makeSink(0)) }
        let parts = sideBySide && query.limit == nil ? StateCodec.partsWorthReading(taskCount: head.taskCount) : 1
        let splits = parts > 1 ? index?.splits(into: parts, bodyCount: saved.count) ?? [] : []
        var sinks = (0...splits.count).map { NotedPart(sink: makeSink($0)) }
        do {
            let linked = try after.forEachTask(query, mergingSaved: saved, head: head, splits: splits, words: words, into: &sinks)
            return (sinks.map(\.sink), linked)
        } catch {
            guard sinks.contains(where: \.handedOut) else { return try listedFromState(query, makeSink(0)) }
            unlink(layout.snapshotFile)
            throw .damagedSnapshot(path: layout.snapshotFile, reason: "\(error)")
        }
    }

    /// The tasks matching `query`, from the state, to `sink` in its turn.
    private func listedFromState<Sink: TaskPartSink>(_ query: TaskQuery, _ sink: Sink) throws(StoreError) -> (sinks: [Sink], linked: Bool) {
        var sink = sink
        sink.takeTurn()
        try forEachTask(query) { sink.take($0) }
        return ([sink], try withState { $0.holdsLinks })
    }

    /// A part's sink, noting whether it handed a task out: took one in its turn, or held one
    /// when its turn came.
    private struct NotedPart<Sink: TaskPartSink>: TaskPartSink {
        var sink: Sink
        private var held = false
        private var inTurn = false
        private(set) var handedOut = false

        init(sink: Sink) { self.sink = sink }

        mutating func take(_ task: TaskItem) {
            note()
            sink.take(task)
        }

        mutating func take(_ task: borrowing SavedTask) {
            note()
            sink.take(task)
        }

        private mutating func note() { if inTurn { handedOut = true } else { held = true } }

        var wantsPause: Bool { sink.wantsPause }

        mutating func takeTurn() {
            inTurn = true
            handedOut = held
            sink.takeTurn()
        }
    }
}
