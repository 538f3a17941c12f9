@_spi(Engine) import TaskModel

/// The rows of a task table as they are added, each kept as its cells' bytes rather than as
/// the task (Spec/cli.md, "Tables"): what ``Render/table(_:depths:states:)`` writes, and
/// what each part of a search gathers before the table is written
/// (``rendered(_:first:terminalColumns:)``).
struct TableRows {
    static let header = ["ID", "DONE", "PRI", "DUE", "TITLE", "TAGS", "LIST", "STATE"]
    static let columns = header.count
    /// The columns dropped when no row has a cell in them.
    static let optional = [5, 6, 7]
    static let title = 4
    static let due = 3
    /// The DUE colours a row may have, by ``colours`` code (0 for none).
    static let dueColours = [nil, DueClock.Urgency.overdue.colour, DueClock.Urgency.today.colour]

    /// The cells of every row, one after another, and where each ends; ``columns`` a row.
    private(set) var cells: [UInt8] = []
    private(set) var ends: [UInt32] = []
    /// Each row's DUE colour (an index into ``dueColours``) on a terminal that takes colour.
    private(set) var colours: [UInt8] = []

    var count: Int { colours.count }

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
        colours.append(Self.colourCode(due?.urgency, clock))
    }

    /// Adds the row of a saved task read in place, in a store where no task names a parent
    /// or a dependency: the row its item would have, with its STATE.
    mutating func append(_ t: borrowing SavedTask, clock: DueClock) {
        let due = t.savedDue.map { clock.text($0, open: !t.isDone) }
        if let (high, _) = t.id.uuid {
            for i in 0..<8 { cells.append(Self.hex[Int(high >> (60 - 4 * UInt64(i)) & 0xF)]) }
            ends.append(UInt32(cells.count))
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
        colours.append(Self.colourCode(due?.urgency, clock))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func colourCode(_ urgency: DueClock.Urgency?, _ clock: DueClock) -> UInt8 {
        guard clock.colours, let colour = urgency?.colour else { return 0 }
        return UInt8(dueColours.firstIndex(of: colour)!)
    }

    /// The DUE cell: the due's text, then the mark of a recurring task.
    private static func dueCell(_ due: String?, recurring: Bool) -> String {
        guard recurring else { return due ?? "" }
        return due.map { $0 + " " + Render.recurrenceMarker } ?? Render.recurrenceMarker
    }

    private mutating func add(_ cell: String) {
        var cell = cell
        cell.withUTF8 { cells.append(contentsOf: $0) }
        ends.append(UInt32(cells.count))
    }

    /// Adds a cell of one byte, or an empty one.
    private mutating func addByte(_ byte: UInt8?) {
        if let byte { cells.append(byte) }
        ends.append(UInt32(cells.count))
    }

    /// Adds text as ``TerminalText/escaped(_:keepingNewlines:)`` shows it: printable ASCII as it is.
    private mutating func addEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            return add(TerminalText.escaped(String(decoding: text, as: UTF8.self)))
        }
        cells.append(contentsOf: text)
        ends.append(UInt32(cells.count))
    }
}
