@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) @testable import TaskModel
import TestSupport
import Testing

/// The invariants the fast paths of TaskModel rely on (named at the top of each one's file),
/// checked after every step of seeded random workloads; and the checkers, shown to catch
/// each kind of break.
@Suite("fast-path invariants")
struct FastPathInvariantTests {
    /// Random commits of one replica over a growing pool of task ids, each valid for the
    /// state it is written against (removes observe the dots that state holds).
    struct Workload {
        var rng: SplitMix64
        let replica: ReplicaID
        /// The chance that an operation names a task id not seen before.
        var newIDs = 0.3
        var ids: [TaskID] = []
        var seq: UInt64 = 1
        var time = Timestamp(physical: 1_767_225_600_000, logical: 0)

        init(seed: UInt64, replica: ReplicaID) {
            rng = SplitMix64(seed: seed)
            self.replica = replica
        }

        mutating func commit(against view: TaskState) -> Commit {
            let ops = (0..<rng.int(1...4)).map { _ in operation(against: view) }
            time = rng.chance(0.5) ? time.successor : Timestamp(physical: time.physical + UInt64(rng.int(1...999)), logical: 0)
            defer { seq += UInt64(ops.count) }
            return Commit(firstSeq: seq, time: time, operations: ops)
        }

        mutating func operation(against view: TaskState) -> TaskOperation {
            if ids.isEmpty || rng.chance(newIDs) { ids.append(TaskID.random(using: &rng)) }
            let id = rng.pick(ids)
            let tag = rng.pick(Gen.tags)
            switch rng.int(0...11) {
            case 0...3: return .add(id)
            case 4: return .remove(id, observed: view.observedDots(of: id).sorted())
            // A malformed remove: it names the live dots of another task.
            case 5: return .remove(id, observed: view.observedDots(of: rng.pick(ids)).sorted())
            case 6: return .addTag(id, tag)
            case 7: return .removeTag(id, tag, observed: (view.records[id]?.tags.observedTags(of: tag) ?? []).sorted())
            default: return .set(id, Gen.fieldWrite(&rng))
            }
        }
    }

    /// The state of `commits` random commits of the workload seeded `seed`.
    static func state(seed: UInt64, commits: Int, replica: ReplicaID = Gen.replicas[0]) -> TaskState {
        var w = Workload(seed: seed, replica: replica)
        var s = TaskState()
        for _ in 0..<commits { s.apply(w.commit(against: s), from: replica) }
        return s
    }

    // MARK: Real operations keep the invariants

    @Test("a table keeps its invariants after every commit, applied one at a time, in batches, taken or merged")
    func aTableKeepsItsInvariantsUnderRandomCommits() {
        forEachSeed(40) { seed, rng in
            let r = Gen.replicas[0]
            var w = Workload(seed: seed, replica: r)
            var (one, batched, taken) = (TaskState(), TaskState(), TaskState())
            for step in 0..<rng.int(1...12) {
                var commits: [Commit] = []
                for _ in 0..<rng.int(1...8) {
                    commits.append(w.commit(against: one))
                    one.apply(commits.last!, from: r)
                    #expect(one.records.invariantViolations() == [], "seed \(seed), step \(step), one at a time")
                }
                batched.apply(commits[...], from: r)
                #expect(batched.records.invariantViolations() == [], "seed \(seed), step \(step), batched")
                taken.apply(taking: commits.map(\.withOwnOperations)[...], from: r)
                #expect(taken.records.invariantViolations() == [], "seed \(seed), step \(step), taken")
            }
            #expect(one == batched && one == taken, "seed \(seed)")
            let merged = one.merging(Self.state(seed: seed &+ 1000, commits: rng.int(0...30), replica: Gen.replicas[1]))
            #expect(merged.records.invariantViolations() == [], "seed \(seed), merged")
            merged.records._checkInvariants()
        }
    }

    @Test("a table keeps its invariants as it grows past the size from which it grows itself")
    func aLargeTableKeepsItsInvariantsAsItGrows() {
        let r = Gen.replicas[0]
        var w = Workload(seed: 7, replica: r)
        w.newIDs = 0.9
        var state = TaskState()
        while state.records.count < TaskTable.largeTable + 4_000 {
            var commits: [Commit] = []
            for _ in 0..<1_000 { commits.append(w.commit(against: state)) }
            state.apply(commits[...], from: r)
            #expect(state.records.invariantViolations() == [], "at \(state.records.count) records")
        }
        state.records._checkInvariants()
    }

