@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
import TestSupport
import Testing

/// One replica in a hand-written scenario: its log and its view.
struct ScenarioReplica {
    let id: ReplicaID
    var state = TaskState()
    var log: [Commit] = []

    init(_ id: ReplicaID) { self.id = id }

    /// Commits `ops` at `time` (physical milliseconds, logical) and returns the commit.
    @discardableResult
    mutating func commit(_ physical: UInt64, _ ops: [TaskOperation]) -> Commit {
        commit(physical, 0, ops)
    }

    @discardableResult
    mutating func commit(_ physical: UInt64, _ logical: UInt32, _ ops: [TaskOperation]) -> Commit {
        let c = Commit(firstSeq: state.version[id] + 1, time: Timestamp(physical: physical, logical: logical), operations: ops)
        let ok = state.apply(c, from: id)
        precondition(ok)
        log.append(c)
        return c
    }

    /// Applies every commit of `other` (re-delivery is harmless).
    mutating func receive(_ other: ScenarioReplica) {
        for c in other.log {
            let ok = state.apply(c, from: other.id)
            precondition(ok)
        }
    }

    /// The tags a remove of `task` issued now would observe.
    func observed(_ task: TaskID) -> [OperationID] { state.membership.observedTags(of: task).sorted() }

    func observed(_ task: TaskID, tag: String) -> [OperationID] {
        (state.records[task]?.tags.observedTags(of: tag) ?? []).sorted()
    }
}

/// Both merge orders, checked equal; returns the merged state.
func converge(_ a: ScenarioReplica, _ b: ScenarioReplica, sourceLocation: SourceLocation = #_sourceLocation) -> TaskState {
    let ab = a.state.merging(b.state)
    let ba = b.state.merging(a.state)
    #expect(ab == ba, "merge order matters", sourceLocation: sourceLocation)
    var viaLogs = a
    viaLogs.receive(b)
    #expect(viaLogs.state == ab, "applying the other's log differs from merging states", sourceLocation: sourceLocation)
    return ab
}

@Suite struct TaskStateTests {
    static let t = TaskID("task3")!
    static let (lo, hi) = (ReplicaID(high: 1, low: 0), ReplicaID(high: 2, low: 0))

    /// `textStarts(with:)` compares a UUID's digits without building its text: it must agree
    /// with the text for every prefix, and for prefixes that differ anywhere.
    @Test func taskIDTextStartsWithAgreesWithItsText() throws {
        var rng = SplitMix64(seed: 7)
        let ids = (0..<200).map { _ in TaskID(uuidHigh: rng.next(), low: rng.next()) } + [Self.t, TaskID("x.y_z-1")!]
        for id in ids {
            let text = Array(id.rawValue.utf8)
            for n in 0...(text.count + 1) {
                var prefix = Array(text.prefix(n))
                #expect(id.textStarts(with: prefix) == text.starts(with: prefix), "\(id) \(n)")
                if n > 0 && n <= text.count {
                    prefix[Int(rng.next() % UInt64(n))] ^= 1
                    #expect(!id.textStarts(with: prefix), "\(id), \(prefix)")
                }
            }
            #expect(!id.textStarts(with: text + [48]))
        }
    }

    // MARK: Semantics

    /// Notes, list, meta and tags live in a box that copies of a record share until one writes.
    @Test func aCopiedStateKeepsItsNotesAndTagsWhenTheCopyChangesThem() throws {
        var a = ScenarioReplica(Self.lo)
        a.commit(10, [.add(Self.t), .set(Self.t, .notes("first")), .addTag(Self.t, "x"), .set(Self.t, .meta(key: "k", value: "v"))])
        let before = a.state
        a.commit(20, [.set(Self.t, .notes("second")), .addTag(Self.t, "y"), .set(Self.t, .list("home"))])
        let old = try #require(before.task(Self.t))
        #expect(old.notes == "first" && old.tags == ["x"] && old.list == nil && old.meta == ["k": "v"])
        let new = try #require(a.state.task(Self.t))
        #expect(new.notes == "second" && new.tags == ["x", "y"] && new.list == "home" && new.meta == ["k": "v"])
        var merged = before
        merged.merge(a.state)
        #expect(merged == a.state)
        #expect(before.task(Self.t) == old, "merging into a copy changed the original")
    }

