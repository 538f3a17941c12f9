@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TestSupport
import Testing

/// Algebraic laws of every mergeable value, checked over 200 seeds of tiny random domains.
/// Every failure message names the seed; replay one with `SplitMix64(seed:)`.
@Suite struct CRDTLawTests {
    @Test func splitMix64IsTheReferenceGenerator() {
        // Reference outputs of SplitMix64 seeded with 0.
        var g = SplitMix64(seed: 0)
        #expect(g.next() == 0xE220_A839_7B1D_CDAF)
        #expect(g.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(g.next() == 0x06C4_5D18_8009_454F)
    }

    /// Guards the generators: if histories stopped colliding, the laws below would hold vacuously.
    @Test func generatedHistoriesAreValidAndCollide() {
        var removesSeeingAdds = 0, tagRemovesSeeingAdds = 0, sameFieldFromTwoReplicas = 0, sameMillisecond = 0
        var deletedTasks = 0, unknowns = 0, renames = 0
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            var writers: [String: Set<ReplicaID>] = [:]
            for r in h.replicas {
                let log = h.logs[r]!
                #expect(log.first?.firstSeq == 1, "seed \(seed)")
                for (a, b) in zip(log, log.dropFirst()) {
                    #expect(b.firstSeq == a.endSeq && b.time > a.time, "contiguous, increasing, seed \(seed)")
                    if b.time.physical == a.time.physical { sameMillisecond += 1 }
                }
                for op in log.flatMap(\.operations) {
                    switch op {
                    case .remove(_, let o): if !o.isEmpty { removesSeeingAdds += 1 }
                    case .removeTag(_, _, let o): if !o.isEmpty { tagRemovesSeeingAdds += 1 }
                    case .unknown, .set(_, .unknown): unknowns += 1
                    case .set(let t, let w):
                        let field: String =
                            switch w {
                            case .meta(let key, _): "meta." + key
                            default: String(describing: w).prefix { $0 != "(" }.description
                            }
                        writers["\(t)/\(field)", default: []].insert(r)
                    default: break
                    }
                }
            }
            renames += h.replicas.filter { r in h.logs[r]!.flatMap(\.operations).count { if case .deviceName = $0 { true } else { false } } > 1 }.count
            sameFieldFromTwoReplicas += writers.values.filter { $0.count > 1 }.count
            deletedTasks += Gen.state(applying: h.sequential).allTasks.filter(\.isDeleted).count
        }
        // About half of what the current generators give over 200 seeds.
        #expect(removesSeeingAdds > 120)
        #expect(tagRemovesSeeingAdds > 80)
        #expect(sameFieldFromTwoReplicas > 60)
        #expect(sameMillisecond > 200)
        #expect(deletedTasks > 50)
        #expect(unknowns > 100)
        #expect(renames > 10)
    }

    // MARK: LWW register

    @Test func lwwRegisterMergeIsCommutativeAssociativeIdempotent() {
        forEachSeed { seed, rng in
            let a = Gen.lwwRegister(&rng)
            let b = Gen.lwwRegister(&rng)
            let c = Gen.lwwRegister(&rng)
            #expect(a.merging(b) == b.merging(a), "commutative, seed \(seed)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associative, seed \(seed)")
            #expect(a.merging(a) == a, "idempotent, seed \(seed)")
            let m = a.merging(b).merging(c)
            #expect(m.stamp == max(a.stamp, b.stamp, c.stamp), "keeps the greatest stamp, seed \(seed)")
            #expect(m.value == Gen.lwwValue(for: m.stamp), "keeps that write's value, seed \(seed)")
        }
    }

    @Test func optionalLWWRegisterMergeTreatsNilAsIdentity() {
        forEachSeed { seed, rng in
            let a: LWWRegister<String>? = rng.chance(0.3) ? nil : Gen.lwwRegister(&rng)
            let b: LWWRegister<String>? = rng.chance(0.3) ? nil : Gen.lwwRegister(&rng)
            let c: LWWRegister<String>? = rng.chance(0.3) ? nil : Gen.lwwRegister(&rng)
            #expect(a.merging(b) == b.merging(a), "commutative, seed \(seed)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associative, seed \(seed)")
            #expect(a.merging(a) == a, "idempotent, seed \(seed)")
            #expect(a.merging(nil) == a && Optional<LWWRegister<String>>.none.merging(a) == a, "identity, seed \(seed)")
        }
    }

    @Test func lwwAssignOnlyAcceptsGreaterStamps() {
        let s1 = Stamp(time: Timestamp(physical: 5), operation: OperationID(replica: Gen.replicas[0], seq: 1))
        let s2 = Stamp(time: Timestamp(physical: 5), operation: OperationID(replica: Gen.replicas[0], seq: 2))
        var r = LWWRegister(value: "b", stamp: s2)
        let lower = r.assign("a", at: s1)
        let equal = r.assign("c", at: s2)
        #expect(!lower && !equal)
        #expect(r.value == "b")
        var nilReg: LWWRegister<String>? = nil
        let created = nilReg.assign("x", at: s1)
        #expect(created)
        #expect(nilReg?.value == "x")
    }

    @Test func lwwReplaceLeavesWhatAssignLeavesAndHandsBackTheValueLetGo() {
        forEachSeed { seed, rng in
            let start: LWWRegister<String>? = rng.chance(0.3) ? nil : Gen.lwwRegister(&rng)
            let write = Gen.lwwRegister(&rng)
            var assigned = start
            let won = assigned.assign(write.value, at: write.stamp)
            var replaced = start
            let letGo = replaced.replace(with: write.value, at: write.stamp)
            #expect(replaced == assigned, "seed \(seed)")
            #expect(letGo == (won ? start?.value : write.value), "seed \(seed)")
        }
    }

    // MARK: Version vector

    @Test func versionVectorMergeIsCommutativeAssociativeIdempotent() {
        forEachSeed { seed, rng in
            let a = Gen.versionVector(&rng)
            let b = Gen.versionVector(&rng)
            let c = Gen.versionVector(&rng)
            #expect(a.merging(b) == b.merging(a), "commutative, seed \(seed)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associative, seed \(seed)")
            #expect(a.merging(a) == a, "idempotent, seed \(seed)")
            let m = a.merging(b)
            #expect(m.includes(a) && m.includes(b), "upper bound, seed \(seed)")
            for r in Gen.replicas {
                #expect(m[r] == max(a[r], b[r]), "per-replica maximum, seed \(seed)")
            }
            #expect(a.includes(b) == (a.merging(b) == a), "includes iff merge adds nothing, seed \(seed)")
        }
    }

    @Test func versionVectorDropsZeroEntries() {
        var v = VersionVector([Gen.replicas[0]: 0, Gen.replicas[1]: 2])
        #expect(v.entries.count == 1)
        v[Gen.replicas[1]] = 0
        #expect(v == VersionVector())
        #expect(v.operationCount == 0)
        v[Gen.replicas[2]] = 3
        #expect(v.contains(OperationID(replica: Gen.replicas[2], seq: 3)))
        #expect(!v.contains(OperationID(replica: Gen.replicas[2], seq: 4)))
        #expect(!v.contains(OperationID(replica: Gen.replicas[0], seq: 1)))
    }

    // MARK: OR-set

    /// The naive model: the set of (element, dot) adds minus the removed dots.
    struct ORSetModel: Equatable {
        var adds: Set<Pair> = []
        var removed: Set<OperationID> = []

        struct Pair: Hashable {
            var element: String
            var dot: OperationID
        }

        init(_ ops: some Sequence<Gen.ORSetOperation>) {
            for op in ops {
                switch op {
                case .add(let e, let d): adds.insert(Pair(element: e, dot: d))
                case .remove(_, let observed): removed.formUnion(observed)
                }
            }
        }

        var tags: [String: Set<OperationID>] {
            var t: [String: Set<OperationID>] = [:]
            for p in adds where !removed.contains(p.dot) { t[p.element, default: []].insert(p.dot) }
            return t
        }

        var elements: Set<String> { Set(tags.keys) }
    }

    @Test(arguments: [false, true])
    func orSetMergeIsCommutativeAssociativeIdempotent(malformedRemoves: Bool) {
        forEachSeed { seed, rng in
            let s = Gen.orSetScenario(&rng, malformedRemoves: malformedRemoves)
            let (a, b, c) = (s.sets[0], s.sets[1], s.sets[2])
            #expect(a.merging(b) == b.merging(a), "commutative, seed \(seed)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associative, seed \(seed)")
            #expect(a.merging(a) == a, "idempotent, seed \(seed)")
            #expect(a.merging(ORSet()) == a, "empty set is the identity, seed \(seed)")
        }
    }

    @Test(arguments: [false, true])
    func orSetMatchesTheNaiveModel(malformedRemoves: Bool) {
        forEachSeed { seed, rng in
            let s = Gen.orSetScenario(&rng, malformedRemoves: malformedRemoves)
            // Each replica reflects exactly the operations it made or merged.
            for (i, set) in s.sets.enumerated() {
                let model = ORSetModel(s.known[i].map { s.operations[$0] })
                #expect(set.tags == model.tags, "replica \(i) tags, seed \(seed)")
                #expect(set.elements == model.elements, "replica \(i) elements, seed \(seed)")
                #expect(set.tombstones == model.removed, "replica \(i) tombstones, seed \(seed)")
                for e in Gen.setElements {
                    #expect(set.contains(e) == model.elements.contains(e), "replica \(i) contains \(e), seed \(seed)")
                }
            }
            // The merge of all replicas is the model of all operations.
            let all = s.sets.reduce(ORSet()) { $0.merging($1) }
            let model = ORSetModel(s.operations)
            #expect(all.tags == model.tags, "merged tags, seed \(seed)")
            #expect(all.elements == model.elements, "merged elements, seed \(seed)")
            // Delivery order does not matter: applying the operations in any order (even a
            // remove before the add it observed) gives the model.
            var shuffled = s.operations
            shuffled.shuffle(using: &rng)
            var direct = ORSet<String>()
            for op in shuffled {
                switch op {
                case .add(let e, let d): direct.add(e, tag: d)
                case .remove(let e, let observed): direct.remove(e, observed: observed)
                }
            }
            #expect(direct.tags == model.tags, "any delivery order, seed \(seed)")
            #expect(direct == all, "delivery equals merge, seed \(seed)")
        }
    }

    @Test func orSetAddConcurrentWithRemoveWins() {
        let r0 = Gen.replicas[0]
        var a = ORSet<String>()
        a.add("x", tag: OperationID(replica: r0, seq: 1))
        var b = a
        b.remove("x", observed: b.observedTags(of: "x"))
        a.add("x", tag: OperationID(replica: r0, seq: 2))  // concurrent with b's remove
        #expect(!b.contains("x"))
        #expect(a.merging(b).contains("x"))
        #expect(b.merging(a).observedTags(of: "x") == [OperationID(replica: r0, seq: 2)])
        // A re-delivered add whose tag was removed stays removed.
        var c = b
        c.add("x", tag: OperationID(replica: r0, seq: 1))
        #expect(!c.contains("x"))
    }

    // MARK: Task state

    @Test func taskStateMergeIsCommutativeAssociativeIdempotent() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let a = Gen.partialState(h, &rng)
            let b = Gen.partialState(h, &rng)
            let c = Gen.partialState(h, &rng)
            #expect(a.merging(b) == b.merging(a), "commutative, seed \(seed)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associative, seed \(seed)")
            #expect(a.merging(a) == a, "idempotent, seed \(seed)")
            #expect(a.merging(TaskState()) == a && TaskState().merging(a) == a, "identity, seed \(seed)")
        }
    }

    @Test func taskStateMergeEqualsApplyingTheUnionOfCommits() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let pa = Gen.prefixes(h, &rng)
            let pb = Gen.prefixes(h, &rng)
            let union = pa.merging(pb, uniquingKeysWith: max)
            let merged = Gen.state(h, prefixes: pa).merging(Gen.state(h, prefixes: pb))
            #expect(merged == Gen.state(h, prefixes: union), "seed \(seed)")
        }
    }

    @Test func taskStateMergeOfDisjointReplicaSubsetsEqualsApplyingAll() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            var parts: [[(replica: ReplicaID, commit: Commit)]] = [[], [], []]
            for r in h.replicas {
                let part = rng.int(0...2)
                parts[part] += h.logs[r]!.map { (r, $0) }
            }
            let merged = parts.map(Gen.state(applying:)).reduce(TaskState()) { $0.merging($1) }
            let all = Gen.state(applying: h.sequential)
            #expect(merged == all, "seed \(seed)")
            #expect(merged.allTasks.sorted { $0.id < $1.id } == all.allTasks.sorted { $0.id < $1.id }, "seed \(seed)")
        }
    }

    @Test func taskStateInterleavingsOfReplicaLogsGiveEqualStates() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let reference = Gen.state(applying: h.sequential)
            for _ in 0..<3 {
                let s = Gen.state(applying: Gen.interleaving(h, &rng))
                #expect(s == reference, "seed \(seed)")
            }
            #expect(reference.version.operationCount == UInt64(h.operationCount), "seed \(seed)")
        }
    }

    @Test func taskStateReapplyingCommitsIsIdempotent() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let once = Gen.state(applying: h.sequential)
            var twice = once
            for (r, c) in Gen.interleaving(h, &rng) {
                let accepted = twice.apply(c, from: r)
                #expect(accepted, "re-delivery is accepted, seed \(seed)")
            }
            #expect(twice == once, "seed \(seed)")
        }
    }

    @Test("a device's name is the newest it gave itself, bounded, whatever order states merge in")
    func deviceNamesConvergeOnTheNewestWrite() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            let a = Gen.partialState(h, &rng), b = Gen.partialState(h, &rng)
            #expect(a.merging(b).deviceNameRegisters == b.merging(a).deviceNameRegisters, "seed \(seed)")
            let all = Gen.state(applying: h.sequential)
            for r in h.replicas {
                var newest: (Stamp, String)?
                for c in h.logs[r]! {
                    for (i, op) in c.operations.enumerated() {
                        guard case .deviceName(let name) = op else { continue }
                        newest = (Stamp(time: c.time, operation: OperationID(replica: r, seq: c.firstSeq + UInt64(i))), name)
                    }
                }
                #expect(all.deviceNameRegisters[r]?.value == newest.map { DeviceName.normalised($0.1) }, "seed \(seed)")
                #expect(all.deviceNameRegisters[r].map { $0.value.utf8.count <= 64 && !$0.value.unicodeScalars.contains(where: DeviceName.isControl) } ?? true)
            }
        }
    }

    @Test func taskStateRefusesACommitThatLeavesAGap() {
        forEachSeed { seed, rng in
            let h = Gen.history(&rng)
            guard let r = h.replicas.first(where: { h.logs[$0]!.count >= 2 }) else { return }
            let log = h.logs[r]!
            let skip = rng.int(1...(log.count - 1))
            var s = Gen.state(applying: log.prefix(skip - 1).map { (r, $0) })
            let before = s
            let refused = !s.apply(log[skip], from: r)
            #expect(refused, "seed \(seed)")
            #expect(s == before, "a refused commit changes nothing, seed \(seed)")
            let fillsGap = s.apply(log[skip - 1], from: r)
            let thenNext = s.apply(log[skip], from: r)
            #expect(fillsGap && thenNext, "seed \(seed)")
        }
    }
}
