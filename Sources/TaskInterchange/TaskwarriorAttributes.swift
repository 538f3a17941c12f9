@_spi(Engine) import TaskModel

/// Taskwarrior attributes kept as meta (Spec/interop.md, "Taskwarrior"): a string attribute as
/// its text under ``TaskwarriorJSON/metaPrefix``, any other value as its JSON text under
/// ``TaskwarriorJSON/jsonMetaPrefix``, so that export writes back the same JSON value.
extension TaskwarriorJSON {
    /// The prefix of the meta keys that hold a task's Taskwarrior attributes that are not strings.
    package static let jsonMetaPrefix = "taskwarrior-json."
    /// The most bytes one kept attribute may take, as text or as JSON text.
    package static let maxAttributeBytes = 65_536

    /// Whether the meta entry `key` holds a Taskwarrior attribute (import replaces these).
    static func holdsAttribute(_ key: String) -> Bool { key.hasPrefix(metaPrefix) || key.hasPrefix(jsonMetaPrefix) }

    /// The meta entries that keep the attributes of `m` this mapping has no field for, and its
    /// `annotations` whole. Throws for an attribute over ``maxAttributeBytes`` or a number JSON
    /// cannot write (such as `1e999`), naming task `number`.
    static func keptMeta(_ m: [String: JSONValue], number: Int) throws(InterchangeError) -> [String: String] {
        var meta: [String: String] = [:]
        // `entry` is kept so that the task reads back with Taskwarrior's own creation time; the
        // registers' attributes are bounded here too, but not kept.
        let bounded = planningAttributes.union(["annotations", "entry"])
        for (key, value) in m where !known.contains(key) || bounded.contains(key) {
            let kept: (key: String, text: String)
            if case .string(let s) = value {
                kept = (metaPrefix + key, s)
            } else {
                guard let text = canonicalText(value) else {
                    throw .task(number, "attribute \(key) holds a number too large for JSON; remove it or make it smaller")
                }
                kept = (jsonMetaPrefix + key, text)
            }
            guard kept.text.utf8.count <= maxAttributeBytes else {
                throw .task(number, "attribute \(key) takes \(kept.text.utf8.count) bytes, more than the \(maxAttributeBytes) one kept attribute may hold")
            }
            if !planningAttributes.contains(key) { meta[kept.key] = kept.text }
        }
        return meta
    }

    /// Leaves out a kept `entry` that the task's own creation time gives, unless the task keeps
    /// it already, so that a store's own export reads back unchanged.
    static func dropDerivedEntry(_ patch: inout TaskPatch, over task: TaskItem?) {
        let key = metaPrefix + "entry"
        guard let task, var meta = patch.meta, meta[key] == stamp(task.createdAt.physical), task.meta[key] == nil else { return }
        meta[key] = nil
        patch.meta = meta == task.userMeta ? nil : meta
    }

    /// `v` as compact JSON text, object members in document order; nil when it holds a number
    /// that is not finite.
    static func canonicalText(_ v: JSONValue) -> String? {
        var w = JSONWriter()
        return writeCanonical(v, &w) ? String(decoding: w.bytes, as: UTF8.self) : nil
    }

    /// Writes `v` as ``canonicalText(_:)`` states; false, with part written, for a number that
    /// is not finite.
    private static func writeCanonical(_ v: JSONValue, _ w: inout JSONWriter) -> Bool {
        switch v {
        case .null: w.raw("null")
        case .bool(let b): w.bool(b)
        case .string(let s): w.string(s)
        case .number(let n):
            guard n.isFinite else { return false }
            if n == n.rounded(), abs(n) < 9_007_199_254_740_992 { w.number(Int64(n)) } else { w.raw(json: "\(n)") }
        case .array(let items):
            w.raw("[")
            for (i, item) in items.enumerated() {
                if i > 0 { w.raw(",") }
                guard writeCanonical(item, &w) else { return false }
            }
            w.raw("]")
        case .object(let members):
            w.raw("{")
            for (i, member) in members.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(member.key)
                w.raw(":")
                guard writeCanonical(member.value, &w) else { return false }
            }
            w.raw("}")
        }
        return true
    }

    /// The notes that Taskwarrior annotations state: their descriptions, one per line (nil
    /// when none has one).
    static func notes(ofAnnotations value: JSONValue?) -> String? {
        guard case .array(let notes)? = value else { return nil }
        let lines = notes.compactMap { note -> String? in
            if case .string(let d)? = note["description"] { d } else { nil }
        }
        return lines.isEmpty ? nil : lines.joined(separator: "\n")
    }

    /// Writes the kept attributes of `t`, each name once and none this mapping writes itself;
    /// a JSON entry that does not parse is written as a string.
    static func writeKeptAttributes(_ t: TaskItem, _ w: inout JSONWriter) {
        var written: Set<String> = []
        for key in t.meta.keys.sorted() {
            let name: String
            var json: String?
            if key.hasPrefix(jsonMetaPrefix) {
                name = String(key.dropFirst(jsonMetaPrefix.count))
                json = (try? JSONParser.parse(t.meta[key]!)).flatMap(canonicalText)
            } else if key.hasPrefix(metaPrefix) {
                name = String(key.dropFirst(metaPrefix.count))
            } else {
                continue
            }
            guard !known.contains(name), written.insert(name).inserted else { continue }
            w.raw(",")
            w.string(name)
            w.raw(":")
            if let json { w.raw(json: json) } else { w.string(t.meta[key]!) }
        }
    }

    /// The annotations to export: the ones kept from Taskwarrior while the notes are still
    /// theirs, otherwise one per line of the notes.
    static func writeAnnotations(_ t: TaskItem, _ w: inout JSONWriter) {
        let kept = t.meta[jsonMetaPrefix + "annotations"].flatMap { try? JSONParser.parse($0) }
        if let kept, notes(ofAnnotations: kept) == t.notes, let json = canonicalText(kept) {
            w.raw(",\"annotations\":")
            w.raw(json: json)
            return
        }
        guard let notes = t.notes else { return }
        w.raw(",\"annotations\":[")
        for (i, line) in notes.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            w.raw(i == 0 ? "{\"entry\":" : ",{\"entry\":")
            w.string(stamp(t.updatedAt.physical))
            w.raw(",\"description\":")
            w.string(String(line))
            w.raw("}")
        }
        w.raw("]")
    }
}
