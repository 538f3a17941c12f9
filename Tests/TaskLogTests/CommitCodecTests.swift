@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
import TestSupport
import Testing

@Suite struct CommitCodecTests {
    static func opCount(_ commits: [Commit]) -> UInt64 {
        UInt64(commits.reduce(0) { $0 + $1.operations.count })
    }

    static func roundTrip(_ commits: [Commit]) throws(DecodeError) -> [Commit] {
        try CommitCodec.decode(CommitCodec.encode(commits), firstSeq: commits[0].firstSeq, opCount: opCount(commits))
    }

    @Test func randomCommitsRoundTrip() throws {
        try forEachSeed(400) { seed, rng in
            let firstSeq: UInt64 = rng.chance(0.5) ? 1 : UInt64(rng.int(2...1 << 40))
            let commits = Gen.commits(&rng, firstSeq: firstSeq)
            let payload = CommitCodec.encode(commits)
            let decoded = try CommitCodec.decode(payload, firstSeq: firstSeq, opCount: Self.opCount(commits))
            #expect(decoded == commits, "seed \(seed)")
            // Decoded commits re-encode to the same bytes, so unknown content is relayed verbatim.
            #expect(CommitCodec.encode(decoded) == payload, "seed \(seed)")
        }
    }

    @Test func decodingInChunksHandsOverTheCommitsOfADecodeWholeWhetherChunksAreKeptOrDropped() throws {
        // Chunks dropped as they come let their operation arrays be refilled in place; chunks
        // kept make each refill take a fresh array. Either way every commit is as decoded whole.
        try forEachSeed(200) { seed, rng in
            var commits: [Commit] = []
            for _ in 0..<rng.int(1...12) {
                for c in Gen.commits(&rng, firstSeq: commits.last?.endSeq ?? 1) {
                    commits.append(Commit(firstSeq: c.firstSeq, time: Timestamp(physical: UInt64(1_000 + commits.count)), operations: c.operations))
                }
            }
            let payload = CommitCodec.encode(commits)
            let chunkOperations = rng.pick([1, 2, 5, 17, Int.max])
            let keep = rng.chance(0.5)
            var kept: [[Commit]] = []
            var seen: [Commit] = []
            try payload.withDecoding { (buf) throws(DecodeError) in
                try CommitCodec.decode(buf, firstSeq: 1, opCount: Self.opCount(commits), chunkOperations: chunkOperations) { chunk in
                    #expect(!chunk.isEmpty, "seed \(seed)")
                    seen += chunk.map(\.withOwnOperations)
                    if keep { kept.append(chunk) }
                }
            }
            #expect(seen == commits, "seed \(seed), chunks of \(chunkOperations)")
            #expect(kept.joined().elementsEqual(keep ? commits : []), "seed \(seed)")
        }
    }

    @Test func aCommitWrittenAloneGivesTheBatchEncodersBytesWhetherOrNotItFitsTheRoomReserved() {
        // A writer's single-commit path writes through room reserved once (1 KiB) and writes a
        // commit that does not fit through the growing buffer instead.
        forEachSeed(300) { seed, rng in
            var commit = Gen.commits(&rng, firstSeq: 1)[0]
            if rng.chance(0.3), let t = commit.operations.first?.task {
                let long = String(repeating: "a long note ", count: rng.int(80...400))
                commit = Commit(firstSeq: 1, time: commit.time, operations: Array(commit.operations) + [.set(t, .notes(long))])
            }
            var w = ByteWriter()
            w.u8(0xEE)  // something written before the commit stays as it was
            CommitCodec.encode(commit, into: &w)
            #expect(w.bytes == [0xEE] + CommitCodec.encode([commit]), "seed \(seed)")
        }
    }

