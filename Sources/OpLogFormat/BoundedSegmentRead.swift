/// Reading a sealed segment from a file that may be hostile (one in a shared folder), in
/// pieces whose sizes the file's own framing bounds (Spec/sync-folder.md, "Reader rules").
extension SegmentScanner {
    /// The most bytes a record's framing takes before its payload: the checksum, the type
    /// and four uvarints.
    package static let recordPrefixLimit = 4 + 1 + 4 * 10

    /// The bytes of a clean sealed segment of `size` bytes, read through `read`, which
    /// returns exactly `count` bytes from `offset`, with its header and the sequence number
    /// after its last operation.
    ///
    /// The header is read and checked first; then each record, once its framing says it
    /// ends within `size`, and it is checked before the next one is read. So memory grows
    /// with the valid records found, never with the length a file claims, and a file that
    /// is mostly a hole (a sparse file) costs one page.
    package static func readSealed(
        size: Int, _ read: (_ offset: Int, _ count: Int) throws(LogReadError) -> [UInt8]
    ) throws(LogReadError) -> (bytes: [UInt8], header: SegmentHeader, nextSeq: UInt64) {
        let headerSize = FormatConstants.segmentHeaderSize
        guard size >= headerSize else {
            if size >= 4, try read(0, 4) != FormatConstants.segmentMagic { throw .notASegment }
            throw .truncatedHeader(size: size)
        }
        var bytes = try read(0, headerSize)
        let header = try SharedBytes(bytes).withUnsafeBytes { (b) throws(LogReadError) in try SegmentHeader.decode(b) }
        guard header.kind == .sealed else {
            throw .corruptRecord(offset: 5, reason: "an open tail, not a sealed segment")
        }
        var expectedSeq = header.firstSeq
        while bytes.count < size {
            let offset = bytes.count
            var record = try read(offset, min(recordPrefixLimit, size - offset))
            let length = try recordLength(record, at: offset)
            guard length <= size - offset else {
                throw .corruptRecord(offset: offset, reason: "the file ends inside a record (a copy still in progress?)")
            }
            if length > record.count {
                record += try read(offset + record.count, length - record.count)
            } else {
                record.removeLast(record.count - length)
            }
            let parsed = record.withUnsafeBytes { parseRecord($0, at: 0, expectedSeq: expectedSeq) }
            switch parsed {
            case .record(let info): expectedSeq = info.endSeq
            case .runsPastEnd: throw .corruptRecord(offset: offset, reason: "the file ends inside a record")
            case .invalid(let reason, _): throw .corruptRecord(offset: offset, reason: reason)
            }
            bytes += record
        }
        return (bytes, header, expectedSeq)
    }

    /// The whole length of the record whose framing starts `prefix` (at file offset
    /// `offset`), from its stored length, checked against the raw payload limit.
    private static func recordLength(_ prefix: [UInt8], at offset: Int) throws(LogReadError) -> Int {
        do throws(DecodeError) {
            return try SharedBytes(prefix).withUnsafeBytes { (b) throws(DecodeError) -> Int in
                var r = ByteReader(b)
                _ = try r.u32le()
                _ = try r.u8()
                try r.skipUvarints(2)
                let raw = try r.count(limit: FormatConstants.maxRawPayload)
                let stored = try r.count(limit: raw)
                return r.offset + stored
            }
        } catch {
            throw .corruptRecord(offset: offset + error.offset, reason: error.reason)
        }
    }
}
