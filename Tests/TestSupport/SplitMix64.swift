/// A tiny, fast, seedable random number generator (Steele, Lea & Flood's SplitMix64).
///
/// Property tests derive every random choice from one of these, so a failing seed
/// reproduces exactly. Never iterate a `Set` or `Dictionary` to make a random choice:
/// their order changes from run to run (per-process hash seeding); sort first.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RandomNumberGenerator {
    /// A uniformly chosen element of a non-empty collection.
    public mutating func pick<C: Collection>(_ c: C) -> C.Element {
        precondition(!c.isEmpty, "pick from an empty collection")
        let i = Int.random(in: 0..<c.count, using: &self)
        return c[c.index(c.startIndex, offsetBy: i)]
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }

    /// An integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}

/// Runs `body` once per seed in `0..<count`, each with its own generator.
/// Tests put the seed in every failure message so a failure can be replayed alone.
public func forEachSeed(_ count: Int = 200, _ body: (UInt64, inout SplitMix64) throws -> Void) rethrows {
    for seed in 0..<UInt64(count) {
        var rng = SplitMix64(seed: seed)
        try body(seed, &rng)
    }
}
