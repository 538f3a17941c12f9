/// The fixed 36-byte header that starts every segment file (Spec/log-format.md, "Segment header").
public struct SegmentHeader: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        /// The growing tail of a replica's own log: one commit per record, appended under the lock.
        case tail = 1
        /// An immutable segment: never rewritten in place, exchanged verbatim between replicas.
        case sealed = 2
    }

    public var kind: Kind
    /// The replica whose operations the segment holds (16 bytes, big-endian).
    public var replica: [UInt8]
    /// The sequence number of the first operation the segment may hold.
    public var firstSeq: UInt64
    /// Reserved for signatures and encryption of published segments; 0 in version 1.
    public var flags: UInt16

    public init(kind: Kind, replica: [UInt8], firstSeq: UInt64, flags: UInt16 = 0) {
        precondition(replica.count == 16)
        self.kind = kind
        self.replica = replica
        self.firstSeq = firstSeq
        self.flags = flags
    }

    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: FormatConstants.segmentHeaderSize)
        w.append(FormatConstants.segmentMagic)
        w.u8(FormatConstants.segmentVersion)
        w.u8(kind.rawValue)
        w.u16le(flags)
        w.append(replica)
        w.u64le(firstSeq)
        w.u32le(Checksum.xxh32(w.bytes))
        return w.bytes
    }

    /// Decodes the header at the start of `bytes`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(LogReadError) -> SegmentHeader {
        let size = FormatConstants.segmentHeaderSize
        guard bytes.count >= 4, Array(bytes[0..<4]) == FormatConstants.segmentMagic else {
            throw .notASegment
        }
        guard bytes.count >= size else { throw .truncatedHeader(size: bytes.count) }
        let stored = UInt32(bytes[32]) | UInt32(bytes[33]) << 8 | UInt32(bytes[34]) << 16
            | UInt32(bytes[35]) << 24
        guard Checksum.xxh32(UnsafeRawBufferPointer(rebasing: bytes[0..<32])) == stored else {
            throw .headerChecksumMismatch
        }
        let version = bytes[4]
        guard version != 0 else { throw .corruptRecord(offset: 4, reason: "format version 0 is invalid") }
        guard version == FormatConstants.segmentVersion else {
            throw .unsupportedVersion(found: version, newestKnown: FormatConstants.segmentVersion)
        }
        guard let kind = Kind(rawValue: bytes[5]) else { throw .unknownSegmentKind(bytes[5]) }
        let flags = UInt16(bytes[6]) | UInt16(bytes[7]) << 8
        guard flags == 0 else { throw .unsupportedFlags(flags) }
        var seq: UInt64 = 0
        for i in 0..<8 { seq |= UInt64(bytes[24 + i]) << (8 * UInt64(i)) }
        guard seq >= 1 else { throw .corruptRecord(offset: 24, reason: "first sequence number 0 (they start at 1)") }
        return SegmentHeader(kind: kind, replica: Array(bytes[8..<24]), firstSeq: seq, flags: flags)
    }
}
