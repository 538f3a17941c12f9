@_spi(Engine) import TaskModel

/// The rows of a task table as they are added, each kept as its cells' bytes rather than as
/// the task (Spec/cli.md, "Tables"): what
/// ``Render/table(_:depths:states:)`` writes, and what the parts of a search gather, in
/// order, before the table is written.
struct TableRows {
    static let header = ["ID", "DONE", "PRI", "DUE", "TITLE", "TAGS", "LIST", "STATE"]
    static let columns = header.count
    /// The columns dropped when no row has a cell in them.
    static let optional = [5, 6, 7]
    static let title = 4
    static let due = 3

    /// The cells of every row, one after another, and where each ends; ``columns`` a row.
    private(set) var cells: [UInt8] = []
    private(set) var ends: [Int] = []
    /// Each row's DUE colour on a terminal that takes colour, else nil.
    private(set) var colours: [String?] = []

    var count: Int { colours.count }

    /// The header, as a row.
    static let headerRow = {
        var row = TableRows()
        for name in header { row.add(name) }
        row.colours.append(nil)
        return row
    }()

    /// Adds the row of `t`, its title indented `depth` levels, with `state` as its STATE cell.
    mutating func append(_ t: TaskItem, depth: Int = 0, state: String = "", clock: DueClock) {
        let due = t.due.map { clock.text($0, open: !t.isDone) }
        add(Render.shortID(t.id))
        add(t.isDone ? "x" : "")
        add(t.priority.map { String($0) } ?? "")
        add(Self.dueCell(due?.text, recurring: t.recurrence != nil))
        add(String(repeating: "  ", count: min(depth, Render.deepestIndent)) + TerminalText.escaped(t.title))
        add(TerminalText.escaped(t.tags.joined(separator: ",")))
        add(TerminalText.escaped(t.list ?? ""))
        add(state)
        colours.append(clock.colours ? due?.urgency.colour : nil)
    }

    /// Adds the row of a saved task read in place, in a store where no task names a parent
    /// or a dependency: the row its item would have, with its STATE.
    mutating func append(_ t: borrowing SavedTask, clock: DueClock) {
        let due = t.savedDue.map { clock.text($0, open: !t.isDone) }
        if let (high, _) = t.id.uuid {
            for i in 0..<8 { cells.append(Self.hex[Int(high >> (60 - 4 * UInt64(i)) & 0xF)]) }
            ends.append(cells.count)
        } else {
            add(Render.shortID(t.id))
        }
        addByte(t.isDone ? UInt8(ascii: "x") : nil)
        addByte(t.savedPriority.map { UInt8(ascii: "0") + $0 })
        add(Self.dueCell(due?.text, recurring: t.isRecurring))
        addEscaped(t.savedTitle)
        let tags = t.savedTags
        if tags.isEmpty { addByte(nil) } else {
            Array(tags.map(Array.init).joined(separator: [UInt8(ascii: ",")])).withUnsafeBufferPointer { addEscaped($0) }
        }
        addEscaped(t.savedList ?? UnsafeBufferPointer(start: nil, count: 0))
        let (started, waiting) = (!t.isDone && t.isStarted, t.waitUntil?.isAhead(now: clock.now, today: clock.today) ?? false)
        if started || waiting {
            add(Render.state(started: started, blocked: false, waiting: waiting, progress: (0, 0)))
        } else {
            addByte(nil)
        }
        colours.append(clock.colours ? due?.urgency.colour : nil)
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// The DUE cell: the due's text, then the mark of a recurring task.
    private static func dueCell(_ due: String?, recurring: Bool) -> String {
        guard recurring else { return due ?? "" }
        return due.map { $0 + " " + Render.recurrenceMarker } ?? Render.recurrenceMarker
    }

    private mutating func add(_ cell: String) {
        var cell = cell
        cell.withUTF8 { cells.append(contentsOf: $0) }
        ends.append(cells.count)
    }

    /// Adds a cell of one byte, or an empty one.
    private mutating func addByte(_ byte: UInt8?) {
        if let byte { cells.append(byte) }
        ends.append(cells.count)
    }

    /// Adds text as ``TerminalText/escaped(_:keepingNewlines:)`` shows it: printable ASCII as it is.
    private mutating func addEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            return add(TerminalText.escaped(String(decoding: text, as: UTF8.self)))
        }
        cells.append(contentsOf: text)
        ends.append(cells.count)
    }

    /// Adds the rows of `other` after these.
    mutating func append(contentsOf other: TableRows) {
        let shift = cells.count
        cells += other.cells
        ends += other.ends.map { $0 + shift }
        colours += other.colours
    }

    /// Keeps the first `n` rows.
    mutating func keepFirst(_ n: Int) {
        guard n < count else { return }
        cells.removeLast(cells.count - (n == 0 ? 0 : ends[n * Self.columns - 1]))
        ends.removeLast(ends.count - n * Self.columns)
        colours.removeLast(colours.count - n)
    }
}
