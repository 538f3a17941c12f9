/// Why bytes could not be decoded.
public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset (within the buffer being decoded) where decoding failed.
    public var offset: Int
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(reason) at byte \(offset)" }
}

/// Reads what ``ByteWriter`` writes, with bounds checks that throw instead of trapping.
public struct ByteReader: ~Copyable {
    public let base: UnsafeRawBufferPointer
    /// Where the next read starts.
    public var offset: Int { next }
    public let end: Int
    // The hot reads are inlinable (decoders in other modules call them for every field), so
    // they need the position settable from outside the module.
    @usableFromInline var next: Int

    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0, end: Int? = nil) {
        base = buffer
        next = offset
        self.end = end ?? buffer.count
    }

    public var isAtEnd: Bool { next >= end }
    public var remaining: Int { end - next }

    public func error(_ reason: String) -> DecodeError { DecodeError(offset: next, reason: reason) }

    @inlinable @inline(__always)
    public mutating func u8() throws(DecodeError) -> UInt8 {
        guard next < end else { throw error("unexpected end of data") }
        let b = base[next]
        next += 1
        return b
    }

    public mutating func u16le() throws(DecodeError) -> UInt16 {
        UInt16(try u8()) | UInt16(try u8()) << 8
    }

    public mutating func u32le() throws(DecodeError) -> UInt32 {
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(try u8()) << (8 * i) }
        return v
    }

    public mutating func u64le() throws(DecodeError) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(try u8()) << (8 * UInt64(i)) }
        return v
    }

    @inlinable @inline(__always)
    public mutating func uvarint() throws(DecodeError) -> UInt64 {
        // Most varints (counts, indexes, small numbers) are one byte.
        if next < end, base[next] < 0x80 {
            next += 1
            return UInt64(base[next - 1])
        }
        // Up to eight bytes (56 bits: clock times are six) are taken from one load: the first
        // byte without its high bit ends the varint, and the 7-bit groups are packed together.
        if end - next >= 8, let (x, length) = Self.varint(inWord: base.loadUnaligned(fromByteOffset: next, as: UInt64.self)) {
            next += length
            return x
        }
        return try longUvarint()
    }

    /// The varint at the start of the eight bytes `word` holds (as loaded, in memory order),
    /// and its length; nil when it is longer. The first byte without its high bit ends it, and
    /// the 7-bit groups are packed together.
    @inlinable @inline(__always)
    public static func varint(inWord raw: UInt64) -> (value: UInt64, length: Int)? {
        let word = UInt64(littleEndian: raw)
        let stops = ~word & 0x8080_8080_8080_8080
        guard stops != 0 else { return nil }
        let length = (stops.trailingZeroBitCount + 1) / 8
        var x = word & (length == 8 ? ~0 : (1 << (8 * UInt64(length))) - 1) & 0x7F7F_7F7F_7F7F_7F7F
        x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1)
        x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2)
        x = (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4)
        return (x, length)
    }

    /// A varint read a byte at a time: near the end of the buffer, or longer than eight bytes.
    @usableFromInline mutating func longUvarint() throws(DecodeError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard next < end else { throw error("unexpected end of data in a varint") }
            let b = base[next]
            next += 1
            if shift == 63 && b > 1 { throw error("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw error("varint longer than 10 bytes") }
        }
    }

    /// Steps over a uvarint without working out its value.
    @inlinable @inline(__always)
    public mutating func skipUvarint() throws(DecodeError) { try skipUvarints(1) }

    /// Steps over `n` uvarints without working out their values: as many as end within eight
    /// bytes are found from one load.
    @inlinable @inline(__always)
    public mutating func skipUvarints(_ n: Int) throws(DecodeError) {
        var left = n
        while left > 0 {
            guard end - next >= 8 else {
                _ = try longUvarint()
                left -= 1
                continue
            }
            var stops = ~UInt64(littleEndian: base.loadUnaligned(fromByteOffset: next, as: UInt64.self)) & 0x8080_8080_8080_8080
            let ending = stops.nonzeroBitCount
            if ending == 0 {
                _ = try longUvarint()
                left -= 1
            } else if ending >= left {
                // Drop the stops of all but the last varint wanted, then step past that one.
                for _ in 1..<left { stops &= stops &- 1 }
                next += (stops.trailingZeroBitCount + 1) / 8
                return
            } else {
                // Every varint ending in these eight bytes is stepped over.
                next += (64 - stops.leadingZeroBitCount) / 8
                left -= ending
            }
        }
    }

    /// A uvarint that must fit in `Int` and be at most `limit`.
    @inlinable @inline(__always)
    public mutating func count(limit: Int) throws(DecodeError) -> Int {
        let v = try uvarint()
        guard v <= UInt64(limit) else { throw countError(v, limit) }
        return Int(v)
    }

    @usableFromInline func countError(_ v: UInt64, _ limit: Int) -> DecodeError { error("length \(v) exceeds \(limit)") }

    public mutating func svarint() throws(DecodeError) -> Int64 {
        let u = try uvarint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    public mutating func bytes(_ n: Int) throws(DecodeError) -> UnsafeRawBufferPointer {
        guard n >= 0, n <= end - next else { throw error("unexpected end of data (need \(n) bytes)") }
        let slice = UnsafeRawBufferPointer(rebasing: base[next..<next + n])
        next += n
        return slice
    }

    /// A uvarint length then that many bytes of valid UTF-8.
    public mutating func string() throws(DecodeError) -> String {
        String(decoding: try utf8(), as: UTF8.self)
    }

    /// What ``string()`` reads, as the bytes in place (checked to be valid UTF-8), not copied
    /// into a string.
    public mutating func utf8() throws(DecodeError) -> UnsafeBufferPointer<UInt8> {
        let start = next
        let n = try count(limit: end - next)
        let raw = try bytes(n)
        // ASCII, the common case, is valid as it stands (and is checked much faster).
        guard Self.isASCII(raw) || String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
            throw DecodeError(offset: start, reason: "string is not valid UTF-8")
        }
        return raw.bindMemory(to: UInt8.self)
    }
}

extension ByteReader {
    /// Whether every byte is below 0x80, checked eight at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            high |= UInt64(bytes[i])
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``DecodeError`` (keeps the typed error).
    public func withDecoding<T>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> T) throws(DecodeError) -> T {
        try self[...].withDecoding(body)
    }
}

extension ArraySlice where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws ``DecodeError`` (keeps the typed error).
    public func withDecoding<T>(_ body: (UnsafeRawBufferPointer) throws(DecodeError) -> T) throws(DecodeError) -> T {
        let result: Result<T, DecodeError> = withUnsafeBytes { buf in
            Result { () throws(DecodeError) -> T in try body(buf) }
        }
        return try result.get()
    }
}
