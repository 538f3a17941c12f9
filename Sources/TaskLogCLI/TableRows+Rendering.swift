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
        let cellWidths = zip(parts, shown).map { $0.0.cellWidths(rows: $0.1) }
        var widths = header.map(Render.displayWidth)
        var filled = [Bool](repeating: false, count: columns)
        for partWidths in cellWidths {
            for (i, width) in partWidths.enumerated() where width > 0 {
                widths[i % columns] = max(widths[i % columns], Int(width))
                filled[i % columns] = true
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
                w.line(colour: nil) { c in
                    let start = header[..<c].map(\.utf8.count).reduce(0, +)
                    return Cell(text: UnsafeBufferPointer(rebasing: names[start..<(start + header[c].utf8.count)]), width: header[c].utf8.count)
                }
            }
            for (p, part) in parts.enumerated() {
                part.cells.withUnsafeBufferPointer { all in
                    for r in 0..<shown[p] {
                        w.byte(10)
                        w.line(colour: dueColours[Int(part.colours[r])]) { c in
                            let i = r * columns + c
                            return Cell(text: part.cell(i, in: all), width: Int(cellWidths[p][i]))
                        }
                    }
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

    /// The bytes of cell `i` (row after row) in `all`, the cells' bytes.
    private func cell(_ i: Int, in all: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[(i == 0 ? 0 : Int(ends[i - 1]))..<Int(ends[i])])
    }

    /// How many terminal columns each cell of the first `rows` rows takes.
    private func cellWidths(rows: Int) -> [UInt32] {
        cells.withUnsafeBufferPointer { all in (0..<(rows * Self.columns)).map { UInt32(Self.width(cell($0, in: all))) } }
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

    /// One line, `cell` giving each column's cell; the DUE cell in `colour` when there is one.
    mutating func line(colour: String?, _ cell: (Int) -> TableRows.Cell) {
        let lineStart = at
        for c in 0..<TableRows.columns where keep[c] {
            let current = cell(c)
            let text = current.text
            var width = current.width
            if c == TableRows.title, let room = titleRoom, width > room {
                let cut = String(String(decoding: text, as: UTF8.self).prefix(room - 1)) + "…"
                width = Render.displayWidth(cut)
                put(cut)
            } else if c == TableRows.due, let colour {
                put(colour)
                put(text)
                put(DueClock.reset)
            } else {
                put(text)
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
