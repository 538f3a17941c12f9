#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// Writes to stdout and stderr with plain `write(2)` calls (callers batch large outputs).
package enum Output {
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var done = 0
        while done < bytes.count {
            #if canImport(Glibc)
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            #else
            let n = Darwin.write(fd, bytes.baseAddress! + done, bytes.count - done)
            #endif
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }

    package static func out(_ text: String) {
        var t = text
        t.withUTF8 { write(1, UnsafeRawBufferPointer($0)) }
    }

    package static func line(_ text: String = "") { out(text + "\n") }

    package static func bytes(_ b: [UInt8]) { b.withUnsafeBytes { write(1, $0) } }

    /// What `w` has written, to standard output.
    package static func bytes(of w: JSONWriter) { w.withBytes { write(1, $0) } }

    /// Writes `tasklog: error: …` to standard error, control characters escaped (messages
    /// carry file names and peers' words).
    package static func error(_ message: String) {
        var t = "tasklog: error: \(TerminalText.escaped(message))\n"
        t.withUTF8 { write(2, UnsafeRawBufferPointer($0)) }
    }

    /// Writes `tasklog: warning: …` to standard error, control characters escaped.
    package static func warning(_ message: String) {
        var t = "tasklog: warning: \(TerminalText.escaped(message))\n"
        t.withUTF8 { write(2, UnsafeRawBufferPointer($0)) }
    }

    static func json(_ task: TaskItem) {
        var w = JSONWriter()
        w.task(task)
        w.raw("\n")
        bytes(w.bytes)
    }
}

