@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// Random values for property tests.
///
/// The domains are deliberately tiny (3 replicas, 4 task ids, 3 tags, a few values per
/// field) so that random histories collide: the same field written concurrently, the same
/// tag added and removed, the same task removed and edited.
///
/// Every function is deterministic in the generator's state; nothing iterates a `Set` or
/// `Dictionary` without sorting first.
public enum Gen {
    // MARK: Tiny domains

    /// Three replicas. Their id order (r1 < r2 < r0) deliberately differs from index order.
    public static let replicas: [ReplicaID] = [
        ReplicaID(high: 0x3000_0000_0000_0000, low: 0x0000_0000_0000_00AA),
        ReplicaID(high: 0x1000_0000_0000_0000, low: 0x0000_0000_0000_00BB),
        ReplicaID(high: 0x2000_0000_0000_0000, low: 0x0000_0000_0000_00CC),
    ]

    /// Four task ids: a lowercase UUID (stored as 16 bytes), an uppercase UUID-shaped id
    /// (stored as a string), a short id and one using every punctuation character allowed.
    public static let taskIDs: [TaskID] = [
        TaskID("3f2b8c1e-9d4a-4e7b-8c6d-5a1b2c3d4e5f")!,
        TaskID("A0B1C2D3-E4F5-4A6B-8C7D-9E0F1A2B3C4D")!,
        TaskID("task3")!,
        TaskID("x.y_z-1")!,
    ]

    public static let tags: [String] = ["home", "urgent", "✓ done"]
    public static let titles: [String] = ["", "Buy milk", "Ünïcødé \"quoted\"\n"]
    public static let notes: [String?] = [nil, "n1", "line1\nline2"]
    public static let priorities: [UInt8?] = [nil, 0, 1, 3]
    public static let dues: [Due?] = [nil, .date(days: 20_513), .date(days: -1), .instant(milliseconds: 1_767_225_600_123)]
    public static let lists: [String?] = [nil, "home", "work"]
    public static let metaKeys: [String] = ["k1", "k2", "f", "e\u{301}x"]  // the last two: string order differs from byte order
    public static let metaValues: [String?] = [nil, "v1", "v2"]

    // MARK: LWW registers

    /// A stamp from a tiny domain (3 physical times x 2 logical x 3 replicas x 2 seqs).
    public static func stamp(_ rng: inout SplitMix64) -> Stamp {
        Stamp(
            time: Timestamp(physical: UInt64(rng.int(0...2)), logical: UInt32(rng.int(0...1))),
            operation: OperationID(replica: rng.pick(replicas), seq: UInt64(rng.int(1...2))))
    }

    /// The value written by the write with `stamp`. A stamp identifies one write, so the
    /// value must be a function of it (distinct writes never share a stamp).
    public static func lwwValue(for stamp: Stamp) -> String {
        let r = replicas.firstIndex(of: stamp.operation.replica) ?? 0
        let h = Int(stamp.time.physical) * 7 + Int(stamp.time.logical) * 3 + r * 5 + Int(stamp.operation.seq)
        return ["x", "y", "z"][h % 3]
    }

    /// A register after 1...4 random writes.
    public static func lwwRegister(_ rng: inout SplitMix64) -> LWWRegister<String> {
        let s = stamp(&rng)
        var reg = LWWRegister(value: lwwValue(for: s), stamp: s)
        for _ in 0..<rng.int(0...3) {
            let s = stamp(&rng)
            reg.assign(lwwValue(for: s), at: s)
        }
        return reg
    }

    // MARK: Version vectors

    public static func versionVector(_ rng: inout SplitMix64) -> VersionVector {
        var v = VersionVector()
        for r in replicas where rng.chance(0.7) { v[r] = UInt64(rng.int(0...3)) }
        return v
    }

    // MARK: OR-sets

    public enum ORSetOperation: Sendable, Equatable {
        case add(String, OperationID)
        case remove(String, observed: [OperationID])
    }

    /// Three replicas of an OR-set that add, remove (what they observe) and merge each other.
    public struct ORSetScenario: Sendable {
        /// Every operation made, in the order made.
        public var operations: [ORSetOperation] = []
        /// Each replica's set.
        public var sets: [ORSet<String>] = []
        /// Indices into `operations` of the operations each replica's set reflects.
        public var known: [[Int]] = []
    }

