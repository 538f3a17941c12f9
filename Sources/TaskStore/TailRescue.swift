@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// What a seal keeps of a tail damaged mid-file: every readable commit, before the damage
/// and after it, with a placeholder for each unreadable sequence number so that no number
/// is ever used for two different operations. A decision made from the bytes alone.
struct TailRescue {
    /// The commits to seal, in sequence order, placeholders included.
    private(set) var commits: [Commit]
    /// The sequence number after the last one kept.
    private(set) var next: UInt64
    /// The greatest time seen (commits and clock records).
    private(set) var clock: Timestamp
    /// How many sequence numbers were given a placeholder.
    private(set) var lost: UInt64 = 0

    /// Rescues what `contents` (a read of `bytes` that found damage at `damageOffset`) and the
    /// records after the damage hold. `clock` is at least the writer's latest time.
    init(_ bytes: [UInt8], _ contents: SegmentCodec.Contents, damageOffset: Int, clock: Timestamp) {
        commits = contents.commits
        next = contents.commits.last?.endSeq ?? contents.header.firstSeq
        self.clock = clock
        let fallbackTime = contents.latestTime
        for record in bytes.withUnsafeBytes({ SegmentScanner.recover($0, after: damageOffset, minimumSeq: next) }) {
            guard let payload = Self.payload(of: record, in: bytes) else { continue }
            if record.type == .clock {
                if let t = try? SegmentCodec.clockTime(payload) { self.clock = max(self.clock, t) }
                continue
            }
            guard let decoded = try? CommitCodec.decode(payload, firstSeq: record.firstSeq, opCount: record.opCount) else { continue }
            for c in decoded where c.firstSeq >= next { keep(c, fallbackTime: fallbackTime) }
        }
    }

    private static func payload(of record: RecordInfo, in bytes: [UInt8]) -> [UInt8]? {
        try? bytes.withUnsafeBytes { buf in
            try Result { () throws(LogReadError) in try RecordFraming.payload(of: record, in: buf) }.get()
        }
    }

    /// Keeps `c` if it can be ordered after the commits kept so far, filling a gap before it
    /// with a placeholder commit.
    private mutating func keep(_ c: Commit, fallbackTime: Timestamp) {
        let gapTime = (commits.last?.time ?? fallbackTime).successor
        if c.firstSeq > next {
            guard gapTime < c.time else { return }  // cannot be ordered: left for a later placeholder
            let gap = c.firstSeq - next
            let placeholder = [TaskOperation](
                repeating: .unknown(kind: CommitCodec.lostOperationHeader, body: []), count: Int(gap))
            commits.append(Commit(firstSeq: next, time: gapTime, operations: placeholder))
            lost += gap
        } else if let last = commits.last, c.time <= last.time {
            return
        }
        commits.append(c)
        next = c.endSeq
        clock = max(clock, c.time)
    }
}
