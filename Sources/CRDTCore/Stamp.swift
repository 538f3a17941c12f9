/// The total order of writes used by last-writer-wins registers: the hybrid-clock time,
/// then the replica id, then the sequence number (which orders writes within one commit).
///
/// Two different operations never have equal stamps, so every replica picks the same winner.
public struct Stamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var time: Timestamp
    public var operation: OperationID

    @inlinable public init(time: Timestamp, operation: OperationID) {
        self.time = time
        self.operation = operation
    }

    @inlinable public static func < (a: Stamp, b: Stamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        return a.operation < b.operation
    }

    public var description: String { "\(time)@\(operation)" }
}
