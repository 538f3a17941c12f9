@_spi(Engine) import TaskModel

extension TableRows {
    /// The table of the rows of `parts`, in order, the first `limit` of them: the header
    /// first, one line a row, without a line break after the last. Empty optional columns
    /// are left out, and no line ends in spaces. On a terminal narrower than the table
    /// (`terminalColumns`), titles are cut to fit, each ending in an ellipsis, keeping at
    /// least 12 columns of title.
    static func rendered(_ parts: [TableRows], first limit: Int? = nil, terminalColumns: Int? = TerminalText.columns) -> [UInt8] {
        var left = limit ?? .max
        let shown = parts.map { part in
            defer { left -= min(left, part.count) }
            return min(left, part.count)
        }
        var widths = header.map(Render.displayWidth)
        var filled = [Bool](repeating: false, count: columns)
        for (part, rows) in zip(parts, shown) {
            part.forEachRow(rows) { row in
                for (c, cell) in row.enumerated() where cell.width > 0 {
                    widths[c] = max(widths[c], cell.width)
                    filled[c] = true
                }
            }
        }
        let keep = (0..<columns).map { !optional.contains($0) || filled[$0] }
        let room = titleRoom(widths, keep, terminalColumns)
        if let room { widths[title] = room }
        // At most every cell, padded to its column's width and two more, a colour, a cut
        // title's ellipsis and the line break.
        let perRow = zip(widths, keep).map { $0.1 ? $0.0 + 2 : 0 }.reduce(3 * DueClock.reset.utf8.count + 4, +)
        let bound = zip(parts, shown).map { $0.0.cells.count + $0.1 * perRow }.reduce(header.joined().utf8.count + perRow, +)
        return [UInt8](unsafeUninitializedCapacity: bound) { buffer, written in
            var w = LineWriter(out: buffer.baseAddress!, keep: keep, widths: widths, titleRoom: room)
            Array(header.joined().utf8).withUnsafeBufferPointer { names in
                var row: [Cell] = []
                for name in header {
                    let start = row.last.map { $0.text.baseAddress! - names.baseAddress! + $0.text.count } ?? 0
                    row.append(Cell(text: UnsafeBufferPointer(rebasing: names[start..<(start + name.utf8.count)]), width: name.utf8.count))
                }
                w.line(row, colour: nil)
            }
            for (part, rows) in zip(parts, shown) {
                var r = 0
                part.forEachRow(rows) { row in
                    w.byte(10)
                    w.line(row, colour: dueColours[Int(part.colours[r])])
                    r += 1
                }
            }
            written = w.at
            precondition(written <= bound, "a table longer than its bound")
        }
    }

    /// A cell's bytes and the terminal columns it takes.
    struct Cell {
        var text: UnsafeBufferPointer<UInt8>
        var width: Int
    }

    /// Calls `body` with the cells of each of the first `rows` rows (valid during the call).
    private func forEachRow(_ rows: Int, _ body: ([Cell]) -> Void) {
        cells.withUnsafeBufferPointer { all in
            var row: [Cell] = []
            row.reserveCapacity(Self.columns)
            var start = 0
            for r in 0..<rows {
                row.removeAll(keepingCapacity: true)
                for c in 0..<Self.columns {
                    let end = Int(ends[r * Self.columns + c])
                    let text = UnsafeBufferPointer(rebasing: all[start..<end])
                    row.append(Cell(text: text, width: Self.width(text)))
                    start = end
                }
                body(row)
            }
        }
    }

    /// How many terminal columns a cell takes (``Render/displayWidth(_:)``).
    private static func width(_ text: UnsafeBufferPointer<UInt8>) -> Int {
        text.contains { $0 >= 0x80 } ? String(decoding: text, as: UTF8.self).count : text.count
    }

    /// The width titles are cut to on a terminal narrower than the table, or nil.
    private static func titleRoom(_ widths: [Int], _ keep: [Bool], _ terminalColumns: Int?) -> Int? {
        guard let columns = terminalColumns else { return nil }
        let total = zip(widths, keep).filter(\.1).map { $0.0 + 2 }.reduce(-2, +)
        guard total > columns else { return nil }
        let room = max(12, widths[title] - (total - columns))
        return room < widths[title] ? room : nil
    }
}

/// Writes the lines of a table into memory with room for them, each cell padded to its
/// column's width.
private struct LineWriter {
    let out: UnsafeMutablePointer<UInt8>
    private(set) var at = 0
    let keep: [Bool]
    let lastKept: Int
    let widths: [Int]
    let titleRoom: Int?

    init(out: UnsafeMutablePointer<UInt8>, keep: [Bool], widths: [Int], titleRoom: Int?) {
        self.out = out
        self.keep = keep
        lastKept = keep.lastIndex(of: true)!
        self.widths = widths
        self.titleRoom = titleRoom
    }

    mutating func byte(_ b: UInt8) {
        out[at] = b
        at += 1
    }

    private mutating func put(_ text: UnsafeBufferPointer<UInt8>) {
        guard let base = text.baseAddress else { return }
        (out + at).initialize(from: base, count: text.count)
        at += text.count
    }

    private mutating func put(_ text: String) {
        var text = text
        text.withUTF8 { put($0) }
    }

    /// One line of `row`'s cells, the DUE cell in `colour` when there is one.
    mutating func line(_ row: [TableRows.Cell], colour: String?) {
        let lineStart = at
        for c in 0..<TableRows.columns where keep[c] {
            var width = row[c].width
            if c == TableRows.title, let room = titleRoom, width > room {
                let cut = String(String(decoding: row[c].text, as: UTF8.self).prefix(room - 1)) + "…"
                width = Render.displayWidth(cut)
                put(cut)
            } else if c == TableRows.due, let colour {
                put(colour)
                put(row[c].text)
                put(DueClock.reset)
            } else {
                put(row[c].text)
            }
            if c != lastKept {
                let n = widths[c] - width + 2
                (out + at).initialize(repeating: 32, count: n)
                at += n
            }
        }
        while at > lineStart && out[at - 1] == 32 { at -= 1 }
    }
}
