@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
import TestSupport
import Testing

@Suite struct SegmentFormatTests {
    static let replica = Gen.replicas[1]

    static func scan(_ file: [UInt8]) throws(LogReadError) -> SegmentScan {
        try file.withUnsafeBytes { buf in Result { () throws(LogReadError) in try SegmentScanner.scan(buf) } }.get()
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(LogReadError) -> SegmentHeader {
        try bytes.withUnsafeBytes { buf in Result { () throws(LogReadError) in try SegmentHeader.decode(buf) } }.get()
    }

    static func payload(_ record: RecordInfo, in file: [UInt8]) throws(LogReadError) -> [UInt8] {
        try file.withUnsafeBytes { buf in
            Result { () throws(LogReadError) in try RecordFraming.payload(of: record, in: buf) }
        }.get()
    }

    /// Replaces the header checksum after editing header bytes.
    static func fixHeaderChecksum(_ file: inout [UInt8]) {
        let sum = Checksum.xxh32(Array(file[0..<32]))
        for i in 0..<4 { file[32 + i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt32(i))) }
    }

    struct Built {
        var file: [UInt8]
        var commits: [[Commit]]
        /// Byte range of each record, in order.
        var ranges: [Range<Int>]
    }

    /// A segment of `kind` holding one record per commit of a random log, plus a clock record
    /// after the first commit record.
    static func build(_ kind: SegmentHeader.Kind, _ rng: inout SplitMix64, minRecords: Int = 3) -> Built {
        var commits: [Commit] = []
        var seq: UInt64 = 1
        while commits.count < minRecords || (commits.count < 6 && rng.chance(0.5)) {
            let c = Gen.commits(&rng, firstSeq: seq)[0]
            commits.append(c)
            seq = c.endSeq
        }
        var file = SegmentHeader(kind: kind, replica: replica.bytes, firstSeq: 1).encoded()
        var ranges: [Range<Int>] = []
        var groups: [[Commit]] = []
        for (i, c) in commits.enumerated() {
            let start = file.count
            file += RecordFraming.encode(
                type: .commits, firstSeq: c.firstSeq, opCount: UInt64(c.operations.count),
                payload: CommitCodec.encode([c]))
            ranges.append(start..<file.count)
            groups.append([c])
            if i == 0 {
                var w = ByteWriter()
                w.uvarint(c.time.physical + 5)
                w.uvarint(0)
                let start = file.count
                file += RecordFraming.encode(type: .clock, firstSeq: c.endSeq, opCount: 0, payload: w.bytes)
                ranges.append(start..<file.count)
                groups.append([])
            }
        }
        return Built(file: file, commits: groups, ranges: ranges)
    }

    // MARK: Header