    @Test func historiesRoundTripCommitByCommitAndWhole() throws {
        try forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            for r in h.replicas {
                let log = h.logs[r]!
                let whole = try Self.roundTrip(log)
                #expect(whole == log, "whole log, seed \(seed)")
                for c in log {
                    let one = try Self.roundTrip([c])
                    #expect(one == [c], "seed \(seed)")
                }
            }
        }
    }

    @Test func everyFieldAndValueFormRoundTrips() throws {
        let t = Gen.taskIDs[0]
        var writes: [FieldWrite] = [
            .title(""), .title("Ünïcødé ✓ 😀"), .notes(nil), .notes("n"), .done(true), .done(false),
            .priority(nil), .priority(0), .priority(3), .due(nil), .due(.date(days: 0)), .due(.date(days: -719_468)),
            .due(.date(days: .max)), .due(.instant(milliseconds: .min)), .due(.instant(milliseconds: 1_767_225_600_123)),
            .list(nil), .list(""), .list("work"), .meta(key: "", value: nil), .meta(key: "k", value: "v"),
        ]
        // Unknown fields in nibble form (7...14) and extended form (15 and up), with every value form.
        var rng = SplitMix64(seed: 7)
        for field in [7, 8, 13, 14, 15, 16, 127, 128, 1 << 35] as [UInt64] + [.max] {
            for _ in 0..<12 { writes.append(.unknown(field: field, value: Gen.encodedValue(&rng))) }
        }
        let ops = writes.map { TaskOperation.set(t, $0) }
            + [.unknown(kind: 0x80, body: []), .unknown(kind: 0x8F, body: [0]), .unknown(kind: 0xFF, body: Array(0...255))]
        let commits = [Commit(firstSeq: 1, time: Timestamp(physical: 1), operations: ops)]
        #expect(try Self.roundTrip(commits) == commits)
    }

    /// Locks the wire format: a known commit list encodes to exactly these bytes.
    @Test func knownCommitsEncodeToKnownBytes() throws {
        let task3 = TaskID("task3")!
        let uuid = TaskID("00112233-4455-6677-8899-aabbccddeeff")!
        let replica = ReplicaID(high: 1, low: 2)
        let commits = [
            Commit(
                firstSeq: 1, time: Timestamp(physical: 1000),
                operations: [
                    .add(task3), .set(task3, .title("Hi")), .set(task3, .priority(2)), .set(task3, .due(.date(days: -1))),
                    .addTag(task3, "a"), .unknown(kind: 0x90, body: [7]), .set(uuid, .done(true)),
                ]),
            // Same millisecond, next logical value: implicit.
            Commit(
                firstSeq: 8, time: Timestamp(physical: 1000, logical: 1),
                operations: [.remove(task3, observed: [OperationID(replica: replica, seq: 1)])]),
            // Same millisecond, logical jumps: explicit. Extended field number 20.
            Commit(
                firstSeq: 9, time: Timestamp(physical: 1000, logical: 5),
                operations: [.set(task3, .unknown(field: 20, value: [0x02]))]),
        ]
        let expected: [UInt8] =
            [0x02]  // two task ids
            + [0x01, 0x05] + Array("task3".utf8)  // string form
            + [0x00, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
            + [0xD0, 0x0F, 0x07]  // delta 1000 << 1, implicit logical; 7 ops
            + [0x10, 0x00]  // add task 0
            + [0x30, 0x00, 0x04, 0x02, 0x48, 0x69]  // set title "Hi"
            + [0x33, 0x00, 0x12]  // set priority small uint 2
            + [0x34, 0x00, 0x05, 0x01]  // set due date zig-zag(-1)
            + [0x40, 0x00, 0x01, 0x61]  // add tag "a"
            + [0x90, 0x01, 0x07]  // unknown kind, length-prefixed body
            + [0x32, 0x01, 0x02]  // set done true on task 1
            + [0x00, 0x01]  // delta 0, implicit logical; 1 op
            + [0x20, 0x00, 0x01] + ReplicaID(high: 1, low: 2).bytes + [0x01]  // remove, one dot
            + [0x01, 0x05, 0x01]  // delta 0, explicit logical 5; 1 op
            + [0x3F, 0x00, 0x14, 0x02]  // set, extended field 20, value true
        let payload = CommitCodec.encode(commits)
        #expect(payload == expected)
        #expect(try CommitCodec.decode(expected, firstSeq: 1, opCount: 9) == commits)
    }

    @Test func alternativeValueEncodingsDecode() throws {
        // A writer may spell priority 2 as a full uint; the reader accepts it.
        let payload: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x02, 0x02, 0x10, 0x00, 0x33, 0x00, 0x03, 0x02]
        let commits = try CommitCodec.decode(payload, firstSeq: 1, opCount: 2)
        #expect(commits.first?.operations == [.add(TaskID("a")!), .set(TaskID("a")!, .priority(2))])
    }

    @Test func wrongValueTypesForKnownFieldsThrow() {
        // add a, then set <field> with a value of the wrong type.
        let prefix: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x02, 0x02, 0x10, 0x00]
        let bad: [[UInt8]] = [
            [0x30, 0x00, 0x00],  // title none
            [0x32, 0x00, 0x04, 0x00],  // done string
            [0x33, 0x00, 0x14],  // priority 4
            [0x33, 0x00, 0x03, 0x80, 0x01],  // priority 128
            [0x34, 0x00, 0x01],  // due false
            [0x36, 0x00, 0x01, 0x6B, 0x03, 0x05],  // meta uint
            [0x31, 0x00, 0x20, 0x00],  // notes opaque
        ]
        for op in bad {
            #expect(throws: DecodeError.self, "op \(op)") { try CommitCodec.decode(prefix + op, firstSeq: 1, opCount: 2) }
        }
    }

    @Test func invalidOperationKindsAndTaskIndicesThrow() {
        let prefix: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x02, 0x01]
        for op: [UInt8] in [[0x00, 0x00], [0x60, 0x00], [0x70, 0x00], [0x10, 0x01], [0x10, 0x80, 0x01]] {
            #expect(throws: DecodeError.self, "op \(op)") { try CommitCodec.decode(prefix + op, firstSeq: 1, opCount: 1) }
        }
        // Invalid task id text, unknown task id form.
        #expect(throws: DecodeError.self) { try CommitCodec.decode([0x01, 0x01, 0x01, 0x2D, 0x02, 0x01, 0x10, 0x00], firstSeq: 1, opCount: 1) }
        #expect(throws: DecodeError.self) { try CommitCodec.decode([0x01, 0x02, 0x02, 0x01, 0x10, 0x00], firstSeq: 1, opCount: 1) }
    }

    @Test func operationCountMustMatchTheRecordHeader() throws {
        var rng = SplitMix64(seed: 11)
        let commits = Gen.commits(&rng)
        let payload = CommitCodec.encode(commits)
        let n = Self.opCount(commits)
        #expect(throws: DecodeError.self) { try CommitCodec.decode(payload, firstSeq: 1, opCount: n + 1) }
        #expect(throws: DecodeError.self) { try CommitCodec.decode(payload, firstSeq: 1, opCount: n - 1) }
        #expect(throws: DecodeError.self) { try CommitCodec.decode(payload, firstSeq: 1, opCount: 0) }
        #expect(try CommitCodec.decode(payload, firstSeq: 1, opCount: n) == commits)
    }

    @Test func commitTimesMustIncrease() {
        // Two commits; the second has an explicit logical value that goes backwards.
        let payload: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x03, 0x05, 0x01, 0x10, 0x00, 0x01, 0x05, 0x01, 0x10, 0x00]
        #expect(throws: DecodeError.self) { try CommitCodec.decode(payload, firstSeq: 1, opCount: 2) }
        // An empty commit.
        #expect(throws: DecodeError.self) { try CommitCodec.decode([0x00, 0x02, 0x00], firstSeq: 1, opCount: 0) }
    }

    @Test func truncatedPayloadsThrow() {
        forEachSeed { seed, rng in
            let commits = Gen.commits(&rng)
            let payload = CommitCodec.encode(commits)
            // Every cut of short payloads; 64 random cuts (and the last byte) of long ones.
            let cuts = payload.count <= 64
                ? Array(0..<payload.count) : [0, payload.count - 1] + (0..<62).map { _ in rng.int(1...(payload.count - 2)) }
            var decodedPrefixes: [Int] = []
            for n in cuts {
                do throws(DecodeError) {
                    _ = try CommitCodec.decode(Array(payload.prefix(n)), firstSeq: 1, opCount: Self.opCount(commits))
                    decodedPrefixes.append(n)
                } catch {}
            }
            #expect(decodedPrefixes.isEmpty, "prefixes that decoded (of \(payload.count) bytes), seed \(seed)")
        }
    }

    /// One random mutation of a payload: overwrite, bit flip, truncate, insert, delete or splice.
    static func mutate(_ payload: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var p = payload
        let i = rng.int(0...max(0, p.count - 1))
        switch rng.int(0...6) {
        case 0: if !p.isEmpty { p[i] = UInt8(rng.int(0...255)) }
        case 1: if !p.isEmpty { p[i] ^= 1 << UInt8(rng.int(0...7)) }
        case 2: p = Array(p.prefix(i))
        case 3: p.insert(UInt8(rng.int(0...255)), at: i)
        case 4: if !p.isEmpty { p.remove(at: i) }
        case 5: if !p.isEmpty { p[i] = rng.pick([0x00, 0x7F, 0x80, 0xFF]) }
        default: p = Array(p.prefix(i)) + rng.bytes(rng.int(1...12))
        }
        return p
    }

    @Test func decodeOfMutatedPayloadsThrowsAndNeverTraps() {
        forEachSeed(2_000) { seed, rng in
            let commits = Gen.commits(&rng)
            let n = Self.opCount(commits)
            let damaged = Self.mutate(CommitCodec.encode(commits), &rng)
            do throws(DecodeError) {
                let decoded = try CommitCodec.decode(damaged, firstSeq: 1, opCount: n)
                // A mutation may still decode (e.g. it changed a string's contents): then the
                // result is well-formed.
                #expect(Self.opCount(decoded) == n, "seed \(seed)")
                #expect(zip(decoded, decoded.dropFirst()).allSatisfy { $0.endSeq == $1.firstSeq && $0.time < $1.time }, "seed \(seed)")
            } catch {
                #expect(!error.reason.isEmpty, "seed \(seed)")
            }
        }
    }

    @Test func knownOperationWithAnEmptyTaskTableThrows() {
        // No task ids; one commit holding an add of task index 0.
        #expect(throws: DecodeError.self) { try CommitCodec.decode([0x00, 0x02, 0x01, 0x10, 0x00], firstSeq: 1, opCount: 1) }
    }

    @Test func decodeOfRandomGarbageThrowsOrGivesWellFormedCommits() {
        forEachSeed(1_000) { seed, rng in
            // Half the time behind a valid task table, so the garbage reaches the operations.
            let table: [UInt8] = rng.chance(0.5) ? [0x01, 0x01, 0x01, 0x61] : []
            let garbage = table + rng.bytes(rng.int(0...40))
            let n = UInt64(rng.int(0...4))
            do throws(DecodeError) {
                let decoded = try CommitCodec.decode(garbage, firstSeq: 1, opCount: n)
                #expect(Self.opCount(decoded) == n, "seed \(seed)")
                #expect(decoded.allSatisfy { !$0.operations.isEmpty }, "seed \(seed)")
            } catch {
                #expect(!error.reason.isEmpty, "seed \(seed)")
            }
        }
    }

    @Test func reservedValueTagsAreDamageEvenInUnknownFields() {
        // add a, then set field 9 (unknown) with value tag 0x07...0x0F.
        let prefix: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x02, 0x02, 0x10, 0x00, 0x39, 0x00]
        for tag: UInt8 in 0x07...0x0F {
            #expect(throws: DecodeError.self, "tag \(tag)") { try CommitCodec.decode(prefix + [tag, 0x00], firstSeq: 1, opCount: 2) }
        }
        // An opaque value in an unknown field is kept verbatim.
        let ok = try? CommitCodec.decode(prefix + [0x25, 0x03, 0x61, 0x62, 0x63], firstSeq: 1, opCount: 2)
        #expect(ok?.first?.operations.last == .set(TaskID("a")!, .unknown(field: 9, value: [0x25, 0x03, 0x61, 0x62, 0x63])))
    }

    @Test func longerVarintFormsAreAccepted() throws {
        // The task count, the time step and the op count written with redundant continuation bytes.
        let payload: [UInt8] = [0x81, 0x00, 0x01, 0x01, 0x61, 0x82, 0x80, 0x00, 0x81, 0x00, 0x10, 0x80, 0x00]
        let commits = try CommitCodec.decode(payload, firstSeq: 1, opCount: 1)
        #expect(commits == [Commit(firstSeq: 1, time: Timestamp(physical: 1), operations: [.add(TaskID("a")!)])])
        // A 10th varint byte above 1 overflows 64 bits.
        let overflow: [UInt8] = [0x00] + [UInt8](repeating: 0xFF, count: 9) + [0x02, 0x01, 0x80, 0x00]
        #expect(throws: DecodeError.self) { try CommitCodec.decode(overflow, firstSeq: 1, opCount: 1) }
    }

    @Test func extendedFormWithAFieldNumberBelow15IsDamage() throws {
        // add a; set with nibble 15 and field number n, small uint 2. Each number has one encoding.
        let prefix: [UInt8] = [0x01, 0x01, 0x01, 0x61, 0x02, 0x02, 0x10, 0x00, 0x3F, 0x00]
        for n: UInt8 in 0...14 {
            #expect(throws: DecodeError.self, "field \(n)") { try CommitCodec.decode(prefix + [n, 0x12], firstSeq: 1, opCount: 2) }
        }
        let ok = try CommitCodec.decode(prefix + [15, 0x12], firstSeq: 1, opCount: 2)
        #expect(ok.first?.operations.last == .set(TaskID("a")!, .unknown(field: 15, value: [0x12])))
    }

    @Test("Commits at the largest times the format carries round-trip, whatever the step between them")
    func commitsWithHugeClockValuesRoundTrip() throws {
        // The largest delta from the start of a payload, the largest logical value, and a
        // step of one logical tick at the bound itself.
        let t = TaskID("a")!
        let top = Timestamp.maxPhysical
        let commits = [
            Commit(firstSeq: 1, time: Timestamp(physical: top, logical: .max - 1), operations: [.add(t)]),
            Commit(firstSeq: 2, time: Timestamp(physical: top, logical: .max), operations: [.add(t)]),
        ]
        #expect(try Self.roundTrip(commits) == commits)
        let alone = [Commit(firstSeq: 7, time: Timestamp(physical: top), operations: [.add(t)])]
        #expect(try Self.roundTrip(alone) == alone)
    }

    @Test("Encoding a commit time past the format's bound stops the writer instead of writing another time")
    func encodingATimePastTheBoundStops() async {
        // Before, a delta of 2^63 or more lost its top bit and read back as a different time.
        for physical: UInt64 in [Timestamp.maxPhysical + 1, 1 << 63, .max] {
            await #expect(processExitsWith: .failure) { [physical = physical as UInt64] in
                let commit = Commit(firstSeq: 1, time: Timestamp(physical: physical), operations: [.add(TaskID("a")!)])
                _ = CommitCodec.encode([commit])
            }
        }
    }
}