    @Test("a table filled through add keeps its invariants, with ids added twice and records that fail to fill")
    func aTableFilledThroughAddKeepsItsInvariants() {
        struct Refused: Error {}
        forEachSeed(20) { seed, rng in
            var table = TaskTable()
            if rng.chance(0.5) { table.reserveCapacity(rng.int(0...300), filling: rng.int(0...300)) }
            var ids: [TaskID] = []
            for step in 0..<rng.int(1...300) {
                if ids.isEmpty || rng.chance(0.8) { ids.append(TaskID.random(using: &rng)) }
                let id = rng.pick(ids)
                let dots = rng.chance(0.5) ? LiveDots(OperationID(replica: Gen.replicas[0], seq: UInt64(step + 1))) : nil
                if rng.chance(0.1) {
                    _ = try? table.add(id, live: dots) { (_: inout TaskRecord) throws(Refused) in throw Refused() }
                } else {
                    _ = table.add(id, live: dots) { $0.title = LWWRegister(value: "t\(step)", stamp: Gen.stamp(&rng)) }
                }
                #expect(table.invariantViolations() == [], "seed \(seed), step \(step)")
            }
        }
    }

    @Test("a table decoded in parts side by side keeps its invariants")
    func aTableDecodedSideBySideKeepsItsInvariants() throws {
        try forEachSeed(20) { seed, rng in
            let state = Self.state(seed: seed, commits: rng.int(1...200))
            var starts: [Int] = []
            let bytes = StateCodec.encode(state) { _, offset, _ in starts.append(offset) }
            let chosen = starts.count < 2 ? [] : Set((0..<rng.int(1...3)).map { _ in rng.int(1...(starts.count - 1)) }).sorted()
            let splits = chosen.map { StateCodec.Split(tasksBefore: $0, offset: starts[$0]) }
            let decoded = try StateCodec.decode(SharedBytes(bytes)) { _ in splits }
            #expect(decoded.records.invariantViolations() == [], "seed \(seed), splits \(chosen)")
            #expect(decoded == state, "seed \(seed)")
        }
    }

    @Test("an index filled one position at a time keeps its invariants after every insertion")
    func anIndexKeepsItsInvariantsAsItIsFilled() {
        forEachSeed(20) { seed, rng in
            var index = PositionIndex()
            var ids: [TaskID] = []
            for step in 0..<rng.int(1...400) {
                if rng.chance(0.05) { index.reserveCapacity(ids.count + rng.int(0...200), ids: ids) }
                let id = rng.chance(0.9) || ids.isEmpty ? TaskID.random(using: &rng) : rng.pick(ids)
                let (slot, found) = index.probe(id, ids: ids)
                if found == nil {
                    ids.append(id)
                    index.fill(slot, with: Int32(ids.count - 1), ids: ids)
                }
                #expect(index.invariantViolations(ids: ids) == [], "seed \(seed), step \(step)")
            }
            index._checkInvariants(ids: ids)
        }
    }

    @Test("parts(of:) covers every count exactly, in order, with at most one part per core")
    func partsCoverEveryCountExactly() {
        var counts = [0, 1, 2, 2_047, 2_048, 4_095, 4_096, 4_097, 10_000, 1_000_003]
        var rng = SplitMix64(seed: 3)
        for _ in 0..<200 { counts.append(rng.int(0...5_000_000)) }
        for count in counts {
            #expect(SideBySide.partsViolations(of: count) == [], "count \(count): \(SideBySide.parts(of: count))")
        }
    }

    @Test("the prefetcher hands each operation the hash of its task, in order, across empty commits")
    func thePrefetcherGivesEachOperationItsTasksHash() {
        forEachSeed(50) { seed, rng in
            var commits = Gen.commits(&rng)
            for _ in 0..<rng.int(0...2) {
                commits.insert(Commit(firstSeq: 1, time: .zero, operations: []), at: rng.int(0...commits.count))
            }
            let expected = commits.flatMap { $0.operations.map { $0.task.map(PositionIndex.hash) } }
            let table = Self.state(seed: seed, commits: rng.int(0...40)).records
            let handed = commits.withUnsafeBufferPointer { buffer in
                var ahead = RecordPrefetch(buffer, table: table)
                return expected.indices.map { _ in ahead.advance(table) }
            }
            #expect(handed == expected, "seed \(seed)")
        }
    }

    @Test("writing to a copy of a record, or to a record merged from it, never changes the record")
    func writesToACopiedRecordLeaveTheOriginalAlone() {
        forEachSeed(100) { seed, rng in
            var original = TaskRecord()
            for _ in 0..<rng.int(0...4) { original.apply(Gen.fieldWrite(&rng), Gen.stamp(&rng)) }
            if rng.chance(0.5) { original.tags.add(rng.pick(Gen.tags), tag: Gen.stamp(&rng).operation) }
            let before = (original.notes, original.list, original.meta, original.tags)
            var copy = original
            var merged = TaskRecord()
            merged.merge(original)
            for _ in 0..<rng.int(1...4) {
                copy.apply(Gen.fieldWrite(&rng), Gen.stamp(&rng))
                merged.apply(Gen.fieldWrite(&rng), Gen.stamp(&rng))
            }
            copy.tags.add("copy", tag: Gen.stamp(&rng).operation)
            merged.meta["merged"] = LWWRegister(value: "m", stamp: Gen.stamp(&rng))
            #expect(original.notes == before.0 && original.list == before.1, "seed \(seed)")
            #expect(original.meta == before.2 && original.tags == before.3, "seed \(seed)")
        }
    }

