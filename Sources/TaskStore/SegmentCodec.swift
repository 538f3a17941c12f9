import CRDTCore
import OpLogFormat
import TaskModel

/// Builds and reads whole segment files of task commits.
enum SegmentCodec {
    /// Records of a sealed segment hold at most this many payload bytes before compression.
    static let maxSealedRecordPayload = 8 << 20

    /// A sealed segment holding `commits` (consecutive, non-empty) of `replica`.
    static func sealed(_ replica: ReplicaID, _ commits: [Commit], effort: LZ4Block.Effort = .small) -> [UInt8] {
        var out = SegmentHeader(kind: .sealed, replica: replica.bytes, firstSeq: commits[0].firstSeq).encoded()
        appendRecords(commits[...], effort: effort, to: &out)
        return out
    }

    private static func appendRecords(_ commits: ArraySlice<Commit>, effort: LZ4Block.Effort, to out: inout [UInt8]) {
        let payload = CommitCodec.encode(Array(commits))
        if payload.count > maxSealedRecordPayload && commits.count > 1 {
            let mid = commits.startIndex + commits.count / 2
            appendRecords(commits[..<mid], effort: effort, to: &out)
            appendRecords(commits[mid...], effort: effort, to: &out)
            return
        }
        let ops = UInt64(commits.reduce(0) { $0 + $1.operations.count })
        out += RecordFraming.encode(type: .commits, firstSeq: commits.first!.firstSeq, opCount: ops, payload: payload, effort: effort)
    }

    /// The commit of a segment file ending at `seq`, decoding only the record that holds it
    /// (nil if there is none, or the record before it is damaged).
    static func commit(endingAt seq: UInt64, in file: [UInt8]) -> Commit? {
        guard let scan = try? file.withUnsafeBytes({ buf in try SegmentScanner.scan(buf) }),
            let record = scan.records.first(where: { $0.type == .commits && $0.firstSeq <= seq && seq < $0.endSeq }),
            let commits = try? decodeRecord(record, in: file)
        else { return nil }
        return commits.first { $0.endSeq - 1 == seq }
    }

    /// The commits of one commits record of `file`.
    private static func decodeRecord(_ record: RecordInfo, in file: [UInt8]) throws -> [Commit] {
        try CommitCodec.decode(try payload(of: record, in: file), firstSeq: record.firstSeq, opCount: record.opCount)
    }

    /// Whether `bytes` are an undamaged sealed segment of `replica` holding exactly the
    /// operations `first...last`, checked by framing and checksums alone (nothing decoded).
    static func isWholeSealed(_ bytes: [UInt8], replica: ReplicaID, first: UInt64, last: UInt64) -> Bool {
        guard let scan = try? bytes.withUnsafeBytes({ buf in try SegmentScanner.scan(buf) }),
            case .clean = scan.ending, scan.validEnd == bytes.count
        else { return false }
        return scan.header.kind == .sealed && scan.header.replica == replica.bytes && scan.header.firstSeq == first
            && scan.records.first?.firstSeq == first && scan.nextSeq == last + 1
    }

    /// A fresh tail starting at `firstSeq`, carrying the replica's clock forward.
    static func tail(_ replica: ReplicaID, firstSeq: UInt64, clock: Timestamp) -> [UInt8] {
        SegmentHeader(kind: .tail, replica: replica.bytes, firstSeq: firstSeq).encoded()
            + clockRecord(firstSeq: firstSeq, clock: clock)
    }

    static func clockRecord(firstSeq: UInt64, clock: Timestamp) -> [UInt8] {
        var w = ByteWriter()
        w.uvarint(clock.physical)
        w.uvarint(UInt64(clock.logical))
        return RecordFraming.encode(type: .clock, firstSeq: firstSeq, opCount: 0, payload: w.bytes)
    }

