@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// Where the fields of a task read from a saved state go (``StateCodec``): a record keeps
/// every register with its stamp; a listing needs only the values, and a task it skips only
/// its creation time. One reader serves all three, specialised for each.
protocol TaskFields: ~Copyable {
    /// How a string is passed: a `String`, its bytes in place, or nothing at all.
    associatedtype Text
    /// Whether stamps are wanted; when not, they are stepped over, and a stand-in with no
    /// operation (and no time, except for `done`) is passed.
    static var keepsStamps: Bool { get }
    /// Reads a string (a length, then UTF-8), or steps over it.
    static func text(_ r: inout ByteReader) throws(DecodeError) -> Text
    mutating func times(created: Timestamp?, updated: Timestamp)
    mutating func title(_ value: Text, _ stamp: Stamp)
    mutating func notes(_ value: Text?, _ stamp: Stamp)
    mutating func done(_ value: Bool, _ stamp: Stamp)
    mutating func priority(_ value: UInt8?, _ stamp: Stamp)
    mutating func due(_ value: Due?, _ stamp: Stamp)
    mutating func list(_ value: Text?, _ stamp: Stamp)
    mutating func meta(_ key: Text, _ value: Text?, _ stamp: Stamp)
    /// The tag set: each tag with its add dots, and the dots some remove observed.
    mutating func tags(_ added: [(Text, [OperationID])], removed: [OperationID])
}

extension TaskFields where Text == String {
    static func text(_ r: inout ByteReader) throws(DecodeError) -> String { try r.string() }
}

extension TaskRecord: TaskFields {
    static var keepsStamps: Bool { true }

    mutating func times(created: Timestamp?, updated: Timestamp) {
        createdAt = created
        updatedAt = updated
    }

    mutating func title(_ value: String, _ stamp: Stamp) { title = LWWRegister(value: value, stamp: stamp) }
    mutating func notes(_ value: String?, _ stamp: Stamp) { notes = LWWRegister(value: value, stamp: stamp) }
    mutating func done(_ value: Bool, _ stamp: Stamp) { done = LWWRegister(value: value, stamp: stamp) }
    mutating func priority(_ value: UInt8?, _ stamp: Stamp) { priority = LWWRegister(value: value, stamp: stamp) }
    mutating func due(_ value: Due?, _ stamp: Stamp) { due = LWWRegister(value: value, stamp: stamp) }
    mutating func list(_ value: String?, _ stamp: Stamp) { list = LWWRegister(value: value, stamp: stamp) }
    mutating func meta(_ key: String, _ value: String?, _ stamp: Stamp) { meta[key] = LWWRegister(value: value, stamp: stamp) }

    mutating func tags(_ added: [(String, [OperationID])], removed: [OperationID]) {
        var tags = ORSet<String>()
        if !removed.isEmpty { tags.remove("", observed: removed) }
        for (tag, dots) in added { for d in dots { tags.add(tag, tag: d) } }
        self.tags = tags
    }
}

/// Only a task's creation time: what reading past a task that is not listed needs.
struct CreationTime: TaskFields {
    static var keepsStamps: Bool { false }

    var created: Timestamp?

    /// Steps over a string unread.
    static func text(_ r: inout ByteReader) throws(DecodeError) {
        _ = try r.bytes(try r.count(limit: r.remaining))
    }

    mutating func times(created: Timestamp?, updated: Timestamp) { self.created = created }
    mutating func title(_ value: Void, _ stamp: Stamp) {}
    mutating func notes(_ value: Void?, _ stamp: Stamp) {}
    mutating func done(_ value: Bool, _ stamp: Stamp) {}
    mutating func priority(_ value: UInt8?, _ stamp: Stamp) {}
    mutating func due(_ value: Due?, _ stamp: Stamp) {}
    mutating func list(_ value: Void?, _ stamp: Stamp) {}
    mutating func meta(_ key: Void, _ value: Void?, _ stamp: Stamp) {}
    mutating func tags(_ added: [(Void, [OperationID])], removed: [OperationID]) {}
}