    @Test func concurrentEditsOfDifferentFieldsBothSurvive() throws {
        let writes: [FieldWrite] = [
            .title("T"), .notes("N"), .done(true), .priority(3), .due(.date(days: 20_513)), .list("work"),
            .meta(key: "k1", value: "v1"), .meta(key: "k2", value: "v2"),
        ]
        for (i, w1) in writes.enumerated() {
            for w2 in writes[(i + 1)...] {
                var a = ScenarioReplica(Self.lo)
                var b = ScenarioReplica(Self.hi)
                a.commit(100, [.add(Self.t)])
                b.receive(a)
                a.commit(300, [.set(Self.t, w1)])
                b.commit(200, [.set(Self.t, w2)])
                let merged = converge(a, b)
                var expected = ScenarioReplica(Self.lo)
                expected.commit(100, [.add(Self.t), .set(Self.t, w1), .set(Self.t, w2)])
                let item = try #require(merged.task(Self.t))
                let want = try #require(expected.state.task(Self.t))
                #expect(item.title == want.title && item.notes == want.notes && item.isDone == want.isDone, "\(w1) / \(w2)")
                #expect(item.priority == want.priority && item.due == want.due && item.list == want.list, "\(w1) / \(w2)")
                #expect(item.meta == want.meta, "\(w1) / \(w2)")
            }
        }
    }

    @Test func concurrentEditsOfTheSameFieldConvergeToTheLaterClock() throws {
        for (timeA, timeB) in [((100, 0), (100, 1)), ((100, 5), (101, 0)), ((99, 9), (250, 0))] as [((UInt64, UInt32), (UInt64, UInt32))] {
            // The later write is made by the replica with the lower id, so the id cannot decide.
            var a = ScenarioReplica(Self.hi)
            var b = ScenarioReplica(Self.lo)
            a.commit(timeA.0, timeA.1, [.add(Self.t), .set(Self.t, .title("earlier")), .set(Self.t, .meta(key: "k", value: "earlier"))])
            b.commit(timeB.0, timeB.1, [.set(Self.t, .title("later")), .set(Self.t, .meta(key: "k", value: "later"))])
            let item = try #require(converge(a, b).task(Self.t))
            #expect(item.title == "later")
            #expect(item.meta == ["k": "later"])
        }
    }