    // MARK: The checkers catch what breaks an invariant

    /// An index of `count` random ids, and those ids by position.
    static func index(of count: Int, seed: UInt64) -> (index: PositionIndex, ids: [TaskID]) {
        var rng = SplitMix64(seed: seed)
        var index = PositionIndex()
        var ids: [TaskID] = []
        while ids.count < count {
            let id = TaskID.random(using: &rng)
            let (slot, found) = index.probe(id, ids: ids)
            guard found == nil else { continue }
            ids.append(id)
            index.fill(slot, with: Int32(ids.count - 1), ids: ids)
        }
        return (index, ids)
    }

    @Test("the index check reports a lost, moved, repeated or foreign position, overfilling and a bad slot count")
    func theIndexCheckReportsEachCorruption() {
        let (index, ids) = Self.index(of: 40, seed: 11)
        let filled = index.slots.indices.first { index.slots[$0] != PositionIndex.empty }!
        let empty = index.slots.indices.first { index.slots[$0] == PositionIndex.empty }!
        func violations(_ corrupt: (inout PositionIndex) -> Void) -> String {
            var copy = index
            corrupt(&copy)
            return copy.invariantViolations(ids: ids).joined(separator: "; ")
        }
        #expect(index.invariantViolations(ids: ids) == [])
        #expect(violations { $0.slots[filled] = PositionIndex.empty }.contains("slots filled, but count is 40"))
        let moved = violations {
            $0.slots[empty] = $0.slots[filled]
            $0.slots[filled] = PositionIndex.empty
        }
        #expect(moved.contains("is not where a probe for its id"), "\(moved)")
        #expect(violations { $0.slots[empty] = $0.slots[filled] }.contains("is in two slots"))
        #expect(violations { $0.slots[empty] = Int32(ids.count + 3) }.contains("outside 0..<40"))
        #expect(violations { $0.count = $0.slots.count }.contains("fill more than half"))
        #expect(violations { $0.slots.append(PositionIndex.empty) }.contains("not a power of two"))
    }

    @Test("the table check reports mismatched arrays, a repeated id, a wrong live count, a stale last find and a stale index")
    func theTableCheckReportsEachCorruption() {
        let table = Self.state(seed: 5, commits: 30).records
        func violations(_ corrupt: (inout TaskTable) -> Void) -> String {
            var copy = table
            corrupt(&copy)
            return copy.invariantViolations().joined(separator: "; ")
        }
        #expect(table.count > 2 && table.invariantViolations() == [])
        #expect(violations { $0.values.append(TaskRecord()) }.contains("records and"))
        #expect(violations { $0.taskIDs[1] = $0.taskIDs[0] }.contains("an id is at two positions"))
        #expect(violations { $0.liveCount += 1 }.contains("liveCount is"))
        #expect(violations { $0.lastFound = ($0.taskIDs[0], 1) }.contains("the id found last"))
        #expect(violations { $0.positions = PositionIndex() }.contains("the index holds 0 positions"))
    }

    @Test("the coverage check reports parts that leave a gap, overlap, come out of order or miss an end")
    func theCoverageCheckReportsEachBadSplit() {
        #expect(SideBySide.coverageViolations([0..<4, 4..<10], count: 10) == [])
        #expect(SideBySide.coverageViolations([0..<4, 5..<10], count: 10) == ["5..<10 does not start where 0..<4 ends"])
        #expect(SideBySide.coverageViolations([0..<6, 4..<10], count: 10) == ["4..<10 does not start where 0..<6 ends"])
        #expect(!SideBySide.coverageViolations([4..<10, 0..<4], count: 10).isEmpty)
        #expect(SideBySide.coverageViolations([1..<10], count: 10) == ["the first part, 1..<10, does not start at 0"])
        #expect(SideBySide.coverageViolations([0..<9], count: 10) == ["the last part, 0..<9, does not end at 10"])
        #expect(SideBySide.coverageViolations([], count: 0) == ["no parts"])
    }

    @Test("_checkInvariants stops the process on a corrupt index or table")
    func theCheckersStopTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var (index, ids) = FastPathInvariantTests.index(of: 10, seed: 1)
            index.count += 1
            index._checkInvariants(ids: ids)
        }
        await #expect(processExitsWith: .failure) {
            var table = FastPathInvariantTests.state(seed: 2, commits: 10).records
            table.liveCount += 1
            table._checkInvariants()
        }
    }
}
