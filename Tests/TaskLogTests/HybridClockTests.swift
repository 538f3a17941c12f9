@_spi(Engine) import CRDTCore
import TestSupport
import Testing

@Suite struct HybridClockTests {
    @Test func tickFollowsTheWallClockWhenItIsAhead() {
        var c = HybridLogicalClock()
        let ticks = [c.tick(wall: 100), c.tick(wall: 100), c.tick(wall: 101)]
        #expect(ticks == [Timestamp(physical: 100, logical: 0), Timestamp(physical: 100, logical: 1), Timestamp(physical: 101, logical: 0)])
        #expect(c.latest == Timestamp(physical: 101, logical: 0))
    }

    @Test func tickIsStrictlyMonotonicWhenTheWallClockGoesBackwards() {
        var c = HybridLogicalClock()
        let first = c.tick(wall: 1_000)
        let afterJumpBack = c.tick(wall: 10)
        let afterZero = c.tick(wall: 0)
        #expect(first < afterJumpBack && afterJumpBack < afterZero)
        #expect(afterZero == Timestamp(physical: 1_000, logical: 2))
    }

    @Test func tickIsStrictlyMonotonicForRandomWallClocks() {
        forEachSeed { seed, rng in
            var c = HybridLogicalClock()
            var wall: UInt64 = 1_767_225_600_000
            var last = Timestamp.zero
            for _ in 0..<50 {
                // Mostly small steps, sometimes large jumps backwards (NTP corrections).
                switch rng.int(0...9) {
                case 0: wall -= UInt64(rng.int(1...100_000))
                case 1...4: break
                default: wall += UInt64(rng.int(1...3))
                }
                let t = c.tick(wall: wall)
                #expect(t > last, "seed \(seed)")
                #expect(t.physical >= wall, "never behind the wall clock, seed \(seed)")
                #expect(c.latest == t, "seed \(seed)")
                last = t
            }
        }
    }

    @Test func observeThenTickSortsAfterTheRemoteTimestamp() {
        forEachSeed { seed, rng in
            var c = HybridLogicalClock()
            let wall = UInt64(rng.int(1_000...2_000))
            let mine = c.tick(wall: wall)
            // Remote clocks are skewed either way, sometimes in the same millisecond.
            let remote = Timestamp(
                physical: UInt64(Int(wall) + rng.int(-50...50)), logical: UInt32(rng.int(0...3)))
            c.observe(remote, wall: wall)
            #expect(c.latest == max(mine, remote), "seed \(seed)")
            let next = c.tick(wall: wall + UInt64(rng.int(0...1)))
            #expect(next > remote && next > mine, "seed \(seed)")
        }
    }

    @Test("a received time more than 24 hours ahead moves the clock only to 24 hours past the wall clock")
    func farFutureTimesAreAdmittedUpToTheBound() {
        forEachSeed { seed, rng in
            var c = HybridLogicalClock()
            let wall = UInt64(rng.int(1_000...2_000_000))
            let ahead = HybridLogicalClock.maxAhead + UInt64(rng.int(1...1_000_000))
            let remote = Timestamp(physical: rng.chance(0.5) ? Timestamp.maxPhysical : wall + ahead, logical: UInt32(rng.int(0...3)))
            c.observe(remote, wall: wall)
            #expect(c.latest == Timestamp(physical: wall + HybridLogicalClock.maxAhead, logical: 0), "seed \(seed)")
            let next = c.tick(wall: wall + 1)
            #expect(next < remote && next.physical == wall + HybridLogicalClock.maxAhead, "seed \(seed)")
            // Within the bound a received time is taken as it is.
            let near = Timestamp(physical: wall + HybridLogicalClock.maxAhead, logical: 9)
            #expect(HybridLogicalClock.admitted(near, wall: wall) == near, "seed \(seed)")
        }
    }

    @Test func observingAnOlderTimestampChangesNothing() {
        var c = HybridLogicalClock()
        let t = c.tick(wall: 500)
        c.observe(Timestamp(physical: 499, logical: 7), wall: 500)
        c.observe(t, wall: 500)
        #expect(c.latest == t)
        let next = c.tick(wall: 500)
        #expect(next == Timestamp(physical: 500, logical: 1))
    }

    @Test func successorCarriesIntoPhysicalAtLogicalOverflow() {
        #expect(Timestamp(physical: 5, logical: 3).successor == Timestamp(physical: 5, logical: 4))
        #expect(Timestamp(physical: 5, logical: .max).successor == Timestamp(physical: 6, logical: 0))
        var c = HybridLogicalClock(latest: Timestamp(physical: 5, logical: .max))
        let t = c.tick(wall: 5)
        #expect(t == Timestamp(physical: 6, logical: 0))
        #expect(t > Timestamp(physical: 5, logical: .max))
        let behind = c.tick(wall: 3)
        #expect(behind == Timestamp(physical: 6, logical: 1))
    }

    @Test func timestampsOrderByPhysicalThenLogical() {
        #expect(Timestamp(physical: 1, logical: 9) < Timestamp(physical: 2, logical: 0))
        #expect(Timestamp(physical: 2, logical: 0) < Timestamp(physical: 2, logical: 1))
        #expect(Timestamp.zero < Timestamp(physical: 0, logical: 1))
        #expect(Timestamp(physical: 7, logical: 3).description == "7.3")
    }

    @Test func stampsOrderByTimeThenReplicaThenSequence() {
        let (lo, hi) = (ReplicaID(high: 1, low: 0), ReplicaID(high: 2, low: 0))
        func s(_ p: UInt64, _ r: ReplicaID, _ q: UInt64) -> Stamp {
            Stamp(time: Timestamp(physical: p), operation: OperationID(replica: r, seq: q))
        }
        #expect(s(1, hi, 9) < s(2, lo, 1))
        #expect(s(2, lo, 9) < s(2, hi, 1))
        #expect(s(2, hi, 1) < s(2, hi, 2))
    }

    @Test func replicaIDsOrderByTheirBigEndianBytes() {
        forEachSeed { seed, rng in
            let a = ReplicaID.random(using: &rng)
            let b = rng.chance(0.3) ? ReplicaID(high: a.high, low: rng.next()) : ReplicaID.random(using: &rng)
            #expect((a < b) == a.bytes.lexicographicallyPrecedes(b.bytes), "seed \(seed)")
            #expect(ReplicaID(bytes: a.bytes) == a, "seed \(seed)")
            #expect(ReplicaID(hex: a.hex) == a && a.hex.count == 32, "seed \(seed)")
            #expect(ReplicaID(hex: a.hex.uppercased()) == a, "seed \(seed)")
        }
        #expect(ReplicaID(hex: "0123") == nil)
        #expect(ReplicaID(hex: String(repeating: "g", count: 32)) == nil)
        #expect(ReplicaID(high: 1, low: 0xAB).hex == "000000000000000100000000000000ab")
    }
}
