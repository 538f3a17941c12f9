#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel

extension TableRows {
    /// The table, its header first, one line a row without a line break after the last.
    /// Empty optional columns are left out, and no line ends in spaces. On a terminal
    /// narrower than the table (`terminalColumns`), titles are cut to fit, each ending in an
    /// ellipsis, keeping at least 12 columns of title.
    func rendered(terminalColumns: Int? = TerminalText.columns) -> [UInt8] {
        var table = self
        table.insertHeader()
        return table.cells.withUnsafeBufferPointer { all in
            let cellWidths = table.ends.indices.map { Self.width(table.cell($0, in: all)) }
            var widths = [Int](repeating: 0, count: Self.columns)
            var filled = [Bool](repeating: false, count: Self.columns)
            for (i, width) in cellWidths.enumerated() {
                widths[i % Self.columns] = max(widths[i % Self.columns], width)
                if i >= Self.columns && width > 0 { filled[i % Self.columns] = true }
            }
            let keep = (0..<Self.columns).map { !Self.optional.contains($0) || filled[$0] }
            let room = Self.titleRoom(widths, keep, terminalColumns)
            if let room { widths[Self.title] = room }
            // At most every cell, padded to its column's width and two more, the colours and
            // a cut title's ellipsis.
            let colourBytes = DueClock.Urgency.overdue.colour!.utf8.count + DueClock.reset.utf8.count
            let perRow = zip(widths, keep).map { $0.1 ? $0.0 + 2 : 0 }.reduce(colourBytes + 4, +)
            let bound = all.count + table.count * perRow
            return [UInt8](unsafeUninitializedCapacity: bound) { buffer, written in
                var w = LineWriter(out: buffer.baseAddress!, keep: keep, widths: widths, titleRoom: room)
                for r in 0..<table.count {
                    if r > 0 { w.byte(10) }
                    w.line(colour: table.colours[r]) { c in (table.cell(r * Self.columns + c, in: all), cellWidths[r * Self.columns + c]) }
                }
                written = w.at
                precondition(written <= bound, "a table longer than its bound")
            }
        }
    }

    /// The header as a first row.
    private mutating func insertHeader() {
        var header = TableRows.headerRow
        header.append(contentsOf: self)
        self = header
    }

    /// The bytes of cell `i` (row by row) in `all`, the cells' bytes.
    private func cell(_ i: Int, in all: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
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

    /// One line, `cell` giving each column's text and width; the DUE cell in `colour` when
    /// there is one.
    mutating func line(colour: String?, _ cell: (Int) -> (UnsafeBufferPointer<UInt8>, Int)) {
        let lineStart = at
        for c in 0..<TableRows.columns where keep[c] {
            let (text, cellWidth) = cell(c)
            var width = cellWidth
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
