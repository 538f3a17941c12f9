@_spi(Engine) import CRDTCore
import Dispatch
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskModel

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
        var commits: [Commit] = []
        var contents = try stream(file, skipThrough: skipThrough, needsLatestTime: needsLatestTime) {
            if commits.isEmpty { commits = Array($0) } else { commits += $0 }
            return true
        }.contents
        contents.commits = commits
        return contents
    }

    /// What ``stream(_:skipThrough:needsLatestTime:accept:decodingAhead:visit:)`` found.
    struct Streamed {
        /// The file's contents without its commits (they went to `visit`).
        var contents: Contents
        /// False when `accept` turned the header down: nothing was decoded.
        var accepted: Bool
        /// Set when the damaged record had already handed some of its commits to `visit`
        /// (only when decoding ahead).
        var visitedPartOfDamagedRecord: Bool
    }

    /// Reads a segment file as ``read(_:skipThrough:needsLatestTime:)`` does, handing its
    /// commits to `visit`, in order, instead of collecting them; `visit` returns false to stop.
    /// - Parameters:
    ///   - accept: told the header before any record is decoded; false skips the file.
    ///   - decodingAhead: decode on a second thread, while `visit` runs on this one, and hand
    ///     the commits over in chunks as they are decoded (a cold rebuild, whose reading and
    ///     applying then overlap). A record found damaged may then have given `visit` some of
    ///     its commits before the damage showed (``Streamed/visitedPartOfDamagedRecord``);
    ///     otherwise each record's commits are handed over once it has decoded whole.
    static func stream(
        _ file: [UInt8], skipThrough: UInt64 = 0, needsLatestTime: Bool = true,
        accept: (SegmentHeader) -> Bool = { _ in true }, decodingAhead: Bool = false,
        visit: (ArraySlice<Commit>) -> Bool
    ) throws(LogReadError) -> Streamed {
        let scan = try file.withUnsafeBytes { buf in Result { () throws(LogReadError) in try SegmentScanner.scan(buf) } }.get()
        var contents = Contents(header: scan.header, commits: [], latestTime: .zero, scan: scan, damage: nil)
        if case .corrupt(let offset, let reason) = scan.ending { contents.damage = (offset, reason) }
        guard accept(scan.header) else { return Streamed(contents: contents, accepted: false, visitedPartOfDamagedRecord: false) }
        let decoded: Decoded
        if decodingAhead {
            decoded = decodeAhead(file, scan, skipThrough: skipThrough, needsLatestTime: needsLatestTime, visit: visit)
        } else {
            decoded = decodeRecords(file, scan, skipThrough: skipThrough, needsLatestTime: needsLatestTime, chunkOperations: .max) {
                visit($0[...])
            }
        }
        contents.latestTime = decoded.latest
        if let d = decoded.damage { contents.damage = d }
        return Streamed(contents: contents, accepted: true, visitedPartOfDamagedRecord: decoded.partial)
    }

    /// What decoding a file's records found.
    struct Decoded: Sendable {
        var latest = Timestamp.zero
        var damage: (offset: Int, reason: String)?
        /// The damaged record had emitted commits before the damage showed.
        var partial = false
    }

    /// Operations per chunk when decoding ahead: enough that handing a chunk over costs
    /// little beside applying it, few enough that applying starts soon.
    private static let chunkOperations = 4096

    /// Decodes the records on a thread of their own and hands each chunk to `visit` on this
    /// one (without a thread to be had, decodes them here, a record at a time).
    private static func decodeAhead(
        _ file: [UInt8], _ scan: SegmentScan, skipThrough: UInt64, needsLatestTime: Bool,
        visit: (ArraySlice<Commit>) -> Bool
    ) -> Decoded {
        let handoff = Handoff<[Commit], Decoded>()
        let started = Posix.detachThread {
            let decoded = decodeRecords(
                file, scan, skipThrough: skipThrough, needsLatestTime: needsLatestTime, chunkOperations: chunkOperations
            ) { handoff.put($0) }
            handoff.finish(decoded)
        }
        guard started else {
            return decodeRecords(file, scan, skipThrough: skipThrough, needsLatestTime: needsLatestTime, chunkOperations: .max) {
                visit($0[...])
            }
        }
        var visiting = true
        while true {
            switch handoff.take() {
            case .chunk(let commits):
                if visiting && !visit(commits[...]) {
                    visiting = false
                    handoff.cancel()
                }
                handoff.giveBack(commits)
            case .finished(let decoded):
                return decoded
            }
        }
    }

    /// The record loop of a file: decodes its commits records in order and gives their
    /// commits to `emit`, in chunks of about `chunkOperations` operations (`.max`: a record
    /// at a time, once it has decoded whole); `emit` returns false to stop.
    private static func decodeRecords(
        _ file: [UInt8], _ scan: SegmentScan, skipThrough: UInt64, needsLatestTime: Bool, chunkOperations: Int,
        emit: ([Commit]) -> Bool
    ) -> Decoded {
        var out = Decoded()
        var lastCommitTime: Timestamp?
        var stopped = false
        for (index, record) in scan.records.enumerated() where !stopped {
            if record.type == .commits && record.endSeq - 1 <= skipThrough
                && (!needsLatestTime || index != scan.records.count - 1) { continue }
            var emitted = false
            do {
                switch record.type {
                case .commits:
                    let wanted = record.endSeq - 1 > skipThrough
                    // A replica's commit times strictly increase (its clock never goes back).
                    func take(_ decoded: [Commit]) throws(DecodeError) {
                        if let first = decoded.first, let previous = lastCommitTime, first.time <= previous {
                            throw DecodeError(offset: 0, reason: "commit times go backwards (\(first.time) after \(previous))")
                        }
                        lastCommitTime = decoded.last?.time ?? lastCommitTime
                        if let t = decoded.last?.time, t > out.latest { out.latest = t }
                        if wanted && !stopped {
                            emitted = true
                            if !emit(decoded) { stopped = true }
                        }
                    }
                    func decode(_ buf: UnsafeRawBufferPointer) throws(DecodeError) {
                        var failure: DecodeError?
                        try CommitCodec.decode(
                            buf, firstSeq: record.firstSeq, opCount: record.opCount, chunkOperations: chunkOperations
                        ) { decoded in
                            guard failure == nil else { return }
                            do throws(DecodeError) { try take(decoded) } catch { failure = error }
                        }
                        if let failure { throw failure }
                    }
                    if record.isStoredRaw {
                        // Short records (every commit in a tail) decode where they lie in the file.
                        try file.withUnsafeBytes { buf in
                            Result { () throws(DecodeError) in try decode(UnsafeRawBufferPointer(rebasing: buf[record.payload])) }
                        }.get()
                    } else {
                        try payload(of: record, in: file).withDecoding { (buf) throws(DecodeError) in try decode(buf) }
                    }
                case .clock:
                    let t = try clockTime(try payload(of: record, in: file))
                    if t > out.latest { out.latest = t }
                }
            } catch {
                let reason = (error as? DecodeError).map { "operations do not decode: \($0)" } ?? "\(error)"
                out.damage = (record.offset, reason)
                out.partial = emitted
                break
            }
        }
        return out
    }
}