    @Test func concurrentEditsOfTheSameFieldAtTheSameClockAreWonByTheHigherReplicaID() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t), .set(Self.t, .priority(3)), .set(Self.t, .list("from lo"))])
        b.commit(100, [.set(Self.t, .priority(nil)), .set(Self.t, .list("from hi"))])
        let item = try #require(converge(a, b).task(Self.t))
        #expect(item.priority == nil)
        #expect(item.list == "from hi")
        #expect(Self.lo < Self.hi)
    }

    @Test func laterWriteInTheSameCommitWins() throws {
        var a = ScenarioReplica(Self.lo)
        a.commit(100, [.add(Self.t), .set(Self.t, .title("first")), .set(Self.t, .title("second"))])
        #expect(a.state.task(Self.t)?.title == "second")
    }

    @Test func tagAddConcurrentWithRemoveOfThatTagWins() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t), .addTag(Self.t, "x"), .addTag(Self.t, "y")])
        b.receive(a)
        b.commit(300, [.removeTag(Self.t, "x", observed: b.observed(Self.t, tag: "x")), .removeTag(Self.t, "y", observed: b.observed(Self.t, tag: "y"))])
        a.commit(200, [.addTag(Self.t, "x")])  // concurrent re-add, earlier clock
        let item = try #require(converge(a, b).task(Self.t))
        #expect(item.tags == ["x"], "the concurrent add of x survives; y's remove saw every add of y")
    }

    @Test func removeConcurrentWithEditKeepsTheTaskDeletedAndTheEditShowsAfterRestore() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t), .set(Self.t, .title("original"))])
        b.receive(a)
        a.commit(200, [.remove(Self.t, observed: a.observed(Self.t))])
        b.commit(300, [.set(Self.t, .title("edited")), .addTag(Self.t, "kept")])  // later clock, concurrent
        let merged = converge(a, b)
        #expect(!merged.isLive(Self.t))
        #expect(merged.liveTasks.isEmpty)
        let hidden = try #require(merged.task(Self.t))
        #expect(hidden.isDeleted)
        #expect(merged.allTasks.map(\.id) == [Self.t])
        // Restoring is a new add: the edit made while the task was deleted shows.
        a.receive(b)
        a.commit(400, [.add(Self.t)])
        let restored = try #require(a.state.task(Self.t))
        #expect(!restored.isDeleted && a.state.isLive(Self.t))
        #expect(restored.title == "edited" && restored.tags == ["kept"])
        #expect(restored.createdAt == Timestamp(physical: 100))
    }

    @Test func addConcurrentWithRemoveOfTheTaskWins() {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t)])
        b.receive(a)
        b.commit(300, [.remove(Self.t, observed: b.observed(Self.t))])
        a.commit(200, [.add(Self.t)])
        #expect(converge(a, b).isLive(Self.t))
    }

    @Test func removeObservingNothingRemovesNothing() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t)])
        b.commit(200, [.remove(Self.t, observed: b.observed(Self.t))])  // b never saw the add
        let merged = converge(a, b)
        #expect(merged.isLive(Self.t))
        #expect(merged.task(Self.t)?.updatedAt == Timestamp(physical: 200))
        // A record touched only by a remove is not a task.
        #expect(b.state.task(Self.t) == nil && b.state.allTasks.isEmpty)
    }

    @Test func doneCompletedAtIsTheWinningWritesTime() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t)])
        b.receive(a)
        a.commit(150, 2, [.set(Self.t, .done(true))])
        b.commit(250, 1, [.set(Self.t, .done(true))])
        var item = try #require(converge(a, b).task(Self.t))
        #expect(item.isDone && item.completedAt == Timestamp(physical: 250, logical: 1))
        // A later reopen wins: no completion time.
        a.receive(b)
        a.commit(300, [.set(Self.t, .done(false))])
        item = try #require(a.state.task(Self.t))
        #expect(!item.isDone && item.completedAt == nil)
        // Completing again takes the new time.
        a.commit(400, [.set(Self.t, .done(true))])
        #expect(a.state.task(Self.t)?.completedAt == Timestamp(physical: 400))
    }

    @Test func createdAtIsTheFirstAddAndUpdatedAtTheLatestOperation() throws {
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(1_000, [.add(Self.t)])
        b.commit(900, [.add(Self.t)])  // a skewed clock adds the same id "earlier"
        a.commit(1_100, [.set(Self.t, .title("x"))])
        a.commit(1_300, [.addTag(Self.t, "a")])
        b.commit(1_200, [.removeTag(Self.t, "a", observed: [])])
        var item = try #require(converge(a, b).task(Self.t))
        #expect(item.createdAt == Timestamp(physical: 900))
        #expect(item.updatedAt == Timestamp(physical: 1_300))
        // A remove is an operation on the task too; a re-add does not move createdAt.
        a.receive(b)
        a.commit(1_400, [.remove(Self.t, observed: a.observed(Self.t))])
        a.commit(1_500, [.add(Self.t)])
        item = try #require(a.state.task(Self.t))
        #expect(item.createdAt == Timestamp(physical: 900) && item.updatedAt == Timestamp(physical: 1_500))
        a.commit(1_600, [.remove(Self.t, observed: a.observed(Self.t))])
        #expect(a.state.task(Self.t)?.updatedAt == Timestamp(physical: 1_600))
    }

    @Test func extensionOperationsAreSkippedWhenMaterialising() throws {
        var plain = ScenarioReplica(Self.lo)
        plain.commit(100, [.add(Self.t), .set(Self.t, .title("x"))])
        var mixed = ScenarioReplica(Self.lo)
        mixed.commit(100, [.unknown(kind: 0x80, body: []), .add(Self.t), .set(Self.t, .title("x")), .unknown(kind: 0xF3, body: [1, 2, 3])])
        // A later commit of only extension operations changes nothing a user sees.
        mixed.commit(500, [.unknown(kind: 0x9A, body: [9])])
        #expect(mixed.state.task(Self.t) == plain.state.task(Self.t))
        #expect(mixed.state.version[Self.lo] == 5, "the skipped operations still count as applied")
        #expect(mixed.state.membership.elements == plain.state.membership.elements)
        #expect(mixed.state.latestTime == Timestamp(physical: 500))
        #expect(CommitCodec.lostOperationHeader == 0x80, "the lost-operation placeholder is an extension")
    }

    @Test func extensionOnlyCommitsChangeNoRecordOrMembership() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            var s = Gen.partialState(h, &rng)
            let before = s
            let r = rng.pick(Gen.replicas)
            let ops = (0..<rng.int(1...4)).map { _ in Gen.unknownOperation(&rng) }
            let applied = s.apply(Commit(firstSeq: s.version[r] + 1, time: Timestamp(physical: 1 << 50), operations: ops), from: r)
            #expect(applied, "seed \(seed)")
            #expect(s.records == before.records && s.membership == before.membership, "seed \(seed)")
            #expect(s.version[r] == before.version[r] + UInt64(ops.count), "seed \(seed)")
        }
    }

    @Test func setsOfUnknownFieldsChangeNoFieldValue() throws {
        var plain = ScenarioReplica(Self.lo)
        plain.commit(100, [.add(Self.t), .set(Self.t, .title("x")), .set(Self.t, .meta(key: "k", value: "v"))])
        var mixed = ScenarioReplica(Self.lo)
        mixed.commit(100, [
            .add(Self.t), .set(Self.t, .unknown(field: 9, value: [0x04, 0x01, 0x61])), .set(Self.t, .title("x")),
            .set(Self.t, .unknown(field: 1 << 20, value: [0x02])), .set(Self.t, .meta(key: "k", value: "v")),
            .set(Self.t, .unknown(field: 7, value: [0x00])),
        ])
        var item = try #require(mixed.state.task(Self.t))
        let want = try #require(plain.state.task(Self.t))
        item.updatedAt = want.updatedAt
        #expect(item == want)
        #expect(mixed.state.version[Self.lo] == 6)
    }

    @Test func setsOfUnknownFieldsTouchTheTaskOnly() throws {
        var a = ScenarioReplica(Self.lo)
        a.commit(100, [.add(Self.t), .set(Self.t, .title("x"))])
        let before = try #require(a.state.task(Self.t))
        let other = TaskID("other")!
        a.commit(500, [.set(Self.t, .unknown(field: 9, value: [0x00])), .set(other, .unknown(field: 300, value: [0x12]))])
        var after = try #require(a.state.task(Self.t))
        #expect(after.updatedAt == Timestamp(physical: 500), "an operation on the task, whatever its field")
        after.updatedAt = before.updatedAt
        #expect(after == before, "no register changes")
        // A task named only by such a set has a record but was never added: not a task.
        #expect(a.state.records[other]?.updatedAt == Timestamp(physical: 500))
        #expect(a.state.task(other) == nil && !a.state.isLive(other))
    }

    @Test func commitLeavingAGapIsRefusedAndOldCommitsAreIgnored() {
        var a = ScenarioReplica(Self.lo)
        let c1 = a.commit(100, [.add(Self.t), .set(Self.t, .title("a"))])
        let c2 = a.commit(200, [.set(Self.t, .title("b"))])
        let c3 = a.commit(300, [.set(Self.t, .title("c"))])
        var s = TaskState()
        let gap = s.apply(c2, from: Self.lo)
        #expect(!gap && s == TaskState())
        let first = s.apply(c1, from: Self.lo)
        let skip = s.apply(c3, from: Self.lo)
        #expect(first && !skip)
        let second = s.apply(c2, from: Self.lo)
        let again = s.apply(c1, from: Self.lo)
        #expect(second && again)
        #expect(s.task(Self.t)?.title == "b" && s.version[Self.lo] == 3)
        // The same commit from another replica is another replica's operation.
        let other = s.apply(c2, from: Self.hi)
        #expect(!other)
    }

    @Test func aRunOfCommitsAppliedTogetherEqualsApplyingThemOneByOneUpToTheFirstGap() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            // Start from some prefix of each replica's log, then hand over a stretch of one
            // replica's log that may begin inside what is held, follow it, or leave a gap.
            var together = Gen.partialState(h, &rng)
            var oneByOne = together
            let replica = rng.pick(Gen.replicas)
            let log = h.logs[replica]!
            guard !log.isEmpty else { return }
            let from = rng.int(0...(log.count - 1))
            let run = log[from..<rng.int((from + 1)...log.count)]
            var expected = 0
            for c in run {
                guard oneByOne.apply(c, from: replica) else { break }
                expected += 1
            }
            var taking = together
            let taken = together.apply(run, from: replica)
            #expect(taken == expected, "seed \(seed)")
            #expect(together == oneByOne, "seed \(seed)")
            #expect(together.version == oneByOne.version && together.latestTime == oneByOne.latestTime, "seed \(seed)")
            // Taking the values leaves the commits hollow: they get operations of their own.
            let copies = run.map(\.withOwnOperations)
            #expect(taking.apply(taking: copies[...], from: replica) == expected, "seed \(seed)")
            #expect(taking == oneByOne, "seed \(seed)")
            #expect(taking.version == oneByOne.version && taking.latestTime == oneByOne.latestTime, "seed \(seed)")
        }
    }

    @Test func aLargeLogAppliedInRunsTakingItsValuesEqualsTheLogAppliedCommitByCommit() {
        // More tasks than the cache holds and than the table first holds, so the records
        // fetched ahead move while a run is applied; runs of every length, some starting
        // inside what is held.
        forEachSeed(2) { seed, rng in
            let n = 20_000
            let ids = (0..<n).map { TaskID(uuidHigh: rng.next(), low: UInt64($0)) }
            var log: [Commit] = []
            var seq: UInt64 = 1
            var time: UInt64 = 1_000
            func commit(_ ops: [TaskOperation]) {
                log.append(Commit(firstSeq: seq, time: Timestamp(physical: time), operations: ops))
                seq += UInt64(ops.count)
                time += 1
            }
            for i in 0..<n { commit([.add(ids[i]), .set(ids[i], .title("task \(i) with a long enough title"))]) }
            for i in 0..<30_000 {
                let k = rng.int(0...(n - 1))
                let id = ids[k]
                switch rng.int(0...5) {
                case 0: commit([.set(id, .title("title \(i) long enough to be allocated"))])
                case 1: commit([.set(id, .notes(rng.chance(0.2) ? nil : "notes \(i) long enough to be allocated"))])
                case 2: commit([.set(id, .done(rng.chance(0.5))), .set(id, .priority(UInt8(i % 4)))])
                case 3: commit([.addTag(id, "tag \(i % 7)")])
                case 4: commit([.set(id, .meta(key: "k\(i % 3)", value: "v \(i)")), .set(id, .list("list \(i % 5)"))])
                default: commit([.remove(id, observed: [OperationID(replica: Self.lo, seq: UInt64(1 + 2 * k))])])  // its add
                }
            }
            var oneByOne = TaskState()
            for c in log { oneByOne.apply(c, from: Self.lo) }
            var inRuns = TaskState()
            var start = 0
            while start < log.count {
                let end = min(log.count, start + rng.int(1...5_000))
                let from = max(0, start - rng.int(0...3))  // a few already held
                let copies = log[from..<end].map(\.withOwnOperations)
                #expect(inRuns.apply(taking: copies[...], from: Self.lo) == copies.count, "seed \(seed)")
                start = end
            }
            #expect(inRuns == oneByOne, "seed \(seed)")
            #expect(inRuns.version == oneByOne.version && inRuns.latestTime == oneByOne.latestTime, "seed \(seed)")
        }
    }

    @Test func latestTimeIsTheGreatestCommitTime() {
        forEachSeed(50) { seed, rng in
            let h = Gen.history(&rng)
            let s = Gen.state(applying: Gen.interleaving(h, &rng))
            let greatest = h.sequential.map(\.commit.time).max() ?? .zero
            #expect(s.latestTime == greatest, "seed \(seed)")
        }
    }

    @Test func taskItemsSortTagsByBytesAndDropRemovedMetaEntries() throws {
        var a = ScenarioReplica(Self.lo)
        a.commit(100, [
            .add(Self.t), .addTag(Self.t, "b"), .addTag(Self.t, "B"), .addTag(Self.t, "é"), .addTag(Self.t, "a"),
            .set(Self.t, .meta(key: "gone", value: "1")), .set(Self.t, .meta(key: "kept", value: "2")),
        ])
        a.commit(200, [.set(Self.t, .meta(key: "gone", value: nil))])
        let item = try #require(a.state.task(Self.t))
        #expect(item.tags == ["B", "a", "b", "é"])
        #expect(item.meta == ["kept": "2"])
        #expect(item.title == "" && item.notes == nil && !item.isDone && item.priority == nil && item.due == nil && item.list == nil)
    }

    @Test func aStateOfMoreTasksThanTheTableFirstHoldsKeepsEveryRecordAndLiveDot() {
        // Past 16,384 records the table moves into storage it grows itself, twice over here.
        let n = 40_000
        var a = ScenarioReplica(Self.lo)
        for i in 0..<n {
            let id = TaskID(uuidHigh: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(i))
            a.commit(UInt64(1_000 + i), [.add(id), .set(id, .title("task \(i)")), .set(id, .priority(UInt8(i % 4)))])
        }
        #expect(a.state.liveCount == n)
        #expect(a.state.records.count == n)
        for i in stride(from: 0, to: n, by: 997) {
            let id = TaskID(uuidHigh: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(i))
            let item = a.state.task(id)
            #expect(item?.title == "task \(i)" && item?.priority == UInt8(i % 4) && item?.isDeleted == false)
        }
        var b = ScenarioReplica(Self.hi)
        b.receive(a)
        #expect(b.state == a.state)
    }

    @Test func aTaskTableFindsEveryIDItHoldsTextOrUUIDAndNoIDItLacks() {
        // Ids added in an order unrelated to their hashes, through every growth of the index.
        forEachSeed(20) { seed, rng in
            var state = TaskState()
            let n = rng.int(1...3_000)
            let held = (0..<n).map { i in rng.chance(0.3) ? TaskID("t-\(seed)-\(i)")! : TaskID(uuidHigh: rng.next(), low: rng.next()) }
            let lacking = (0..<200).map { i in rng.chance(0.3) ? TaskID("u-\(seed)-\(i)")! : TaskID(uuidHigh: rng.next(), low: rng.next()) }
            for (i, id) in held.enumerated() {
                let commit = Commit(firstSeq: UInt64(i + 1), time: Timestamp(physical: UInt64(1_000 + i), logical: 0), operations: [.add(id)])
                state.apply(commit, from: Self.lo)
            }
            #expect(state.records.count == n, "seed \(seed)")
            for (i, id) in held.enumerated() { #expect(state.records.position(of: id) == i, "seed \(seed), \(id)") }
            for id in lacking { #expect(state.records.position(of: id) == nil, "seed \(seed), \(id)") }
        }
    }

    // MARK: StateCodec

    @Test func aSnapshotListsTasksInCreationOrderSoADecodedStateIsAlreadyInListingOrder() throws {
        var a = ScenarioReplica(Self.lo)
        // Ids in the opposite order of creation.
        let ids = (0..<50).map { TaskID(uuidHigh: UInt64(100 - $0), low: 0) }
        for (i, id) in ids.enumerated() { a.commit(UInt64(1_000 + i), [.add(id), .set(id, .title("t\(i)"))]) }
        let decoded = try StateCodec.decode(StateCodec.encode(a.state))
        #expect(decoded.records.ids == ids)
        #expect(decoded == a.state)
    }

    @Test func stateCodecRoundTripsRandomStates() throws {
        try forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let s = rng.chance(0.5)
                ? Gen.partialState(h, &rng)
                : Gen.state(applying: Gen.interleaving(h, &rng))
            let bytes = StateCodec.encode(s)
            let decoded = try StateCodec.decode(bytes)
            #expect(decoded == s, "seed \(seed)")
            #expect(decoded.allTasks.sorted { $0.id < $1.id } == s.allTasks.sorted { $0.id < $1.id }, "seed \(seed)")
        }
        #expect(try StateCodec.decode(StateCodec.encode(TaskState())) == TaskState())
    }

    /// A random state, its encoding, and where each of its tasks starts in it.
    static func encodedWithStarts(_ rng: inout SplitMix64) -> (state: TaskState, bytes: [UInt8], starts: [Int]) {
        let h = Gen.history(&rng)
        let state = rng.chance(0.5) ? Gen.partialState(h, &rng) : Gen.state(applying: Gen.interleaving(h, &rng))
        var starts: [Int] = []
        let bytes = StateCodec.encode(state) { _, offset, _ in starts.append(offset) }
        return (state, bytes, starts)
    }

    @Test func aStateDecodedInPartsSideBySideEqualsTheStateDecodedInOnePart() throws {
        try forEachSeed { seed, rng in
            let (state, bytes, starts) = Self.encodedWithStarts(&rng)
            guard starts.count > 1 else { return }
            let chosen = Set((0..<rng.int(1...3)).map { _ in rng.int(1...(starts.count - 1)) }).sorted()
            let splits = chosen.map { StateCodec.Split(tasksBefore: $0, offset: starts[$0]) }
            let decoded = try StateCodec.decode(SharedBytes(bytes)) { _ in splits }
            #expect(decoded == state, "seed \(seed), splits \(chosen)")
            #expect(decoded.records.ids == (try StateCodec.decode(bytes)).records.ids, "seed \(seed): the tasks keep their order")
            #expect(decoded.liveCount == state.liveCount, "seed \(seed)")
        }
    }

    @Test func splitsThatAreNotWhereTheirTasksStartAreIgnoredAndTheStateStillDecodes() throws {
        try forEachSeed { seed, rng in
            let (state, bytes, starts) = Self.encodedWithStarts(&rng)
            guard starts.count > 1 else { return }
            let i = rng.int(1...(starts.count - 1))
            let wrong = [
                StateCodec.Split(tasksBefore: i, offset: starts[i] + rng.int(1...3)),  // inside a task
                StateCodec.Split(tasksBefore: i - 1, offset: starts[i]),  // a miscount
                StateCodec.Split(tasksBefore: i, offset: bytes.count + 10),  // past the end
                StateCodec.Split(tasksBefore: starts.count + 5, offset: starts[i]),  // more tasks than there are
            ]
            for split in wrong {
                let decoded = try StateCodec.decode(SharedBytes(bytes)) { _ in [split] }
                #expect(decoded == state, "seed \(seed), split \(split)")
            }
        }
    }

    @Test func decodingInPartsRefusesWhatDecodingInOnePartRefuses() {
        forEachSeed(1_000) { seed, rng in
            var (_, bytes, starts) = Self.encodedWithStarts(&rng)
            guard starts.count > 1 else { return }
            let i = rng.int(1...(starts.count - 1))
            let splits = [StateCodec.Split(tasksBefore: i, offset: starts[i])]
            bytes[rng.int(0...(bytes.count - 1))] = UInt8(rng.int(0...255))
            if rng.chance(0.3) { bytes.removeLast(rng.int(1...min(8, bytes.count))) }
            let whole = try? StateCodec.decode(SharedBytes(bytes))
            let parted = try? StateCodec.decode(SharedBytes(bytes)) { _ in splits }
            #expect(whole == parted, "seed \(seed)")
        }
    }

    @Test func theItemsOfALargeStateMadeSideBySideAreThoseMadeOneAtATime() {
        // Enough tasks for one part per core (each at least 2,048 tasks).
        var a = ScenarioReplica(Self.lo)
        for i in 0..<9_000 {
            let id = TaskID(uuidHigh: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(i))
            var ops: [TaskOperation] = [.add(id), .set(id, .title("task \(i) with a title long enough for the heap"))]
            if i % 3 == 0 { ops.append(.addTag(id, "t\(i % 7)")) }
            if i % 5 == 0 { ops.append(.set(id, .notes("notes of \(i)"))) }
            a.commit(UInt64(1_000 + (i * 7919) % 9_000), ops)
        }
        for query in [TaskQuery(status: .all), TaskQuery(status: .open, tag: "t3"), TaskQuery(status: .all, sort: .title, limit: 5_000)] {
            var oneAtATime: [TaskItem] = []
            a.state.forEachTask(query) { oneAtATime.append($0) }
            #expect(a.state.tasks(query) == oneAtATime, "\(query)")
        }
    }

    @Test func stateCodecKeepsTombstonesSoLateAddsStayRemoved() throws {
        // A state that has seen a remove but not the add it observed.
        var a = ScenarioReplica(Self.lo)
        var b = ScenarioReplica(Self.hi)
        a.commit(100, [.add(Self.t), .addTag(Self.t, "x")])
        b.receive(a)
        b.commit(200, [.removeTag(Self.t, "x", observed: b.observed(Self.t, tag: "x")), .remove(Self.t, observed: b.observed(Self.t))])
        var onlyB = TaskState()
        for c in b.log {
            _ = onlyB.apply(c, from: b.id)
        }
        var restored = try StateCodec.decode(StateCodec.encode(onlyB))
        #expect(restored == onlyB)
        for c in a.log {
            _ = restored.apply(c, from: a.id)
        }
        #expect(!restored.isLive(Self.t))
        #expect(restored.task(Self.t)?.tags == [])
    }

    @Test func stateCodecDecodeOfTruncatedBytesThrows() throws {
        forEachSeed(100) { seed, rng in
            let h = Gen.history(&rng)
            let bytes = StateCodec.encode(Gen.state(applying: h.sequential))
            let cuts = bytes.count <= 64
                ? Array(0..<bytes.count) : [0, bytes.count - 1] + (0..<62).map { _ in rng.int(1...(bytes.count - 2)) }
            var decoded: [Int] = []
            for n in cuts {
                do throws(DecodeError) {
                    _ = try StateCodec.decode(Array(bytes.prefix(n)))
                    decoded.append(n)
                } catch {}
            }
            #expect(decoded.isEmpty, "prefixes that decoded (of \(bytes.count) bytes), seed \(seed)")
            // Trailing bytes are refused too.
            #expect(throws: DecodeError.self, "seed \(seed)") { try StateCodec.decode(bytes + [0]) }
        }
    }

    @Test func stateCodecDecodeOfGarbageThrowsAndNeverTraps() {
        // No replicas, empty version vector, time 0.0, then one tombstone dot.
        #expect(throws: DecodeError.self) { try StateCodec.decode([0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]) }
        forEachSeed(2_000) { seed, rng in
            let h = Gen.history(&rng, steps: 2...8)
            var bytes = StateCodec.encode(Gen.state(applying: h.sequential))
            let i = rng.int(0...(bytes.count - 1))
            bytes[i] = UInt8(rng.int(0...255))
            do throws(DecodeError) {
                _ = try StateCodec.decode(bytes)
            } catch {
                #expect(!error.reason.isEmpty, "seed \(seed)")
            }
        }
    }

    // MARK: Queries

    static func items(_ specs: [(String, UInt64, [FieldWrite], [String])]) -> [TaskItem] {
        var a = ScenarioReplica(lo)
        for (id, time, writes, tags) in specs {
            let t = TaskID(id)!
            a.commit(time, [.add(t)] + writes.map { .set(t, $0) } + tags.map { .addTag(t, $0) })
        }
        return a.state.liveTasks
    }

    @Test func querySortsByTheKeyThenCreationThenID() {
        let tasks = Self.items([
            ("a", 10, [.priority(1), .due(.date(days: 2)), .title("b")], ["home"]),
            ("b", 20, [.priority(3), .due(.instant(milliseconds: 86_400_000 + 1)), .title("B")], []),
            ("c", 30, [.title("a"), .list("work")], ["home"]),
            ("d", 5, [.priority(1), .due(.date(days: 1)), .done(true), .title("c")], []),
        ])
        func ids(_ q: TaskQuery) -> [String] { q.apply(to: tasks).map(\.id.rawValue) }
        #expect(ids(TaskQuery()) == ["a", "b", "c"])
        #expect(ids(TaskQuery(status: .all)) == ["d", "a", "b", "c"])
        #expect(ids(TaskQuery(status: .done)) == ["d"])
        #expect(ids(TaskQuery(status: .all, sort: .priority)) == ["b", "d", "a", "c"])
        #expect(ids(TaskQuery(status: .all, sort: .due)) == ["d", "b", "a", "c"])
        #expect(ids(TaskQuery(status: .all, sort: .title)) == ["b", "c", "a", "d"])
        #expect(ids(TaskQuery(status: .all, tag: "home")) == ["a", "c"])
        #expect(ids(TaskQuery(status: .all, list: "work")) == ["c"])
        #expect(ids(TaskQuery(status: .all, limit: 2)) == ["d", "a"])
        #expect(ids(TaskQuery(status: .all, limit: 0)).isEmpty)
    }

    @Test func queriesOfUUIDTasksSortByTheKeyThenCreationThenID() {
        var g = SplitMix64(seed: 7)
        var specs: [(String, UInt64, [FieldWrite], [String])] = []
        for _ in 0..<200 {
            // Few distinct times, priorities and due dates, so ties reach the id.
            var writes: [FieldWrite] = []
            if Bool.random(using: &g) { writes.append(.priority(UInt8.random(in: 0...3, using: &g))) }
            if Bool.random(using: &g) { writes.append(.due(.date(days: Int64.random(in: 0...3, using: &g)))) }
            specs.append((TaskID.random(using: &g).rawValue, UInt64.random(in: 1...4, using: &g), writes, []))
        }
        let tasks = Self.items(specs)
        let byCreation: (TaskItem, TaskItem) -> Bool = { a, b in
            a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.id < b.id
        }
        func ranked(_ rank: @escaping (TaskItem) -> Int64?) -> [TaskID] {
            tasks.sorted { a, b in
                switch (rank(a), rank(b)) {
                case let (x?, y?) where x != y: return x < y
                case (.some, nil): return true
                case (nil, .some): return false
                default: return byCreation(a, b)
                }
            }.map(\.id)
        }
        func ids(_ q: TaskQuery) -> [TaskID] { q.apply(to: tasks).map(\.id) }
        #expect(ids(TaskQuery(status: .all)) == tasks.sorted(by: byCreation).map(\.id))
        #expect(ids(TaskQuery(status: .all, sort: .priority)) == ranked { $0.priority.map { -Int64($0) } })
        #expect(ids(TaskQuery(status: .all, sort: .due)) == ranked { $0.due?.sortKey })
    }
}
