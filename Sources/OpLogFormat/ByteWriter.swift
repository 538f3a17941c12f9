#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends little-endian integers, LEB128 varints and length-prefixed strings to a byte buffer.
///
/// The buffer keeps room past what is written between writes (made once, when it grows), and
/// each write stores straight into that room: appending to an array a few bytes at a time
/// cost more than the bytes did (every commit's record is written this way).
public struct ByteWriter: Sendable, ByteSink {
    /// What is written, then room for more.
    @usableFromInline var storage: [UInt8] = []
    @usableFromInline var length = 0

    public init(capacity: Int = 0) {
        if capacity > 0 { storage = [UInt8](repeating: 0, count: capacity) }
    }

    /// What has been written.
    public var bytes: [UInt8] { length == storage.count ? storage : Array(storage[..<length]) }

    /// How many bytes have been written.
    public var count: Int { length }

    /// Drops what has been written, keeping the memory for what comes next.
    public mutating func removeAll() { length = 0 }

    /// Reads what has been written in place.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBufferPointer { (b) throws(E) in try body(UnsafeRawBufferPointer(start: b.baseAddress, count: length)) }
    }

    /// Changes what has been written in place.
    @inlinable
    public mutating func withUnsafeMutableBytes<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let length = length
        return try storage.withUnsafeMutableBufferPointer { (b) throws(E) in
            try body(UnsafeMutableRawBufferPointer(start: b.baseAddress, count: length))
        }
    }

    /// Lets `store` write at most `room` bytes past the end; it returns how many it wrote.
    @inlinable @inline(__always)
    mutating func write(room: Int, _ store: (UnsafeMutableRawPointer) -> Int) {
        if storage.count - length < room { grow(room) }
        let start = length
        length += storage.withUnsafeMutableBytes { store($0.baseAddress! + start) }
    }

    /// Adds at least `room` zero bytes of room, doubling the buffer at least. One copy and one
    /// fill: zeros appended as a sequence go byte by byte in an unoptimised build (40 s for a
    /// 64 MiB payload).
    @usableFromInline mutating func grow(_ room: Int) {
        let old = storage.count
        let added = Swift.max(room, old, 64)
        storage = [UInt8](unsafeUninitializedCapacity: old + added) { grown, count in
            let base = UnsafeMutableRawPointer(grown.baseAddress!)
            storage.withUnsafeBytes { if let from = $0.baseAddress { base.copyMemory(from: from, byteCount: old) } }
            memset(base + old, 0, added)
            count = old + added
        }
    }

    @inlinable @inline(__always)
    public mutating func u8(_ v: UInt8) {
        write(room: 1) {
            $0.storeBytes(of: v, as: UInt8.self)
            return 1
        }
    }

    public mutating func u16le(_ v: UInt16) {
        write(room: 2) {
            $0.storeBytes(of: v.littleEndian, as: UInt16.self)
            return 2
        }
    }

    @inlinable
    public mutating func u32le(_ v: UInt32) {
        write(room: 4) {
            $0.storeBytes(of: v.littleEndian, as: UInt32.self)
            return 4
        }
    }

    @inlinable
    public mutating func u64le(_ v: UInt64) {
        write(room: 8) {
            $0.storeBytes(of: v.littleEndian, as: UInt64.self)
            return 8
        }
    }

    @inlinable @inline(__always)
    public mutating func uvarint(_ value: UInt64) {
        write(room: 10) { Self.storeUvarint(value, at: $0) }
    }

    /// Stores `value` as a uvarint at `out` (room for ten bytes); returns how many it took.
    @inlinable @inline(__always)
    static func storeUvarint(_ value: UInt64, at out: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            out.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n += 1
        }
        out.storeBytes(of: UInt8(v), toByteOffset: n, as: UInt8.self)
        return n + 1
    }

    /// Lets `body` write at most `room` bytes past the end through a cursor (valid only during
    /// the call): the buffer is checked and grown once, not at every write.
    /// - Returns: false, keeping nothing `body` wrote, when it did not fit in `room`.
    @inlinable
    public mutating func withCursor(room: Int, _ body: (inout ByteCursor) -> Void) -> Bool {
        var fitted = false
        write(room: room) { out in
            var cursor = ByteCursor(base: out, room: room)
            body(&cursor)
            fitted = !cursor.overflowed
            return fitted ? cursor.count : 0
        }
        return fitted
    }

    /// Appends `raw` as it is.
    @inlinable
    public mutating func append(_ raw: UnsafeRawBufferPointer) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        write(room: raw.count) {
            $0.copyMemory(from: base, byteCount: raw.count)
            return raw.count
        }
    }

    public mutating func append(_ other: some Sequence<UInt8>) {
        if other.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) == nil {
            for b in other { u8(b) }
        }
    }
}