    public static let setElements = ["a", "b", "c"]

    /// With `malformedRemoves`, some removes name one element but list dots of another
    /// (a writer bug or a hostile log); readers must still converge.
    public static func orSetScenario(
        _ rng: inout SplitMix64, steps: ClosedRange<Int> = 4...24, malformedRemoves: Bool = false
    ) -> ORSetScenario {
        var sets = Array(repeating: ORSet<String>(), count: replicas.count)
        var known = Array(repeating: Set<Int>(), count: replicas.count)
        var seqs = Array(repeating: UInt64(0), count: replicas.count)
        var ops: [ORSetOperation] = []
        for _ in 0..<rng.int(steps) {
            let r = rng.int(0...(replicas.count - 1))
            let roll = rng.int(0...9)
            if roll < 5 {
                seqs[r] += 1
                let e = rng.pick(setElements)
                let dot = OperationID(replica: replicas[r], seq: seqs[r])
                sets[r].add(e, tag: dot)
                known[r].insert(ops.count)
                ops.append(.add(e, dot))
            } else if roll < 8 {
                let e = rng.pick(setElements)
                let source = malformedRemoves && rng.chance(0.3) ? rng.pick(setElements) : e
                let observed = sets[r].observedTags(of: source).sorted()
                sets[r].remove(e, observed: observed)
                known[r].insert(ops.count)
                ops.append(.remove(e, observed: observed))
            } else {
                let from = rng.int(0...(replicas.count - 1))
                sets[r].merge(sets[from])
                known[r].formUnion(known[from])
            }
        }
        return ORSetScenario(operations: ops, sets: sets, known: known.map { $0.sorted() })
    }

    // MARK: Values

    public static func fieldWrite(_ rng: inout SplitMix64) -> FieldWrite {
        switch rng.int(0...6) {
        case 0: .title(rng.pick(titles))
        case 1: .notes(rng.pick(notes))
        case 2: .done(rng.chance(0.5))
        case 3: .priority(rng.pick(priorities))
        case 4: .due(rng.pick(dues))
        case 5: .list(rng.pick(lists))
        default: .meta(key: rng.pick(metaKeys), value: rng.pick(metaValues))
        }
    }

    /// One encoded commit-payload value of a random form (every form the format defines),
    /// as carried verbatim by ``FieldWrite/unknown(field:value:)``.
    public static func encodedValue(_ rng: inout SplitMix64) -> [UInt8] {
        var w = ByteWriter()
        switch rng.int(0...8) {
        case 0: w.u8(0)  // none
        case 1: w.u8(1)  // false
        case 2: w.u8(2)  // true
        case 3:
            w.u8(3)  // uint
            w.uvarint(rng.chance(0.5) ? UInt64(rng.int(0...300)) : rng.next())
        case 4:
            w.u8(4)  // string
            w.string(rng.pick(codecStrings))
        case 5:
            w.u8(5)  // date
            w.svarint(Int64(rng.int(-800_000...3_000_000)))
        case 6:
            w.u8(6)  // instant
            w.svarint(Int64(bitPattern: rng.next()))
        case 7: w.u8(UInt8(rng.int(0x10...0x1F)))  // small uint
        default:
            w.u8(UInt8(rng.int(0x20...0xFF)))  // opaque: length + bytes
            let body = rng.bytes(rng.int(0...20))
            w.uvarint(body.count)
            w.append(body)
        }
        return w.bytes
    }

    /// A write to a field number this build does not know: nibble form (7...14) or
    /// extended form (15 and up).
    public static func unknownFieldWrite(_ rng: inout SplitMix64) -> FieldWrite {
        let field: UInt64 =
            switch rng.int(0...2) {
            case 0: UInt64(rng.int(7...14))
            case 1: UInt64(rng.int(15...400))
            default: rng.chance(0.5) ? UInt64.max : UInt64(rng.int(15...1 << 40))
            }
        return .unknown(field: field, value: encodedValue(&rng))
    }

