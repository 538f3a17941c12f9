/// Appends little-endian integers, LEB128 varints and length-prefixed strings to a byte buffer.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    @inline(__always)
    public mutating func u8(_ v: UInt8) { bytes.append(v) }

    public mutating func u16le(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    public mutating func u32le(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func u64le(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Unsigned LEB128: 7 bits a byte, low bits first, high bit set on all but the last byte.
    @inline(__always)
    public mutating func uvarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inline(__always)
    public mutating func uvarint(_ value: Int) { uvarint(UInt64(value)) }

    /// Zig-zag then LEB128: small magnitudes of either sign take few bytes.
    public mutating func svarint(_ value: Int64) {
        uvarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A uvarint byte count followed by the UTF-8 bytes.
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { buf in
            uvarint(buf.count)
            bytes.append(contentsOf: buf)
        }
    }

    public mutating func append(_ other: some Sequence<UInt8>) { bytes.append(contentsOf: other) }
}
