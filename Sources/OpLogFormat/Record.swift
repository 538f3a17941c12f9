/// The kind of a record (Spec/log-format.md, "Records").
public enum RecordType: UInt8, Sendable {
    /// One or more commits of operations.
    case commits = 1
    /// A clock observation: the greatest hybrid-clock time the replica has seen; no operations.
    case clock = 2
}

/// One framed record located in a segment file.
public struct RecordInfo: Sendable, Equatable {
    /// Byte offset of the record's first byte (its checksum) in the file.
    public var offset: Int
    /// Total bytes of the record.
    public var length: Int
    public var type: RecordType
    /// Sequence number of the first operation in the record.
    public var firstSeq: UInt64
    /// Number of operations in the record (0 for clock records).
    public var opCount: UInt64
    /// Bytes of the payload after decompression.
    public var rawLength: Int
    /// Range of the stored payload within the file.
    public var payload: Range<Int>

    /// One past the last sequence number in the record.
    public var endSeq: UInt64 { firstSeq + opCount }
    public var end: Int { offset + length }
}

public enum RecordFraming {
    /// Frames a payload as a record. The payload is stored LZ4-compressed when that is smaller.
    public static func encode(
        type: RecordType, firstSeq: UInt64, opCount: UInt64, payload: [UInt8]
    ) -> [UInt8] {
        // Payloads this small rarely shrink; storing them raw is always allowed.
        let compressed = payload.count < FormatConstants.smallestCompressedPayload
            ? nil : payload.withUnsafeBytes { LZ4Block.compressIfSmaller($0) }
        let stored = compressed ?? payload
        var w = ByteWriter(capacity: stored.count + 24)
        w.u32le(0)
        w.u8(type.rawValue)
        w.uvarint(firstSeq)
        w.uvarint(opCount)
        w.uvarint(payload.count)
        w.uvarint(stored.count)
        w.append(stored)
        let sum = w.bytes.withUnsafeBytes { Checksum.xxh32(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        for i in 0..<4 { w.bytes[i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt32(i))) }
        return w.bytes
    }

    /// Returns the record's payload, decompressed.
    public static func payload(
        of record: RecordInfo, in file: UnsafeRawBufferPointer
    ) throws(LogReadError) -> [UInt8] {
        let stored = UnsafeRawBufferPointer(rebasing: file[record.payload])
        if stored.count == record.rawLength { return Array(stored) }
        guard let raw = LZ4Block.decompress(stored, rawCount: record.rawLength) else {
            throw .corruptRecord(offset: record.offset, reason: "LZ4 payload does not decode")
        }
        return raw
    }
}
