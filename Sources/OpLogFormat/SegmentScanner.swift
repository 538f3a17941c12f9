/// The result of walking the records of one segment file.
public struct SegmentScan: Sendable {
    /// How the walk ended.
    public enum Ending: Sendable, Equatable {
        /// Every byte after the header belongs to a valid record.
        case clean
        /// The file ends inside a record: a crash (or a concurrent writer) mid-append. Not
        /// corruption: readers stop before it; the next writer truncates it under the lock.
        case tornTail(offset: Int, bytes: Int)
        /// A damaged record with more data after it. Records after `offset` were not read.
        case corrupt(offset: Int, reason: String)
    }

    public var header: SegmentHeader
    public var records: [RecordInfo]
    /// Offset just past the last valid record.
    public var validEnd: Int
    public var ending: Ending

    /// Sequence number after the last operation in the valid records (or the header's first).
    public var nextSeq: UInt64 { records.last.map { $0.endSeq } ?? header.firstSeq }
}

public enum SegmentScanner {
    /// Walks the records of a whole segment file held in memory.
    ///
    /// Sealed segments are written whole and renamed into place, so any damage in them is
    /// corruption; in a tail, a damaged last record (or trailing zeros) is a torn write.
    public static func scan(_ file: UnsafeRawBufferPointer) throws(LogReadError) -> SegmentScan {
        let header = try SegmentHeader.decode(file)
        var records: [RecordInfo] = []
        var offset = FormatConstants.segmentHeaderSize
        var expectedSeq = header.firstSeq
        while offset < file.count {
            switch parseRecord(file, at: offset, expectedSeq: expectedSeq) {
            case .record(let r):
                records.append(r)
                offset = r.end
                expectedSeq = r.endSeq
            case .runsPastEnd:
                return SegmentScan(
                    header: header, records: records, validEnd: offset,
                    ending: header.kind == .tail
                        ? .tornTail(offset: offset, bytes: file.count - offset)
                        : .corrupt(offset: offset, reason: "file ends inside a record (truncated)"))
            case .invalid(let reason, let recordEnd):
                let tornLike =
                    recordEnd == file.count || file[offset...].allSatisfy { $0 == 0 }
                if header.kind == .tail && tornLike {
                    return SegmentScan(
                        header: header, records: records, validEnd: offset,
                        ending: .tornTail(offset: offset, bytes: file.count - offset))
                }
                return SegmentScan(
                    header: header, records: records, validEnd: offset,
                    ending: .corrupt(offset: offset, reason: reason))
            }
        }
        return SegmentScan(header: header, records: records, validEnd: offset, ending: .clean)
    }

    private enum Parsed {
        case record(RecordInfo)
        case runsPastEnd
        /// `recordEnd` is where the record would end if its framing is to be believed.
        case invalid(String, recordEnd: Int?)
    }

    private static func parseRecord(
        _ file: UnsafeRawBufferPointer, at offset: Int, expectedSeq: UInt64
    ) -> Parsed {
        var r = ByteReader(file, offset: offset)
        do {
            let stored = try r.u32le()
            let typeByte = try r.u8()
            let firstSeq = try r.uvarint()
            let opCount = try r.uvarint()
            let rawLength = try r.count(limit: FormatConstants.maxRawPayload)
            let storedLength = try r.uvarint()
            guard storedLength <= UInt64(r.remaining) else { return .runsPastEnd }
            let start = r.offset
            let end = start + Int(storedLength)
            let sum = Checksum.xxh32(UnsafeRawBufferPointer(rebasing: file[(offset + 4)..<end]))
            guard sum == stored else { return .invalid("checksum mismatch", recordEnd: end) }
            guard let type = RecordType(rawValue: typeByte) else {
                return .invalid("unknown record type \(typeByte)", recordEnd: end)
            }
            guard Int(storedLength) <= rawLength else {
                return .invalid("stored payload longer than its raw length", recordEnd: end)
            }
            guard firstSeq == expectedSeq else {
                return .invalid(
                    "sequence gap: record starts at \(firstSeq), expected \(expectedSeq)", recordEnd: end)
            }
            guard type == .commits || opCount == 0 else {
                return .invalid("clock record carries operations", recordEnd: end)
            }
            return .record(
                RecordInfo(
                    offset: offset, length: end - offset, type: type, firstSeq: firstSeq,
                    opCount: opCount, rawLength: rawLength, payload: start..<end))
        } catch {
            if error.reason.hasPrefix("unexpected end") { return .runsPastEnd }
            return .invalid(error.reason, recordEnd: nil)
        }
    }
}
