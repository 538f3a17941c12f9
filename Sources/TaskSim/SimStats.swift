/// What a run did, by kind: actions taken and faults injected.
package struct SimStats: Sendable, Equatable, CustomStringConvertible {
    package private(set) var counts: [String: Int] = [:]

    package init() {}

    package mutating func note(_ what: String, _ n: Int = 1) { counts[what, default: 0] += n }

    package subscript(_ what: String) -> Int { counts[what] ?? 0 }

    package mutating func add(_ other: SimStats) {
        for (k, v) in other.counts { counts[k, default: 0] += v }
    }

    package var description: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
    }
}