    @Test func varintsOfEveryLengthReadBackWhereverTheyLieInTheBuffer() throws {
        // Each length of varint, as the last bytes of the buffer (read a byte at a time) and
        // followed by more (read from one eight-byte load).
        for bits in 0...64 {
            for v: UInt64 in [bits == 64 ? .max : (1 << UInt64(bits)) - 1, bits == 0 ? 0 : 1 << UInt64(bits - 1)] {
                var w = ByteWriter(capacity: 32)
                w.uvarint(v)
                let encoded = w.bytes
                for padding in [0, 1, 9] {
                    let bytes = encoded + [UInt8](repeating: 0x55, count: padding)
                    let read = try bytes.withDecoding { (buf) throws(DecodeError) -> (UInt64, Int) in
                        var r = ByteReader(buf)
                        return (try r.uvarint(), r.offset)
                    }
                    #expect(read.0 == v && read.1 == encoded.count, "value \(v), padding \(padding)")
                }
                let cut = Array(encoded.dropLast()) + [UInt8](repeating: 0x80, count: 9)
                #expect(throws: DecodeError.self) {
                    try cut.withDecoding { (buf) throws(DecodeError) in
                        var r = ByteReader(buf)
                        _ = try r.uvarint()
                    }
                }
            }
        }
    }

    @Test func headerRoundTrips() throws {
        try forEachSeed(50) { seed, rng in
            let h = SegmentHeader(
                kind: rng.chance(0.5) ? .tail : .sealed, replica: ReplicaID.random(using: &rng).bytes,
                firstSeq: rng.chance(0.5) ? 1 : rng.next())
            let bytes = h.encoded()
            #expect(bytes.count == FormatConstants.segmentHeaderSize, "seed \(seed)")
            #expect(Array(bytes[0..<4]) == Array("TLOG".utf8), "seed \(seed)")
            let decoded = try Self.decodeHeader(bytes)
            let withRecords = try Self.decodeHeader(bytes + [1, 2, 3])
            #expect(decoded == h, "seed \(seed)")
            #expect(withRecords == h, "trailing bytes are records, seed \(seed)")
        }
    }

    @Test func wrongMagicIsNotASegment() {
        var file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file[0] = UInt8(ascii: "X")
        #expect(throws: LogReadError.notASegment) { try Self.scan(file) }
        #expect(throws: LogReadError.notASegment) { try Self.scan(Array("TSNP".utf8) + file[4...]) }
        #expect(throws: LogReadError.notASegment) { try Self.scan([]) }
        #expect(throws: LogReadError.notASegment) { try Self.scan(Array("TLO".utf8)) }
    }

    @Test func shortHeaderIsTruncated() {
        let header = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        for n in 4..<header.count {
            #expect(throws: LogReadError.truncatedHeader(size: n)) { try Self.scan(Array(header.prefix(n))) }
        }
    }

    @Test func damagedHeaderFailsItsChecksum() {
        let header = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 9).encoded()
        for i in 4..<header.count {
            var h = header
            h[i] ^= 0x10
            #expect(throws: LogReadError.headerChecksumMismatch, "byte \(i)") { try Self.scan(h) }
        }
    }

    @Test func newerVersionIsUnsupported() {
        var file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file[4] = FormatConstants.segmentVersion + 1
        Self.fixHeaderChecksum(&file)
        #expect(throws: LogReadError.unsupportedVersion(found: 2, newestKnown: 1)) { try Self.scan(file) }
        #expect(LogReadError.unsupportedVersion(found: 2, newestKnown: 1).description.contains("upgrade"))
    }

    @Test func versionZeroIsRejectedButNotAsNewer() {
        var file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file[4] = 0
        Self.fixHeaderChecksum(&file)
        do {
            _ = try Self.scan(file)
            Issue.record("version 0 accepted")
        } catch {
            if case .unsupportedVersion = error { Issue.record("version 0 reported as a newer version") }
        }
    }

    @Test func unknownSegmentKindIsRefused() {
        var file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file[5] = 3
        Self.fixHeaderChecksum(&file)
        #expect(throws: LogReadError.unknownSegmentKind(3)) { try Self.scan(file) }
    }

    @Test func nonzeroFlagsAreUnsupported() {
        for flags: UInt16 in [1, 0x0100, 0xFFFF] {
            let file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 1, flags: flags).encoded()
            #expect(throws: LogReadError.unsupportedFlags(flags)) { try Self.scan(file) }
        }
    }

    // MARK: Records

    @Test func scanReturnsEveryRecordOfAWellFormedFile() throws {
        try forEachSeed(100) { seed, rng in
            for kind in [SegmentHeader.Kind.tail, .sealed] {
                let b = Self.build(kind, &rng)
                let scan = try Self.scan(b.file)
                #expect(scan.ending == .clean, "seed \(seed)")
                #expect(scan.validEnd == b.file.count, "seed \(seed)")
                #expect(scan.header.kind == kind && scan.header.replica == Self.replica.bytes, "seed \(seed)")
                #expect(scan.records.map { $0.offset..<$0.end } == b.ranges, "seed \(seed)")
                #expect(scan.records[1].type == .clock && scan.records[1].opCount == 0, "seed \(seed)")
                let last = b.commits.last!.last!
                #expect(scan.nextSeq == last.endSeq, "seed \(seed)")
                for (record, group) in zip(scan.records, b.commits) where record.type == .commits {
                    let payload = try Self.payload(record, in: b.file)
                    #expect(payload.count == record.rawLength, "seed \(seed)")
                    let decoded = try CommitCodec.decode(payload, firstSeq: record.firstSeq, opCount: record.opCount)
                    #expect(decoded == group, "seed \(seed)")
                }
            }
        }
    }

    @Test func headerOnlyFileIsCleanAndEmpty() throws {
        let file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 42).encoded()
        let scan = try Self.scan(file)
        #expect(scan.records.isEmpty && scan.ending == .clean && scan.validEnd == 36 && scan.nextSeq == 42)
    }

    @Test func truncatedLastRecordOfATailIsATornTail() throws {
        try forEachSeed(40) { seed, rng in
            let b = Self.build(.tail, &rng)
            let last = b.ranges.last!
            for cut in 1..<last.count {
                let file = Array(b.file.prefix(b.file.count - cut))
                let scan = try Self.scan(file)
                #expect(scan.ending == .tornTail(offset: last.lowerBound, bytes: last.count - cut), "cut \(cut), seed \(seed)")
                #expect(scan.validEnd == last.lowerBound, "cut \(cut), seed \(seed)")
                #expect(scan.records.count == b.ranges.count - 1, "cut \(cut), seed \(seed)")
            }
        }
    }

    @Test func truncatedLastRecordOfASealedSegmentIsCorrupt() throws {
        try forEachSeed(40) { seed, rng in
            let b = Self.build(.sealed, &rng)
            let last = b.ranges.last!
            for cut in 1..<last.count {
                let scan = try Self.scan(Array(b.file.prefix(b.file.count - cut)))
                guard case .corrupt(let offset, _) = scan.ending else {
                    Issue.record("expected corrupt, got \(scan.ending); cut \(cut), seed \(seed)")
                    continue
                }
                #expect(offset == last.lowerBound, "cut \(cut), seed \(seed)")
                #expect(scan.validEnd == last.lowerBound, "cut \(cut), seed \(seed)")
                #expect(scan.records.count == b.ranges.count - 1, "cut \(cut), seed \(seed)")
            }
        }
    }

    @Test func trailingZerosAfterATailAreATornTail() throws {
        try forEachSeed(20) { seed, rng in
            let b = Self.build(.tail, &rng)
            for n in [1, 3, 4, 8, 9, 10, 64, 4096] {
                let scan = try Self.scan(b.file + [UInt8](repeating: 0, count: n))
                #expect(scan.ending == .tornTail(offset: b.file.count, bytes: n), "zeros \(n), seed \(seed)")
                #expect(scan.validEnd == b.file.count, "zeros \(n), seed \(seed)")
                #expect(scan.records.count == b.ranges.count, "zeros \(n), seed \(seed)")
            }
        }
    }

    @Test func trailingZerosAfterASealedSegmentAreCorrupt() throws {
        try forEachSeed(20) { seed, rng in
            let b = Self.build(.sealed, &rng)
            for n in [1, 3, 4, 8, 9, 10, 64, 4096] {
                let scan = try Self.scan(b.file + [UInt8](repeating: 0, count: n))
                guard case .corrupt(let offset, _) = scan.ending else {
                    Issue.record("expected corrupt, got \(scan.ending); zeros \(n), seed \(seed)")
                    continue
                }
                #expect(offset == b.file.count && scan.validEnd == b.file.count, "zeros \(n), seed \(seed)")
                #expect(scan.records.count == b.ranges.count, "zeros \(n), seed \(seed)")
            }
        }
    }

    /// Flips one byte of the middle record and expects `.corrupt` at that record, with every
    /// earlier record still returned.
    static func expectCorruptMiddle(_ b: Built, flipping positions: [Int], seed: UInt64) throws {
        let middle = b.ranges.count / 2
        let range = b.ranges[middle]
        for i in positions {
            var file = b.file
            file[range.lowerBound + i] ^= 0x5A
            let scan = try Self.scan(file)
            guard case .corrupt(let offset, _) = scan.ending else {
                Issue.record("expected corrupt, got \(scan.ending); byte \(i) of record \(middle), seed \(seed)")
                continue
            }
            #expect(offset == range.lowerBound, "byte \(i), seed \(seed)")
            #expect(scan.validEnd == range.lowerBound, "byte \(i), seed \(seed)")
            #expect(scan.records.map { $0.offset..<$0.end } == Array(b.ranges[..<middle]), "byte \(i), seed \(seed)")
        }
    }

    @Test func flippedByteInAMiddleRecordOfASealedSegmentIsCorruptAtThatRecord() throws {
        try forEachSeed(40) { seed, rng in
            let b = Self.build(.sealed, &rng, minRecords: 4)
            try Self.expectCorruptMiddle(b, flipping: Array(0..<b.ranges[b.ranges.count / 2].count), seed: seed)
        }
    }

    @Test func flippedChecksumOrPayloadByteInAMiddleRecordOfATailIsCorrupt() throws {
        try forEachSeed(40) { seed, rng in
            let b = Self.build(.tail, &rng, minRecords: 4)
            let range = b.ranges[b.ranges.count / 2]
            // The checksum, the type byte and the last stored byte: the framing stays intact.
            try Self.expectCorruptMiddle(b, flipping: [0, 1, 2, 3, 4, range.count - 1], seed: seed)
        }
    }

    @Test func flippedAnyByteInAMiddleRecordOfATailIsCorrupt() throws {
        try forEachSeed(40) { seed, rng in
            let b = Self.build(.tail, &rng, minRecords: 4)
            let range = b.ranges[b.ranges.count / 2]
            try Self.expectCorruptMiddle(b, flipping: Array(0..<range.count), seed: seed)
        }
    }

    @Test func sequenceGapBetweenRecordsIsCorrupt() throws {
        var file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 1).encoded()
        let t = TaskID("a")!
        file += RecordFraming.encode(
            type: .commits, firstSeq: 1, opCount: 1,
            payload: CommitCodec.encode([Commit(firstSeq: 1, time: Timestamp(physical: 1), operations: [.add(t)])]))
        let second = file.count
        file += RecordFraming.encode(
            type: .commits, firstSeq: 3, opCount: 1,
            payload: CommitCodec.encode([Commit(firstSeq: 3, time: Timestamp(physical: 2), operations: [.add(t)])]))
        file += RecordFraming.encode(type: .clock, firstSeq: 4, opCount: 0, payload: [1])
        let scan = try Self.scan(file)
        guard case .corrupt(let offset, let reason) = scan.ending else {
            Issue.record("expected corrupt, got \(scan.ending)")
            return
        }
        #expect(offset == second && reason.contains("sequence gap"))
        #expect(scan.records.count == 1 && scan.nextSeq == 2)
    }

    @Test func clockRecordCarryingOperationsIsCorrupt() throws {
        var file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file += RecordFraming.encode(type: .clock, firstSeq: 1, opCount: 2, payload: [1, 0])
        file += RecordFraming.encode(type: .clock, firstSeq: 1, opCount: 0, payload: [1, 0])
        let scan = try Self.scan(file)
        guard case .corrupt(36, _) = scan.ending else {
            Issue.record("expected corrupt at 36, got \(scan.ending)")
            return
        }
    }

    @Test func completeLastRecordWithAnUnknownTypeInATailIsCorruptNotTorn() throws {
        // A record with a valid checksum was written whole: it is not a torn append, and the
        // next writer must not truncate it away (it may come from a newer version).
        var file = SegmentHeader(kind: .tail, replica: Self.replica.bytes, firstSeq: 1).encoded()
        file += RecordFraming.encode(type: .clock, firstSeq: 1, opCount: 0, payload: [1, 0])
        let last = file.count
        var record = RecordFraming.encode(type: .clock, firstSeq: 1, opCount: 0, payload: [2, 0])
        record[4] = 9  // unknown record type
        let sum = Checksum.xxh32(Array(record[4...]))
        for i in 0..<4 { record[i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt32(i))) }
        file += record
        let scan = try Self.scan(file)
        guard case .corrupt(let offset, _) = scan.ending else {
            Issue.record("expected corrupt, got \(scan.ending)")
            return
        }
        #expect(offset == last)
    }

    // MARK: Worked example

    /// Spec/log-format.md, "Worked example": a fresh tail of replica a1…a1 with a clock
    /// record of time 0.0 and one commit adding task1 with title "Hi".
    static let workedExample: [UInt8] = [
        0x54, 0x4C, 0x4F, 0x47, 0x01, 0x01, 0x00, 0x00, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1,
        0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xA8, 0x8B, 0x4C, 0x67, 0x56, 0xC5, 0x0E, 0xBD, 0x02, 0x01, 0x00, 0x02, 0x02, 0x00, 0x00, 0xFD,
        0x01, 0x46, 0x80, 0x01, 0x01, 0x02, 0x17, 0x17, 0x01, 0x01, 0x05, 0x74, 0x61, 0x73, 0x6B, 0x31,
        0x80, 0xA0, 0xBE, 0xB7, 0xC5, 0x68, 0x02, 0x10, 0x00, 0x30, 0x00, 0x04, 0x02, 0x48, 0x69,
    ]

    @Test func specWorkedExampleEncodesByteForByte() {
        let replica = ReplicaID(bytes: [UInt8](repeating: 0xA1, count: 16))
        let task1 = TaskID("task1")!
        let commit = Commit(
            firstSeq: 1, time: Timestamp(physical: 1_796_025_600_000),
            operations: [.add(task1), .set(task1, .title("Hi"))])
        var file = SegmentHeader(kind: .tail, replica: replica.bytes, firstSeq: 1).encoded()
        file += RecordFraming.encode(type: .clock, firstSeq: 1, opCount: 0, payload: [0x00, 0x00])
        file += RecordFraming.encode(type: .commits, firstSeq: 1, opCount: 2, payload: CommitCodec.encode([commit]))
        #expect(file.count == 79)
        #expect(file == Self.workedExample)
    }

    @Test func specWorkedExampleDecodesToItsTask() throws {
        let file = Self.workedExample
        let scan = try Self.scan(file)
        #expect(scan.ending == .clean)
        #expect(scan.records.map(\.type) == [.clock, .commits])
        #expect(scan.records.map(\.offset) == [36, 47])
        let replica = ReplicaID(bytes: scan.header.replica)
        #expect(replica.hex == String(repeating: "a1", count: 16))
        var state = TaskState()
        let info = scan.records[1]
        for c in try CommitCodec.decode(try Self.payload(info, in: file), firstSeq: info.firstSeq, opCount: info.opCount) {
            let applied = state.apply(c, from: replica)
            #expect(applied)
        }
        #expect(state.version == VersionVector([replica: 2]))
        let item = try #require(state.task(TaskID("task1")!))
        var w = JSONWriter()
        w.task(item)
        #expect(
            String(decoding: w.bytes, as: UTF8.self)
                == #"{"id":"task1","title":"Hi","notes":null,"done":false,"completedAt":null,"priority":null,"due":null,"#
                + #""tags":[],"list":null,"meta":{},"createdAt":"2026-11-30T08:00:00.000Z","updatedAt":"2026-11-30T08:00:00.000Z"}"#)
    }

    // MARK: LZ4

    @Test func compressiblePayloadIsStoredSmallerAndRoundTrips() throws {
        let payload = Array(String(repeating: "the same task title, again and again. ", count: 40).utf8)
        let record = RecordFraming.encode(type: .commits, firstSeq: 1, opCount: 3, payload: payload)
        #expect(record.count < payload.count / 4)
        let file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 1).encoded() + record
        let scan = try Self.scan(file)
        let info = try #require(scan.records.first)
        #expect(info.rawLength == payload.count)
        #expect(info.payload.count < payload.count)
        #expect(try Self.payload(info, in: file) == payload)
        #expect(scan.ending == .clean && scan.nextSeq == 4)
    }

    @Test func incompressiblePayloadIsStoredRaw() throws {
        var rng = SplitMix64(seed: 99)
        for size in [0, 1, 2, 15, 300, 5000] {
            let payload = rng.bytes(size)
            let record = RecordFraming.encode(type: .commits, firstSeq: 7, opCount: 1, payload: payload)
            let file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 7).encoded() + record
            let info = try #require(try Self.scan(file).records.first)
            #expect(info.payload.count == size && info.rawLength == size, "size \(size)")
            #expect(Array(file[info.payload]) == payload, "size \(size)")
            #expect(try Self.payload(info, in: file) == payload, "size \(size)")
        }
    }

    @Test(arguments: [LZ4Block.Effort.fast, .balanced, .small])
    func lz4BlockRoundTripsAndRefusesGarbage(effort: LZ4Block.Effort) {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<50 {
            // Low-entropy bytes compress.
            let input = (0..<rng.int(64...4000)).map { _ in UInt8(rng.int(0...3)) }
            let packed = input.withUnsafeBytes { LZ4Block.compressIfSmaller($0, effort: effort) }
            guard let packed else {
                Issue.record("low-entropy input did not compress")
                continue
            }
            #expect(packed.count < input.count)
            #expect(packed.withUnsafeBytes { LZ4Block.decompress($0, rawCount: input.count) } == input)
            #expect(packed.withUnsafeBytes { LZ4Block.decompress($0, rawCount: input.count + 1) } == nil)
        }
        let garbage: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        #expect(garbage.withUnsafeBytes { LZ4Block.decompress($0, rawCount: 100) } == nil)
        #expect([UInt8]().withUnsafeBytes { LZ4Block.compressIfSmaller($0) } == nil)
    }

    @Test func undecodableLZ4PayloadWithAValidChecksumIsACorruptRecord() throws {
        var w = ByteWriter()
        w.u32le(0)
        w.u8(RecordType.commits.rawValue)
        w.uvarint(1)  // first seq
        w.uvarint(1)  // op count
        w.uvarint(100)  // raw length
        w.uvarint(5)  // stored length
        w.append([0xFF, 0xFF, 0xFF, 0xFF, 0x00])
        var record = w.bytes
        let sum = Checksum.xxh32(Array(record[4...]))
        for i in 0..<4 { record[i] = UInt8(truncatingIfNeeded: sum >> (8 * UInt32(i))) }
        let file = SegmentHeader(kind: .sealed, replica: Self.replica.bytes, firstSeq: 1).encoded() + record
        let scan = try Self.scan(file)
        let info = try #require(scan.records.first)
        #expect(throws: LogReadError.self) { try Self.payload(info, in: file) }
        do {
            _ = try Self.payload(info, in: file)
        } catch {
            guard case .corruptRecord(let offset, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(offset == 36)
        }
    }
}
