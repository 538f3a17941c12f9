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

    /// Whether the payload is stored as is (not LZ4-compressed).
    public var isStoredRaw: Bool { payload.count == rawLength }

    /// One past the last sequence number in the record.
    public var endSeq: UInt64 { firstSeq + opCount }
    public var end: Int { offset + length }
}

public enum RecordFraming {
    /// Frames a payload as a record. The payload is stored LZ4-compressed when that is smaller.
    public static func encode(
        type: RecordType, firstSeq: UInt64, opCount: UInt64, payload: [UInt8], effort: LZ4Block.Effort = .fast
    ) -> [UInt8] {
        var w = ByteWriter(capacity: payload.count + 24)
        payload.withUnsafeBytes { append(type: type, firstSeq: firstSeq, opCount: opCount, payload: $0, effort: effort, to: &w) }
        return w.bytes
    }

    /// Frames a payload as a record at the end of `w` (no intermediate buffer).
    public static func append(
        type: RecordType, firstSeq: UInt64, opCount: UInt64, payload: UnsafeRawBufferPointer,
        effort: LZ4Block.Effort = .fast, to w: inout ByteWriter
    ) {
        // Payloads this small rarely shrink; storing them raw is always allowed.
        let compressed = payload.count < FormatConstants.smallestCompressedPayload
            ? nil : LZ4Block.compressIfSmaller(payload, effort: effort)
        if let compressed {
            compressed.withUnsafeBytes { append(type: type, firstSeq: firstSeq, opCount: opCount, payload: payload, stored: $0, to: &w) }
        } else {
            append(type: type, firstSeq: firstSeq, opCount: opCount, payload: payload, stored: nil, to: &w)
        }
    }

    /// Frames a payload as a record at the end of `w`, compressed with `compressor`'s kept
    /// state (liblz4's fast search): a writer framing many short records.
    public static func append(
        type: RecordType, firstSeq: UInt64, opCount: UInt64, payload: UnsafeRawBufferPointer,
        compressor: LZ4Block.FastCompressor, to w: inout ByteWriter
    ) {
        guard payload.count >= FormatConstants.smallestCompressedPayload else {
            return append(type: type, firstSeq: firstSeq, opCount: opCount, payload: payload, stored: nil, to: &w)
        }
        compressor.compressIfSmaller(payload) {
            append(type: type, firstSeq: firstSeq, opCount: opCount, payload: payload, stored: $0, to: &w)
        }
    }

    /// Writes the record: `payload` as is when `stored` is nil, else `stored`, its LZ4 block.
    /// The payload must be at most ``FormatConstants/maxRawPayload`` bytes (a longer one stops
    /// the process).
    private static func append(
        type: RecordType, firstSeq: UInt64, opCount: UInt64, payload: UnsafeRawBufferPointer,
        stored: UnsafeRawBufferPointer?, to w: inout ByteWriter
    ) {
        // A reader refuses a longer payload ("Reader rules"): framing one would acknowledge
        // what cannot be read back, so writers refuse it before they frame.
        precondition(payload.count <= FormatConstants.maxRawPayload, "a record's payload is at most 64 MiB")
        let body = stored ?? payload
        // Written through a cursor over room reserved once: the checksum, the type, four
        // uvarints and the body.
        let fitted = w.withCursor(room: 5 + 4 * 10 + body.count) { w in
            w.u32le(0)
            w.u8(type.rawValue)
            w.uvarint(firstSeq)
            w.uvarint(opCount)
            w.uvarint(payload.count)
            w.uvarint(body.count)
            w.append(body)
            w.withWritten { record in
                let sum = Checksum.xxh32(UnsafeRawBufferPointer(rebasing: record[4...]))
                record.storeBytes(of: sum.littleEndian, toByteOffset: 0, as: UInt32.self)
            }
        }
        precondition(fitted, "a record is framed in the room counted for it")
    }

    /// Returns the record's payload, decompressed.
    public static func payload(
        of record: RecordInfo, in file: UnsafeRawBufferPointer
    ) throws(LogReadError) -> [UInt8] {
        let stored = UnsafeRawBufferPointer(rebasing: file[record.payload])
        if record.isStoredRaw { return Array(stored) }
        guard let raw = LZ4Block.decompress(stored, rawCount: record.rawLength) else {
            throw .corruptRecord(offset: record.offset, reason: "LZ4 payload does not decode")
        }
        return raw
    }
}
