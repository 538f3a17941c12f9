@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// A task of a saved state (a snapshot's body) as a listing shows it, read in place: its text
/// is the saved bytes, checked to be UTF-8 but not copied into strings. A listing writes it
/// as JSON straight from those bytes (``JSONWriter/task(_:)-(SavedTask)``), or makes it an
/// ``item`` when it needs one.
///
/// It points into the buffer being read, so it is valid only inside the call that hands it
/// out, and cannot be copied.
@_spi(Engine) public struct SavedTask: ~Copyable {
    public let id: TaskID
    var title: UnsafeBufferPointer<UInt8> = UnsafeBufferPointer(start: nil, count: 0)
    var notes: UnsafeBufferPointer<UInt8>?
    public private(set) var isDone = false
    var completedAt: Timestamp?
    var priority: UInt8?
    var due: Due?
    var list: UnsafeBufferPointer<UInt8>?
    /// The entries with a value, in byte order of their keys.
    var meta: [(key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)] = []
    /// The live tags, in byte order.
    var tags: [UnsafeBufferPointer<UInt8>] = []
    var createdAt = Timestamp.zero
    var updatedAt = Timestamp.zero

    /// A live task with no field read yet, to read into.
    init(reading id: TaskID) { self.id = id }

    /// The task as an item, its text copied into strings.
    public var item: TaskItem { TaskItem(saved: self) }
}

extension TaskItem {
    /// A saved task read in place, its text copied into strings. Every field is set here,
    /// where the item is built (through a memberwise call it was built aside and copied).
    init(saved t: borrowing SavedTask) {
        func text(_ b: UnsafeBufferPointer<UInt8>) -> String { String(decoding: b, as: UTF8.self) }
        id = t.id
        title = text(t.title)
        notes = t.notes.map(text)
        isDone = t.isDone
        completedAt = t.completedAt
        priority = t.priority
        due = t.due
        (tags, dependencies) = t.tags.isEmpty ? ([], []) : Self.splitting(t.tags.map(text))
        list = t.list.map(text)
        var meta: [String: String] = [:]
        for (k, v) in t.meta { meta[text(k)] = text(v) }
        self.meta = meta
        createdAt = t.createdAt
        updatedAt = t.updatedAt
        isDeleted = false
    }
}

extension SavedTask: TaskFields {
    static var keepsStamps: Bool { false }

    static func text(_ r: inout ByteReader) throws(DecodeError) -> UnsafeBufferPointer<UInt8> { try r.utf8() }

    mutating func times(created: Timestamp?, updated: Timestamp) {
        createdAt = created ?? .zero
        updatedAt = updated
    }

    mutating func title(_ value: UnsafeBufferPointer<UInt8>, _ stamp: Stamp) { title = value }
    mutating func notes(_ value: UnsafeBufferPointer<UInt8>?, _ stamp: Stamp) { notes = value }

    mutating func done(_ value: Bool, _ stamp: Stamp) {
        isDone = value
        completedAt = value ? stamp.time : nil
    }

    mutating func priority(_ value: UInt8?, _ stamp: Stamp) { priority = value }
    mutating func due(_ value: Due?, _ stamp: Stamp) { due = value }
    mutating func list(_ value: UnsafeBufferPointer<UInt8>?, _ stamp: Stamp) { list = value }

    /// Keeps the entries in byte order of their keys (a snapshot stores them in string order,
    /// which differs only for text that is not in normal form).
    mutating func meta(_ key: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>?, _ stamp: Stamp) {
        guard let value else { return }
        var i = meta.endIndex
        while i > meta.startIndex, key.lexicographicallyPrecedes(meta[i - 1].key) { i -= 1 }
        meta.insert((key, value), at: i)
    }

    /// The tags with a dot no remove observed, in byte order (as ``TaskItem`` lists them).
    mutating func tags(_ added: [(UnsafeBufferPointer<UInt8>, [OperationID])], removed: [OperationID]) {
        let removed = Set(removed)
        tags = added.filter { $0.1.contains { !removed.contains($0) } }.map(\.0).sorted { $0.lexicographicallyPrecedes($1) }
    }
}

/// Where a listing hands the tasks it finds, one at a time.
@_spi(Engine) public protocol TaskSink {
    mutating func take(_ task: TaskItem)
    /// A task read in place from a saved state (valid only during the call). By default its item.
    mutating func take(_ task: borrowing SavedTask)
}

extension TaskSink {
    public mutating func take(_ task: borrowing SavedTask) { take(task.item) }
}

/// A sink for one part of a listing read in parts side by side
/// (``TaskState/forEachTask(_:mergingSaved:head:splits:words:into:)``): every part has its
/// own, and they take their turns in order, so that what they hand on keeps the listing's order.
package protocol TaskPartSink: TaskSink {
    /// Whether the part is to stop reading until its turn: what it holds has grown large.
    var wantsPause: Bool { get }
    /// Told, part after part in order, once every part before this one is done: from now on
    /// it may hand on what it holds, and each task as it comes.
    mutating func takeTurn()
}

/// A sink that hands every task on to a closure, as an item.
@_spi(Engine) public struct ItemSink: TaskSink {
    let body: (TaskItem) -> Void
    public init(_ body: @escaping (TaskItem) -> Void) { self.body = body }
    public mutating func take(_ task: TaskItem) { body(task) }
}
