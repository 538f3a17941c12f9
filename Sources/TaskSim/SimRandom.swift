import TestSupport

/// The simulator's only source of randomness: the tests' SplitMix64, seeded from the run's
/// seed, so a run replays exactly from its seed. Its choices consume the sequence in their
/// own way (saved cases replay by them), so they are its own, not the tests' helpers.
///
/// Never pick from a `Set` or `Dictionary` without sorting first: their iteration order
/// changes from process to process.
package struct SimRandom: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    package init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    package mutating func next() -> UInt64 { generator.next() }

    /// A new generator whose sequence is independent of this one's continuation.
    package mutating func fork() -> SimRandom { SimRandom(seed: next()) }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool { p > 0 && Double.random(in: 0..<1, using: &self) < p }

    /// An integer in `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// An integer in `range`.
    package mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &self) }

    /// A uniformly chosen element of a non-empty collection.
    package mutating func pick<C: Collection>(_ c: C) -> C.Element {
        precondition(!c.isEmpty, "pick from an empty collection")
        return c[c.index(c.startIndex, offsetBy: int(0..<c.count))]
    }

    /// An element chosen with probability proportional to its weight (weights ≥ 0, some > 0).
    package mutating func weighted<T>(_ choices: [(T, Int)]) -> T {
        let total = choices.reduce(0) { $0 + max(0, $1.1) }
        precondition(total > 0, "no choice has a positive weight")
        var x = int(0..<total)
        for (value, weight) in choices where weight > 0 {
            if x < weight { return value }
            x -= weight
        }
        return choices.last { $0.1 > 0 }!.0
    }

    /// `count` random bytes.
    package mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