    /// An operation kind this build does not know: header 0x80...0xFF, opaque body.
    /// Header 0x90 is a device name, which this build knows: not among them.
    public static func unknownOperation(_ rng: inout SplitMix64) -> TaskOperation {
        let header = UInt8(rng.int(0x80...0xFE))
        return .unknown(kind: header >= 0x90 ? header + 1 : header, body: rng.bytes(rng.int(0...12)))
    }

    /// Names a device may give itself, and names a hostile one may write: empty, too long,
    /// cut inside a multi-byte character, with escapes, controls and reordering marks.
    public static let deviceNames = [
        "laptop", "phone", "", "Anna's iPad", String(repeating: "é", count: 40), String(repeating: "x", count: 63) + "€",
        "\u{1b}[31mred\u{1b}[0m", "a\nb\u{7f}\u{85}", "\u{202e}evil", String(repeating: "\u{1b}]0;title\u{7}", count: 20),
    ]

    public static func deviceNameOperation(_ rng: inout SplitMix64) -> TaskOperation { .deviceName(rng.pick(deviceNames)) }

    // MARK: Replica histories

    /// Every replica's log: commits with contiguous sequence numbers from 1 and strictly
    /// increasing hybrid-clock times.
    public struct History: Sendable {
        public var logs: [ReplicaID: [Commit]]

        public init(logs: [ReplicaID: [Commit]]) { self.logs = logs }

        /// Replicas with at least one commit, in id order.
        public var replicas: [ReplicaID] { logs.keys.filter { !logs[$0]!.isEmpty }.sorted() }

