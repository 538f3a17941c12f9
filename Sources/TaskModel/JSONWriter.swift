@_spi(Engine) import CRDTCore

/// Writes JSON text directly into a byte buffer (no intermediate objects).
///
/// Each value is written through a ``Cursor`` into room past the end of what is written,
/// sized for its longest form (every string byte escaped). The buffer keeps that room
/// between values, zeroed once when it grows: making room afresh for each value cost more
/// than writing it.
@_spi(Engine) public struct JSONWriter: Sendable {
    /// What has been written.
    public var bytes: [UInt8] {
        get { withBytes { Array($0) } }
        set {
            buffer = newValue
            length = newValue.count
        }
    }

    /// How many bytes have been written.
    public var count: Int { length }

    /// Reads what has been written in place.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }

    /// The written bytes, then room for more.
    private var buffer: [UInt8] = []
    private var length = 0
    private var times = TimeTextCache()

    public init() {}

    /// Drops what has been written, keeping the memory for what comes next.
    public mutating func removeAll() { length = 0 }

    public mutating func raw(_ s: StaticString) {
        guard s.utf8CodeUnitCount > 0 else { return }
        if buffer.count - length >= s.utf8CodeUnitCount {
            // Copied straight in: going through a cursor costs more than a few bytes do.
            buffer.withUnsafeMutableBytes { out in
                s.withUTF8Buffer { out.baseAddress!.advanced(by: length).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            }
            length += s.utf8CodeUnitCount
        } else {
            write(room: s.utf8CodeUnitCount) { $0.raw(s) }
        }
    }

    /// Text that is JSON already, written as it is.
    public mutating func raw(json text: String) { write(room: text.utf8.count) { $0.raw(json: text) } }

    public mutating func string(_ s: String) { write(room: Cursor.room(s)) { $0.string(s) } }

    /// A task id as a JSON string (ids never need escaping).
    public mutating func id(_ id: TaskID) { write(room: Cursor.room(id)) { $0.id(id) } }

    public mutating func optionalString(_ s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    public mutating func number(_ v: Int64) { write(room: 20) { $0.number(v) } }
    public mutating func number(_ v: UInt64) { write(room: 20) { $0.number(v) } }
    public mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }

    /// A hybrid-clock time as a JSON string: ISO-8601 UTC with milliseconds, written digit by
    /// digit (the hot path of listing thousands of tasks).
    public mutating func time(_ t: Timestamp) { write(room: Cursor.timeRoom) { $0.time(t) } }

    /// A due date or instant as a JSON string, in the form of ``Due/description``.
    public mutating func due(_ d: Due) { write(room: Cursor.timeRoom) { $0.due(d) } }

    /// The task in the JSON form of the CLI contract (keys in the contract's order).
    public mutating func task(_ t: TaskItem) { write(room: Cursor.room(t)) { $0.task(t) } }

    /// A saved task in the same form, written from its bytes in place.
    public mutating func task(_ t: borrowing SavedTask) {
        let room = Cursor.room(t)
        write(room: room) { $0.task(t) }
    }

    /// One entry of a changes list: `{"id":…,"deleted":…,"task":{…}` followed by `}`, or
    /// left open (`closed: false`) for the caller to add keys.
    public mutating func change(_ t: TaskItem, closed: Bool = true) {
        raw("{\"id\":")
        id(t.id)
        raw(",\"deleted\":")
        bool(t.isDeleted)
        raw(",\"task\":")
        task(t)
        if closed { raw("}") }
    }

    /// A JSON array of tasks, one per line.
    public mutating func taskArray(_ tasks: [TaskItem]) {
        if tasks.isEmpty { raw("[]"); return }
        raw("[\n")
        for (i, t) in tasks.enumerated() {
            if i > 0 { raw(",\n") }
            task(t)
        }
        raw("\n]")
    }

    /// Lets `body` write into the room past what is written, making sure there are at least
    /// `room` bytes of it.
    private mutating func write(room: Int, _ body: (inout Cursor) -> Void) {
        if buffer.count - length < room {
            buffer += [UInt8](repeating: 0, count: Swift.max(room, buffer.count, 4096))
        }
        var times = self.times
        let start = length
        length = buffer.withUnsafeMutableBufferPointer { buffer in
            var cursor = Cursor(out: buffer, at: start, times: times)
            body(&cursor)
            times = cursor.times
            return cursor.at
        }
        self.times = times
    }
}

/// Text a ``Cursor`` writes as a JSON string: a `String`, or UTF-8 in place.
protocol JSONText {
    var utf8Count: Int { get }
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
}

extension String: JSONText {
    var utf8Count: Int { utf8.count }

    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var s = self
        return s.withUTF8(body)
    }
}

extension UnsafeBufferPointer<UInt8>: JSONText {
    var utf8Count: Int { count }
    func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { body(self) }
}

/// A task as its JSON form shows it: an item, or a saved task read in place.
protocol ShownTask: ~Copyable {
    associatedtype Text: JSONText
    var id: TaskID { get }
    var title: Text { get }
    var notes: Text? { get }
    var isDone: Bool { get }
    var completedAt: Timestamp? { get }
    var priority: UInt8? { get }
    var due: Due? { get }
    /// In byte order.
    var tags: [Text] { get }
    var list: Text? { get }
    var createdAt: Timestamp { get }
    var updatedAt: Timestamp { get }
    /// Hands on each meta entry, in byte order of the keys.
    func forEachMeta(_ body: (Text, Text) -> Void)
    /// The value of the meta entry `key`, if it has one.
    func metaValue(_ key: String) -> Text?
    /// The ids of the tasks it depends on, in byte order.
    var dependencyIDs: [Text] { get }
    /// False when it holds no meta entry and no dependency, so no planning register: the
    /// common case, written without looking for any.
    var mayHavePlanning: Bool { get }
}

extension TaskItem: ShownTask {
    func forEachMeta(_ body: (String, String) -> Void) {
        guard !meta.isEmpty else { return }
        for key in meta.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { body(key, meta[key]!) }
    }

    func metaValue(_ key: String) -> String? { meta[key] }
    var dependencyIDs: [String] { dependencies.map(\.rawValue) }
    var mayHavePlanning: Bool { !meta.isEmpty || !dependencies.isEmpty }
}

extension SavedTask: ShownTask {
    func forEachMeta(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        for (k, v) in meta { body(k, v) }
    }

    package func metaValue(_ key: String) -> UnsafeBufferPointer<UInt8>? {
        guard !meta.isEmpty else { return nil }
        return meta.first { $0.key.elementsEqual(key.utf8) }?.value
    }

    var mayHavePlanning: Bool { !meta.isEmpty || !tags.isEmpty }

    /// The tag-set elements that are dependencies, each without its prefix.
    var dependencyIDs: [UnsafeBufferPointer<UInt8>] {
        let prefix = PlanningKey.dependencyPrefix.utf8
        return tags.compactMap { tag in
            tag.starts(with: prefix) ? UnsafeBufferPointer(rebasing: tag[prefix.count...]) : nil
        }
    }
}

/// A hybrid-clock time shown to users: its physical part as ISO-8601 UTC with milliseconds.
@_spi(Engine) public func isoTime(_ t: Timestamp) -> String {
    CivilTime.instantString(milliseconds: Int64(clamping: t.physical))
}