    /// A record's payload, decompressed.
    private static func payload(of record: RecordInfo, in file: [UInt8]) throws(LogReadError) -> [UInt8] {
        try file.withUnsafeBytes { buf in
            Result { () throws(LogReadError) in try RecordFraming.payload(of: record, in: buf) }
        }.get()
    }

    /// The time a clock record carries.
    static func clockTime(_ payload: [UInt8]) throws(DecodeError) -> Timestamp {
        try payload.withDecoding { (b) throws(DecodeError) -> Timestamp in
            var r = ByteReader(b)
            let p = try r.uvarint()
            let l = try r.uvarint()
            guard p <= Timestamp.maxPhysical, l <= UInt64(UInt32.max) else { throw r.error("clock time out of range") }
            return Timestamp(physical: p, logical: UInt32(l))
        }
    }

    /// What one segment file holds.
    struct Contents {
        var header: SegmentHeader
        var commits: [Commit]
        /// The greatest clock time in the file (commits and clock records).
        var latestTime: Timestamp
        var scan: SegmentScan
        /// Set when reading stopped early at a damaged record.
        var damage: (offset: Int, reason: String)?
    }

    /// Decodes every readable commit of a segment file. Reading stops at the first damaged
    /// record; a torn tail is not damage.
    /// - Parameters:
    ///   - skipThrough: commit records ending at or before this sequence number are checked
    ///     (framing, checksum) but not decoded, except the last record when `needsLatestTime`
    ///     (its time is the file's latest); their commits are not returned.
    ///   - needsLatestTime: false when the caller ignores ``Contents/latestTime``, which is then
    ///     only the latest time of the records decoded.
    static func read(_ file: [UInt8], skipThrough: UInt64 = 0, needsLatestTime: Bool = true) throws(LogReadError) -> Contents {
        let scan = try file.withUnsafeBytes { buf in Result { () throws(LogReadError) in try SegmentScanner.scan(buf) } }.get()
        var commits: [Commit] = []
        var latest = Timestamp.zero
        var damage: (Int, String)?
        if case .corrupt(let offset, let reason) = scan.ending { damage = (offset, reason) }
        var lastCommitTime: Timestamp?
        for (index, record) in scan.records.enumerated() {
            if record.type == .commits && record.endSeq - 1 <= skipThrough
                && (!needsLatestTime || index != scan.records.count - 1) { continue }
            do {
                switch record.type {
                case .commits:
                    let decoded: [Commit]
                    if record.isStoredRaw {
                        // Short records (every commit in a tail) decode where they lie in the file.
                        decoded = try file.withUnsafeBytes { buf in
                            Result { () throws(DecodeError) in
                                try CommitCodec.decode(
                                    UnsafeRawBufferPointer(rebasing: buf[record.payload]),
                                    firstSeq: record.firstSeq, opCount: record.opCount)
                            }
                        }.get()
                    } else {
                        decoded = try CommitCodec.decode(
                            try payload(of: record, in: file), firstSeq: record.firstSeq, opCount: record.opCount)
                    }
                    // A replica's commit times strictly increase (its clock never goes back).
                    if let first = decoded.first, let previous = lastCommitTime, first.time <= previous {
                        throw DecodeError(offset: 0, reason: "commit times go backwards (\(first.time) after \(previous))")
                    }
                    lastCommitTime = decoded.last?.time ?? lastCommitTime
                    if let t = decoded.last?.time, t > latest { latest = t }
                    if record.endSeq - 1 > skipThrough {
                        if commits.isEmpty { commits = decoded } else { commits += decoded }
                    }
                case .clock:
                    let t = try clockTime(try payload(of: record, in: file))
                    if t > latest { latest = t }
                }
            } catch let e as DecodeError {
                damage = (record.offset, "operations do not decode: \(e)")
                break
            } catch let e as LogReadError {
                damage = (record.offset, "\(e)")
                break
            } catch {
                damage = (record.offset, "\(error)")
                break
            }
        }
        return Contents(header: scan.header, commits: commits, latestTime: latest, scan: scan, damage: damage)
    }
}