        public var operationCount: Int { logs.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.operations.count } } }

        /// All commits, replica after replica (each replica's own order kept).
        public var sequential: [(replica: ReplicaID, commit: Commit)] {
            replicas.flatMap { r in logs[r]!.map { (r, $0) } }
        }
    }

    /// Simulates three replicas editing the same few tasks with skewed wall clocks and
    /// occasional partial syncs. Operations are valid for the writer's view: removes carry
    /// exactly the tags the writer observed.
    public static func history(
        _ rng: inout SplitMix64, steps: ClosedRange<Int> = 8...36, unknowns: Bool = true
    ) -> History {
        let n = replicas.count
        var views = Array(repeating: TaskState(), count: n)
        var clocks = Array(repeating: HybridLogicalClock(), count: n)
        var logs = Array(repeating: [Commit](), count: n)
        // delivered[r][s]: how many of s's commits r has applied.
        var delivered = Array(repeating: Array(repeating: 0, count: n), count: n)
        let skews = (0..<n).map { _ in Int64(rng.int(-40...40)) }
        var now: Int64 = 1_767_225_600_000
        for _ in 0..<rng.int(steps) {
            now += Int64(rng.int(0...3))
            let r = rng.int(0...(n - 1))
            if rng.chance(0.35) {
                // Partial sync: r receives the next few commits of another replica, in order.
                let s = (r + rng.int(1...(n - 1))) % n
                let pending = logs[s].count - delivered[r][s]
                if pending > 0 {
                    for _ in 0..<rng.int(1...pending) {
                        let c = logs[s][delivered[r][s]]
                        let ok = views[r].apply(c, from: replicas[s])
                        precondition(ok)
                        clocks[r].observe(c.time, wall: UInt64(now))
                        delivered[r][s] += 1
                    }
                }
                continue
            }
            let time = clocks[r].tick(wall: UInt64(now + skews[r]))
            let opCount = rng.chance(0.7) ? 1 : rng.int(2...3)
            let ops = (0..<opCount).map { _ in operation(&rng, view: views[r], unknowns: unknowns) }
            let commit = Commit(firstSeq: views[r].version[replicas[r]] + 1, time: time, operations: ops)
            let ok = views[r].apply(commit, from: replicas[r])
            precondition(ok)
            logs[r].append(commit)
            delivered[r][r] += 1
        }
        var out: [ReplicaID: [Commit]] = [:]
        for i in 0..<n { out[replicas[i]] = logs[i] }
        return History(logs: out)
    }

    /// An operation a replica with state `view` could issue.
    public static func operation(_ rng: inout SplitMix64, view: TaskState, unknowns: Bool = true) -> TaskOperation {
        let t = rng.pick(taskIDs)
        let roll = rng.int(0...99)
        if unknowns && roll >= 95 {
            return rng.chance(0.5) ? unknownOperation(&rng) : .set(t, unknownFieldWrite(&rng))
        }
        if roll >= 92 { return deviceNameOperation(&rng) }
        switch roll {
        case 0..<18:
            return .add(t)
        case 18..<32:
            // Mostly remove a task the writer sees; sometimes one it does not (observes nothing).
            let live = view.membership.elements.sorted()
            let target = !live.isEmpty && rng.chance(0.8) ? rng.pick(live) : t
            return .remove(target, observed: view.observedDots(of: target).sorted())
        case 32..<70:
            return .set(t, fieldWrite(&rng))
        case 70..<82:
            return .addTag(t, rng.pick(tags))
        default:
            // Mostly remove a tag the writer sees on the task.
            var seen: [(TaskID, String)] = []
            for id in view.records.ids.sorted() {
                for tag in view.records[id]!.tags.elements.sorted() { seen.append((id, tag)) }
            }
            let (target, tag) = !seen.isEmpty && rng.chance(0.8) ? rng.pick(seen) : (t, rng.pick(tags))
            return .removeTag(
                target, tag, observed: (view.records[target]?.tags.observedTags(of: tag) ?? []).sorted())
        }
    }

    /// The commits of `history` in a random order that keeps each replica's own order.
    public static func interleaving(_ history: History, _ rng: inout SplitMix64) -> [(replica: ReplicaID, commit: Commit)] {
        let rs = history.replicas
        var next = Array(repeating: 0, count: rs.count)
        var out: [(replica: ReplicaID, commit: Commit)] = []
        while true {
            let open = rs.indices.filter { next[$0] < history.logs[rs[$0]]!.count }
            if open.isEmpty { return out }
            let i = rng.pick(open)
            out.append((rs[i], history.logs[rs[i]]![next[i]]))
            next[i] += 1
        }
    }

    /// A random number of leading commits of each replica's log.
    public static func prefixes(_ history: History, _ rng: inout SplitMix64) -> [ReplicaID: Int] {
        var p: [ReplicaID: Int] = [:]
        for r in history.replicas { p[r] = rng.int(0...history.logs[r]!.count) }
        return p
    }

    /// The state of applying `commits` in order (every apply must succeed).
    public static func state(applying commits: [(replica: ReplicaID, commit: Commit)]) -> TaskState {
        var s = TaskState()
        for (r, c) in commits {
            let ok = s.apply(c, from: r)
            precondition(ok, "commit \(c.firstSeq) of \(r) leaves a gap")
        }
        return s
    }

    /// The state of the first `prefixes[r]` commits of each replica.
    public static func state(_ history: History, prefixes: [ReplicaID: Int]) -> TaskState {
        state(applying: history.replicas.flatMap { r in history.logs[r]!.prefix(prefixes[r] ?? 0).map { (r, $0) } })
    }

    /// The state holding a random prefix (possibly empty or whole) of each replica's log.
    public static func partialState(_ history: History, _ rng: inout SplitMix64) -> TaskState {
        state(history, prefixes: prefixes(history, &rng))
    }

    // MARK: Arbitrary commits (for the codec)

    /// Strings that exercise the codec: empty, multi-byte UTF-8, NUL, a two-byte length.
    public static let codecStrings: [String] = [
        "", "a", "Buy milk", "Ünïcødé ✓ 😀", "nul\u{0}inside", "quote\"back\\slash",
        String(repeating: "long ", count: 60),
    ]

    public static func anyTaskID(_ rng: inout SplitMix64) -> TaskID {
        switch rng.int(0...5) {
        case 0: TaskID.random(using: &rng)
        case 1: TaskID(String(repeating: "z", count: 128))!
        default: rng.pick(taskIDs)
        }
    }

    public static func anyReplica(_ rng: inout SplitMix64) -> ReplicaID {
        rng.chance(0.5) ? rng.pick(replicas) : ReplicaID.random(using: &rng)
    }

    public static func anyDots(_ rng: inout SplitMix64) -> [OperationID] {
        (0..<rng.int(0...3)).map { _ in
            OperationID(replica: anyReplica(&rng), seq: rng.chance(0.7) ? UInt64(rng.int(1...500)) : rng.next())
        }
    }

    /// Any field write the codec can carry, with values well outside the tiny domains.
    public static func anyFieldWrite(_ rng: inout SplitMix64) -> FieldWrite {
        func optString(_ rng: inout SplitMix64) -> String? { rng.chance(0.25) ? nil : rng.pick(codecStrings) }
        switch rng.int(0...8) {
        case 0: return .title(rng.pick(codecStrings))
        case 1: return .notes(optString(&rng))
        case 2: return .done(rng.chance(0.5))
        case 3: return .priority(rng.chance(0.2) ? nil : UInt8(rng.int(0...3)))
        case 4:
            switch rng.int(0...4) {
            case 0: return .due(nil)
            case 1: return .due(.date(days: Int64(rng.int(-1_000_000...3_000_000))))
            case 2: return .due(.date(days: rng.chance(0.5) ? .min : .max))
            case 3: return .due(.instant(milliseconds: Int64(bitPattern: rng.next())))
            default: return .due(.instant(milliseconds: Int64(rng.int(-100_000...100_000))))
            }
        case 5: return .list(optString(&rng))
        case 6: return .meta(key: rng.pick(codecStrings), value: optString(&rng))
        default: return unknownFieldWrite(&rng)
        }
    }

    public static func anyOperation(_ rng: inout SplitMix64) -> TaskOperation {
        let t = anyTaskID(&rng)
        switch rng.int(0...9) {
        case 0: return .add(t)
        case 1: return .remove(t, observed: anyDots(&rng))
        case 2, 3, 4: return .set(t, anyFieldWrite(&rng))
        case 5: return .addTag(t, rng.pick(codecStrings))
        case 6: return .removeTag(t, rng.pick(codecStrings), observed: anyDots(&rng))
        case 7: return .deviceName(rng.chance(0.5) ? rng.pick(deviceNames) : rng.pick(codecStrings))
        default: return unknownOperation(&rng)
        }
    }

    /// 1...5 consecutive commits starting at `firstSeq`, with strictly increasing times that
    /// exercise every clock encoding (same millisecond with the implicit or an explicit
    /// logical counter, new millisecond with logical 0 or not).
    public static func commits(_ rng: inout SplitMix64, firstSeq: UInt64 = 1) -> [Commit] {
        var seq = firstSeq
        var time = Timestamp(
            physical: rng.chance(0.1) ? UInt64(rng.int(0...2)) : UInt64(rng.int(0...(1 << 45))),
            logical: rng.chance(0.7) ? 0 : UInt32(rng.int(0...5)))
        var out: [Commit] = []
        for i in 0..<rng.int(1...5) {
            if i > 0 {
                switch rng.int(0...4) {
                case 0: time = time.successor
                case 1 where time.logical < 1 << 30:
                    time = Timestamp(physical: time.physical, logical: time.logical + UInt32(rng.int(2...1000)))
                case 1, 2: time = Timestamp(physical: time.physical + UInt64(rng.int(1...100_000)), logical: 0)
                case 3: time = Timestamp(physical: time.physical + UInt64(rng.int(1...5)), logical: UInt32(rng.int(1...9)))
                default: time = Timestamp(physical: time.physical + (1 << 32), logical: UInt32.max - UInt32(rng.int(0...1)))
                }
            }
            let ops = (0..<rng.int(1...5)).map { _ in anyOperation(&rng) }
            out.append(Commit(firstSeq: seq, time: time, operations: ops))
            seq += UInt64(ops.count)
        }
        return out
    }
}

extension Commit {
    /// The commit with an operation array of its own, not shared with the commits it was
    /// decoded or sliced with: for handing to `TaskState.apply(taking:from:)`, which leaves
    /// the operations it applies hollow, or for keeping past a buffer's reuse.
    public var withOwnOperations: Commit { Commit(firstSeq: firstSeq, time: time, operations: Array(operations)) }
}
