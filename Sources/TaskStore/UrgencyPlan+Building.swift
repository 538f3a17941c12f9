@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension UrgencyPlan {
    /// The plan file of a snapshot body, tied to it by `tie`, or nil when a task starts past
    /// the offsets a plan can hold (4 GiB).
    /// - Throws: when the body does not decode.
    package static func encode(body: SharedBytes, tie: [UInt8]) throws(DecodeError) -> [UInt8]? {
        var sorter = ListSorter()
        try StateCodec.forEachOpenTask(in: body) { offset, facts in sorter.take(offset, facts) }
        guard !sorter.tooFar else { return nil }
        let lists = sorter.sorted()
        var entries = ByteWriter(capacity: lists.reduce(0) { $0 + $1.entries.count * 12 })
        for list in lists {
            for e in list.entries {
                if list.form != .none { entries.u64le(UInt64(bitPattern: e.value)) }
                entries.u32le(e.offset)
            }
        }
        var w = ByteWriter(capacity: entries.count + 256)
        w.append(magic)
        w.u8(version)
        w.append([0, 0, 0])
        w.uvarint(UInt64(tie.count))
        w.append(tie)
        w.uvarint(UInt64(lists.count))
        for list in lists {
            w.append([list.role.rawValue, list.form.rawValue, list.rankClass, 0])
            w.u32le(UInt32(list.entries.count))
        }
        w.u32le(UInt32(blockSize))
        let blocks = (entries.count + blockSize - 1) / blockSize
        w.uvarint(UInt64(blocks))
        entries.withUnsafeBytes { buf in
            for b in 0..<blocks {
                w.u32le(Checksum.xxh32(UnsafeRawBufferPointer(rebasing: buf[(b * blockSize)..<min((b + 1) * blockSize, buf.count)])))
            }
        }
        w.u32le(w.withUnsafeBytes { Checksum.xxh32($0) })
        entries.withUnsafeBytes { w.append($0) }
        return w.bytes
    }

    /// The form of a due and its value: days for a date, milliseconds for an instant.
    package static func split(_ due: Due?) -> (form: Form, value: Int64) {
        switch due {
        case nil: (.none, 0)
        case .date(let d): (.date, d)
        case .instant(let ms): (.instant, ms)
        }
    }
}

/// Gathers the entries of a plan's lists as a body is read, then sorts them.
private struct ListSorter {
    typealias Entry = (value: Int64, offset: UInt32)
    /// What a dated list is sorted by: the due's ``Due/sortKey`` (dates past the range of
    /// 64-bit milliseconds share one, and also one due term), then the offset.
    private typealias Sorted = (key: Int64, entry: Entry)

    /// Rank lists by form and class (form × 16 + class), then the scheduled lists by form.
    private var rank = [[Sorted]](repeating: [], count: 48)
    private var scheduled = [[Sorted]](repeating: [], count: 3)
    private(set) var tooFar = false

    mutating func take(_ offset: Int, _ facts: PlanFacts) {
        guard let at = UInt32(exactly: offset) else { return tooFar = true }
        let due = UrgencyPlan.split(facts.due)
        rank[Int(due.form.rawValue) * 16 + Int(facts.rankClass)].append((facts.due?.sortKey ?? 0, (due.value, at)))
        if let s = facts.scheduled {
            let when = UrgencyPlan.split(s)
            scheduled[Int(when.form.rawValue)].append((s.sortKey, (when.value, at)))
        }
    }

    /// The lists that hold entries, in the file's order, each sorted by key and then offset
    /// (entries come in offset order: undated lists need no sort).
    func sorted() -> [(role: UrgencyPlan.Role, form: UrgencyPlan.Form, rankClass: UInt8, entries: [Entry])] {
        func inOrder(_ list: [Sorted]) -> [Entry] {
            list.sorted { ($0.key, $0.entry.offset) < ($1.key, $1.entry.offset) }.map(\.entry)
        }
        var out: [(role: UrgencyPlan.Role, form: UrgencyPlan.Form, rankClass: UInt8, entries: [Entry])] = []
        for (i, entries) in rank.enumerated() where !entries.isEmpty {
            let form = UrgencyPlan.Form(rawValue: UInt8(i / 16))!
            out.append((.rank, form, UInt8(i % 16), form == .none ? entries.map(\.entry) : inOrder(entries)))
        }
        for (i, entries) in scheduled.enumerated() where !entries.isEmpty {
            out.append((.scheduled, UrgencyPlan.Form(rawValue: UInt8(i))!, 0, inOrder(entries)))
        }
        return out
    }
}