/// Human-readable renderings.
enum Render {
    /// `n` and `noun`, plural unless `n` is 1: "1 operation", "3 operations".
    static func count(_ n: some BinaryInteger, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    static func shortID(_ id: TaskID) -> String {
        guard let (high, _) = id.uuid else { return id.rawValue }
        // The first 8 hex digits of the lowercase UUID, without writing out the rest.
        return String(unsafeUninitializedCapacity: 8) { b in
            for i in 0..<8 {
                let nibble = UInt8(high >> (60 - 4 * UInt64(i)) & 0xF)
                b[i] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
            }
            return 8
        }
    }

    /// The mark after a recurring task's due date in `list`.
    static let recurrenceMarker = "↻"

    /// - Parameters:
    ///   - depths: each task's level in an outline (indented two spaces a level, at most
    ///     ``deepestIndent``); none when empty.
    ///   - states: each task's STATE cell (``state(of:in:clock:)``); the column shows when one is not empty.
    static func table(_ tasks: [TaskItem], depths: [Int] = [], states: [String] = []) -> String {
        var rows = TableRows()
        let clock = DueClock()
        for (i, t) in tasks.enumerated() {
            rows.append(t, depth: depths.isEmpty ? 0 : depths[i], state: states.isEmpty ? "" : states[i], clock: clock)
        }
        return String(decoding: TableRows.rendered([rows]), as: UTF8.self)
    }

    /// How many columns `s` takes in a terminal, counted as characters (one byte each when it
    /// is ASCII, the common case, without walking its graphemes).
    static func displayWidth(_ s: String) -> Int {
        let ascii = s.utf8.withContiguousStorageIfAvailable { !$0.contains { $0 >= 0x80 } } ?? s.utf8.allSatisfy { $0 < 0x80 }
        return ascii ? s.utf8.count : s.count
    }

    /// "replayed 12 operations from 2 replicas: 3 tasks, 1 deleted".
    static func replayed(_ state: TaskState, live: Int) -> String {
        let v = state.version
        return "replayed \(count(v.operationCount, "operation")) from \(count(v.entries.count, "replica")): "
            + "\(count(live, "task")), \(state.allTasks.count - live) deleted"
    }

    /// - Parameter planning: the lines about subtasks, dependencies and dates (``planningLines(of:in:clock:)``).
    static func detail(_ t: TaskItem, planning: [(String, String)] = []) -> String {
        let safe = { (s: String) in TerminalText.escaped(s) }
        var lines: [(String, String)] = [("id", t.id.rawValue), ("title", safe(t.title))]
        let clock = DueClock()
        lines.append(("status", t.isDone ? "done" + (t.completedAt.map { " (\(clock.local($0)))" } ?? "") : "open"))
        if let p = t.priority { lines.append(("priority", String(p))) }
        if let d = t.due { lines.append(("due", clock.text(d, open: !t.isDone).text)) }
        if !t.tags.isEmpty { lines.append(("tags", safe(t.tags.joined(separator: ", ")))) }
        if let l = t.list { lines.append(("list", safe(l))) }
        if let n = t.notes { lines.append(("notes", TerminalText.escaped(n, keepingNewlines: true))) }
        let rule = t.meta[PlanningKey.recur].flatMap(RecurrenceRule.init)
        if let rule { lines.append(("repeats", rule.phrase)) }
        lines += planning
        for k in t.userMeta.keys.sorted() { lines.append((safe("meta." + k), safe(t.meta[k]!))) }
        lines.append(("created", clock.local(t.createdAt)))
        lines.append(("updated", clock.local(t.updatedAt)))
        let w = lines.map { $0.0.count }.max()! + 2
        return lines.map { $0.0.isEmpty ? String(repeating: " ", count: w) + $0.1 : $0.0 + ":" + String(repeating: " ", count: w - $0.0.count - 1) + $0.1 }
            .joined(separator: "\n")
    }

    /// One operation of `tasklog log`, as a JSON object or a line of text.
    static func operation(
        _ op: TaskOperation, replica: ReplicaID, seq: UInt64, time: Timestamp, json: Bool
    ) -> String {
        var kind = ""
        var field: String?
        var value: String?  // JSON text
        switch op {
        case .add: kind = "add"
        case .remove(_, let observed): kind = "remove"; value = "\(observed.count)"
        case .addTag(_, let tag): kind = "tag"; value = jsonString(tag)
        case .removeTag(_, let tag, _): kind = "untag"; value = jsonString(tag)
        case .deviceName(let name): kind = "name"; value = jsonString(DeviceName.normalised(name))
        case .unknown(let header, let body): kind = "unknown"; field = "kind \(header >> 4)"; value = "\(body.count)"
        case .set(_, let write):
            kind = "set"
            switch write {
            case .title(let s): field = "title"; value = jsonString(s)
            case .notes(let s): field = "notes"; value = s.map(jsonString) ?? "null"
            case .done(let b): field = "done"; value = b ? "true" : "false"
            case .priority(let p): field = "priority"; value = p.map { String($0) } ?? "null"
            case .due(let d): field = "due"; value = d.map { jsonString($0.description) } ?? "null"
            case .list(let s): field = "list"; value = s.map(jsonString) ?? "null"
            case .meta(let k, let v): field = "meta." + k; value = v.map(jsonString) ?? "null"
            case .unknown(let n, _): field = "field \(n)"; value = "null"
            }
        }
        if json {
            var s = "{\"replica\":\"\(replica.hex)\",\"seq\":\(seq),\"time\":\"\(isoTime(time))\",\"hlc\":\"\(time)\",\"op\":\"\(kind)\""
            if let t = op.task { s += ",\"task\":" + jsonString(t.rawValue) }
            if let field { s += ",\"field\":" + jsonString(field) }
            if let value { s += ",\"value\":" + value }
            return s + "}"
        }
        var s = "\(isoTime(time))  \(replica.hex.prefix(8)):\(seq)  \(kind)"
        if let t = op.task { s += " " + shortID(t) }
        if let field { s += " " + field }
        if let value { s += " " + value }
        return TerminalText.escaped(s)
    }

    static func jsonString(_ s: String) -> String {
        var w = JSONWriter()
        w.string(s)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}

/// Writes a JSON array of tasks, one per line, to stdout in pieces of about 64 KB as the
/// tasks come (a long list never sits whole in memory).
struct JSONTaskArrayWriter: TaskSink {
    private static let piece = 1 << 16
    private var w = JSONWriter()
    /// How many tasks it has written.
    private(set) var count = 0

    mutating func take(_ task: TaskItem) {
        separate()
        w.task(task)
        flushWhenFull()
    }

    mutating func take(_ task: borrowing SavedTask) {
        separate()
        w.task(task)
        flushWhenFull()
    }

    /// Adds the first `n` of the tasks `held` holds, written as ``JSONArrayPart`` holds them
    /// (joined by `,` and a line break), which end at `ends`.
    mutating func take(held: JSONWriter, ends: [Int], first n: Int) {
        guard n > 0 else { return }
        separate()
        count += n - 1
        Output.bytes(of: w)
        w.removeAll()
        held.withBytes { Output.write(1, UnsafeRawBufferPointer(rebasing: $0[..<ends[n - 1]])) }
    }

    private mutating func separate() {
        if count == 0 { w.raw("[\n") } else { w.raw(",\n") }
        count += 1
    }

    private mutating func flushWhenFull() {
        if w.count >= Self.piece {
            Output.bytes(of: w)
            w.removeAll()
        }
    }

    /// Closes the array (`[]` when no task came) and writes what is left.
    mutating func finish() {
        w.raw(count == 0 ? "[]\n" : "\n]\n")
        Output.bytes(of: w)
    }
}
