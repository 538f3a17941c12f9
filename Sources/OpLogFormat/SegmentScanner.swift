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
    /// corruption. In a tail, a last record that is incomplete or fails its checksum (or
    /// trailing zeros) is a torn write, provided no valid record follows it; a damaged record
    /// with a valid one after it, or a record whose checksum holds but whose contents are
    /// wrong, is corruption.
    public static func scan(_ file: UnsafeRawBufferPointer) throws(LogReadError) -> SegmentScan {
        let header = try SegmentHeader.decode(file)
        var records: [RecordInfo] = []
        var offset = FormatConstants.segmentHeaderSize
        var expectedSeq = header.firstSeq
        while offset < file.count {
            let failure: String
            switch parseRecord(file, at: offset, expectedSeq: expectedSeq) {
            case .record(let r):
                records.append(r)
                offset = r.end
                expectedSeq = r.endSeq
                continue
            case .runsPastEnd:
                failure = "the file ends inside a record"
            case .invalid(let reason, let checksumHeld):
                if checksumHeld {
                    return SegmentScan(header: header, records: records, validEnd: offset,
                                       ending: .corrupt(offset: offset, reason: reason))
                }
                failure = reason
            }
            let torn = header.kind == .tail
                && (file[offset...].allSatisfy { $0 == 0 } || !hasValidRecord(file, after: offset, minimumSeq: expectedSeq))
            return SegmentScan(
                header: header, records: records, validEnd: offset,
                ending: torn ? .tornTail(offset: offset, bytes: file.count - offset) : .corrupt(offset: offset, reason: failure))
        }
        return SegmentScan(header: header, records: records, validEnd: offset, ending: .clean)
    }

    enum Parsed {
        case record(RecordInfo)
        case runsPastEnd
        /// `checksumHeld`: the bytes are as written, so the damage is not a torn write.
        case invalid(String, checksumHeld: Bool)
    }

    /// The valid records found after damage at `offset`, resynchronising byte by byte: what
    /// can be saved of a tail damaged in the middle.
    public static func recover(_ file: UnsafeRawBufferPointer, after offset: Int, minimumSeq: UInt64) -> [RecordInfo] {
        var found: [RecordInfo] = []
        var candidate = offset + 1
        var minimum = minimumSeq
        while candidate + 9 <= file.count {
            if case .record(let r) = parseRecord(file, at: candidate, expectedSeq: nil, minimumSeq: minimum) {
                found.append(r)
                candidate = r.end
                minimum = r.endSeq
            } else {
                candidate += 1
            }
        }
        return found
    }

    /// Whether a valid record starts anywhere after `offset` (so the damage there is not a
    /// torn end of the file).
    private static func hasValidRecord(_ file: UnsafeRawBufferPointer, after offset: Int, minimumSeq: UInt64) -> Bool {
        var candidate = offset + 1
        while candidate + 9 <= file.count {
            let type = file[candidate + 4]
            if type == RecordType.commits.rawValue || type == RecordType.clock.rawValue,
                case .record = parseRecord(file, at: candidate, expectedSeq: nil, minimumSeq: minimumSeq)
            {
                return true
            }
            candidate += 1
        }
        return false
    }

    /// Parses the record at `offset`. With `expectedSeq` nil, any first sequence number in
    /// `minimumSeq ..< minimumSeq + 2^32` is accepted (used when looking for a later record).
    static func parseRecord(
        _ file: UnsafeRawBufferPointer, at offset: Int, expectedSeq: UInt64?, minimumSeq: UInt64 = 0
    ) -> Parsed {
        var r = ByteReader(file, offset: offset)
        do {
            let stored = try r.u32le()
            let typeByte = try r.u8()
            let firstSeq = try r.uvarint()
            if expectedSeq == nil && (firstSeq < minimumSeq || firstSeq - minimumSeq >= 1 << 32) {
                return .invalid("implausible sequence number", checksumHeld: false)
            }
            let opCount = try r.uvarint()
            guard firstSeq < UInt64.max, opCount < UInt64.max - firstSeq else {
                return .invalid("sequence numbers past 2^64", checksumHeld: false)
            }
            let rawLength = try r.count(limit: FormatConstants.maxRawPayload)
            let storedLength = try r.uvarint()
            guard storedLength <= UInt64(r.remaining) else { return .runsPastEnd }
            let start = r.offset
            let end = start + Int(storedLength)
            let sum = Checksum.xxh32(UnsafeRawBufferPointer(rebasing: file[(offset + 4)..<end]))
            guard sum == stored else { return .invalid("checksum mismatch", checksumHeld: false) }
            guard let type = RecordType(rawValue: typeByte) else {
                return .invalid("unknown record type \(typeByte)", checksumHeld: true)
            }
            guard Int(storedLength) <= rawLength else {
                return .invalid("stored payload longer than its raw length", checksumHeld: true)
            }
            // LZ4 expands a block at most about 255-fold: a larger raw length is a lie that
            // would only make a reader allocate for it.
            guard rawLength / 256 <= Int(storedLength) else {
                return .invalid("raw length \(rawLength) is more than LZ4 can expand \(storedLength) bytes to", checksumHeld: true)
            }
            if let expectedSeq, firstSeq != expectedSeq {
                return .invalid("sequence gap: record starts at \(firstSeq), expected \(expectedSeq)", checksumHeld: true)
            }
            guard type == .commits || opCount == 0 else {
                return .invalid("clock record carries operations", checksumHeld: true)
            }
            return .record(
                RecordInfo(
                    offset: offset, length: end - offset, type: type, firstSeq: firstSeq,
                    opCount: opCount, rawLength: rawLength, payload: start..<end))
        } catch {
            if error.reason.hasPrefix("unexpected end") { return .runsPastEnd }
            return .invalid(error.reason, checksumHeld: false)
        }
    }
}
