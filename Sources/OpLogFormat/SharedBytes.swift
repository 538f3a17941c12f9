/// Bytes read where they lie: an array's, or memory that another object keeps valid and
/// unchanged for as long as it lives (a file mapped into memory). Slicing shares them;
/// nothing is copied.
public struct SharedBytes: @unchecked Sendable {
    // @unchecked: the memory of `.memory` is read-only for as long as its owner lives, and
    // the owner is never touched, only kept.
    private enum Storage {
        case array(ArraySlice<UInt8>)
        case memory(owner: AnyObject, UnsafeRawBufferPointer)
    }

    private let storage: Storage

    public init(_ bytes: ArraySlice<UInt8>) { storage = .array(bytes) }

    public init(_ bytes: [UInt8]) { storage = .array(bytes[...]) }

    /// Bytes in memory that stays valid and unchanged while `owner` lives.
    public init(_ buffer: UnsafeRawBufferPointer, owner: AnyObject) { storage = .memory(owner: owner, buffer) }

    public var count: Int {
        switch storage {
        case .array(let a): a.count
        case .memory(_, let buffer): buffer.count
        }
    }

    /// The bytes at `range`, counted from the first of these.
    public subscript(range: Range<Int>) -> SharedBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the bytes")
        switch storage {
        case .array(let a):
            return SharedBytes(a[(a.startIndex + range.lowerBound)..<(a.startIndex + range.upperBound)])
        case .memory(let owner, let buffer):
            return SharedBytes(UnsafeRawBufferPointer(rebasing: buffer[range]), owner: owner)
        }
    }

    /// `body` reads the bytes in place; the pointer is valid only during the call.
    public func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        switch storage {
        case .array(let a):
            // The array's own accessor rethrows untyped: the typed error goes through a result.
            let result: Result<T, E> = a.withUnsafeBytes { buf in Result { () throws(E) -> T in try body(buf) } }
            return try result.get()
        case .memory(let owner, let buffer):
            defer { withExtendedLifetime(owner) {} }
            return try body(buffer)
        }
    }

    /// ``withUnsafeBytes(_:)`` for a decoder (the name the other byte containers use).
    public func withDecoding<T>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> T) throws(DecodeError) -> T {
        try withUnsafeBytes(body)
    }
}
