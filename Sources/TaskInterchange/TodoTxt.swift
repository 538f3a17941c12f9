@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Tasks as todo.txt lines and back (Spec/interop.md, "todo.txt").
///
/// A line keeps its task's identity in `uuid:`, so an exported file imports back onto the same
/// tasks. A line without one gets an id derived from its text, so importing a file twice
/// creates its tasks once.
package enum TodoTxt {
    /// The prefix of the meta keys that hold a line's unknown `key:value` pairs.
    package static let metaPrefix = "todotxt."

    /// Every task as one line each, in the order given, each line ending in a newline.
    package static func text(of tasks: [TaskItem]) -> String {
        tasks.map { line(of: $0) + "\n" }.joined()
    }

    /// One task as a todo.txt line.
    package static func line(of t: TaskItem) -> String {
        var parts: [String] = []
        if t.isDone {
            parts += ["x", date(t.completedAt ?? t.updatedAt)]
        } else if let p = t.priority {
            parts.append("(\(letter(p)))")
        }
        parts.append(date(t.createdAt))
        parts += t.title.split(whereSeparator: { $0 == " " || $0.isNewline }).map(String.init)
        for tag in t.tags {
            // A lone `+` would read as a word: it is written as the context `@+`.
            parts.append(tag.hasPrefix("+") && tag != "+" ? "+" + escaped(String(tag.dropFirst())) : "@" + escaped(tag))
        }
        if let list = t.list { parts.append("list:" + escaped(list)) }
        if let due = t.due { parts.append("due:" + due.description) }
        if t.isDone, let p = t.priority { parts.append("pri:\(letter(p))") }
        parts += planningPairs(t)
        for key in t.meta.keys.sorted() where key.hasPrefix(metaPrefix) && key != recKey {
            parts.append("\(key.dropFirst(metaPrefix.count)):\(escaped(t.meta[key]!))")
        }
        parts.append("uuid:" + escaped(t.id.rawValue))
        return parts.joined(separator: " ")
    }

    /// A todo.txt priority letter for a priority of 0 to 3 (3 is `A`).
    static func letter(_ priority: UInt8) -> Character {
        Character(UnicodeScalar(UInt8(ascii: "A") + 3 - min(priority, 3)))
    }

    /// The priority an uppercase letter stands for: `A` 3, `B` 2, `C` 1, any later letter 0;
    /// nil for anything else.
    static func priority(_ letter: Character) -> UInt8? {
        guard let v = letter.asciiValue, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(v) else { return nil }
        return v <= UInt8(ascii: "C") ? 3 - (v - UInt8(ascii: "A")) : 0
    }

    private static func date(_ t: Timestamp) -> String {
        CivilTime.dateString(days: Int64(t.physical / 86_400_000))
    }

    /// A value with its spaces and percent signs escaped, so that it stays one word.
    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "%": out += "%25"
            case " ": out += "%20"
            case "\t", "\n", "\r": out += "%20"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A value as ``escaped(_:)`` wrote it: `%20` and `%25` stand for a space and `%`.
    static func unescaped(_ s: Substring) -> String {
        let u = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < u.count {
            if u[i] == UInt8(ascii: "%"), i + 2 < u.count,
                let v = UInt8(String(decoding: u[(i + 1)...(i + 2)], as: UTF8.self), radix: 16), v == 0x20 || v == 0x25
            {
                out.append(v)
                i += 3
            } else {
                out.append(u[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
