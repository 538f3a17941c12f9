/// Where the encoders write: a ``ByteWriter`` that grows as it is written, or a ``ByteCursor``
/// over room reserved in one beforehand. An encoder written once over `some ByteSink` writes
/// through either.
public protocol ByteSink {
    mutating func u8(_ v: UInt8)
    mutating func u64le(_ v: UInt64)
    /// Unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the last byte.
    mutating func uvarint(_ value: UInt64)
    /// Appends `raw` as it is.
    mutating func append(_ raw: UnsafeRawBufferPointer)
}

extension ByteSink {
    @inlinable @inline(__always)
    public mutating func uvarint(_ value: Int) { uvarint(UInt64(value)) }

    /// Zig-zag then LEB128: small magnitudes of either sign take few bytes.
    @inlinable
    public mutating func svarint(_ value: Int64) {
        uvarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A uvarint byte count followed by the UTF-8 bytes.
    @inlinable
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { buf in
            uvarint(buf.count)
            append(UnsafeRawBufferPointer(buf))
        }
    }
}

/// Writes into room reserved beforehand (``ByteWriter/withCursor(room:_:)``): each write is a
/// store and a check that it fits, with none of the growing buffer's checks. A write that does
/// not fit is dropped, and so is every write after it (``overflowed``).
public struct ByteCursor: ByteSink {
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let room: Int
    @usableFromInline var written = 0
    /// A write did not fit in the room: what was written is incomplete.
    public var overflowed: Bool { written > room }

    @inlinable init(base: UnsafeMutableRawPointer, room: Int) {
        self.base = base
        self.room = room
    }

    /// How many bytes have been written.
    public var count: Int { Swift.min(written, room) }

    /// Where `n` bytes go, or nil when they do not fit (or an earlier write did not).
    @inlinable @inline(__always)
    mutating func claim(_ n: Int) -> UnsafeMutableRawPointer? {
        guard n <= room - written else {
            written = room + 1
            return nil
        }
        defer { written += n }
        return base + written
    }

    @inlinable @inline(__always)
    public mutating func u8(_ v: UInt8) { claim(1)?.storeBytes(of: v, as: UInt8.self) }

    @inlinable @inline(__always)
    public mutating func u32le(_ v: UInt32) { claim(4)?.storeBytes(of: v.littleEndian, as: UInt32.self) }

    @inlinable @inline(__always)
    public mutating func u64le(_ v: UInt64) { claim(8)?.storeBytes(of: v.littleEndian, as: UInt64.self) }

    @inlinable @inline(__always)
    public mutating func uvarint(_ value: UInt64) {
        guard room - written >= 10 else {
            written = room + 1
            return
        }
        written += ByteWriter.storeUvarint(value, at: base + written)
    }

    @inlinable @inline(__always)
    public mutating func append(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress, raw.count > 0 else { return }
        claim(raw.count)?.copyMemory(from: source, byteCount: raw.count)
    }

    /// Changes what this cursor has written, in place.
    @inlinable
    public func withWritten<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
        body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }
}

/// Counts the bytes an encoder would write, writing none: the exact size of an encoding
/// without a buffer for it.
public struct ByteCounter: ByteSink {
    @usableFromInline var written = 0
    /// How many bytes have been written.
    public var count: Int { written }

    public init() {}

    @inlinable public mutating func u8(_ v: UInt8) { written += 1 }
    @inlinable public mutating func u64le(_ v: UInt64) { written += 8 }
    @inlinable public mutating func uvarint(_ value: UInt64) { written += Self.uvarintSize(value) }
    @inlinable public mutating func append(_ raw: UnsafeRawBufferPointer) { written += raw.count }

    /// The bytes `value` takes as a uvarint (1 to 10).
    @inlinable public static func uvarintSize(_ value: UInt64) -> Int { max(1, (64 - value.leadingZeroBitCount + 6) / 7) }
}
