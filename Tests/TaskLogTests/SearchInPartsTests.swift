@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) @testable import TaskModel
import TestSupport
import Testing

/// A saved state searched in parts side by side (`TaskState.forEachTask(_:mergingSaved:head:
/// splits:words:into:)`) gives what the whole state's listing keeps, in order, wherever the
/// parts start, and a task stepped over is stepped over exactly.
@Suite("search in parts")
struct SearchInPartsTests {
    /// Words that occur in the generated titles and notes, in other cases, with and without
    /// accents, and words that do not.
    static let vocabulary = ["milk", "BUY", "unicode", "ÜNÏ", "quoted", "n1", "LINE", "zz", "e", "ü"]

    /// The turns the parts took, in the order they took them.
    final class Turns: @unchecked Sendable {
        var order: [Int] = []
    }

    /// A part's sink keeping the items whose title and notes hold `words`; before its turn it
    /// asks for a pause whenever it holds `pauseAfter` tasks or more.
    struct Collecting: TaskPartSink {
        let part: Int
        let words: WordSearch
        let pauseAfter: Int?
        let turns: Turns
        var items: [TaskItem] = []
        var inTurn = false

        mutating func take(_ task: TaskItem) { if words.isEmpty || words.matches(task) { items.append(task) } }
        mutating func take(_ task: borrowing SavedTask) { take(task.item) }
        var wantsPause: Bool { !inTurn && pauseAfter.map { items.count >= $0 } ?? false }

        mutating func takeTurn() {
            inTurn = true
            turns.order.append(part)
        }
    }

    /// Where each task of `state` starts in its encoding, and the encoding.
    static func encoded(_ state: TaskState) -> (body: [UInt8], starts: [Int]) {
        var starts: [Int] = []
        let body = StateCodec.encode(state) { _, offset, _ in starts.append(offset) }
        return (body, starts)
    }

    /// Up to three splits at task starts, now and then one off by a byte or a task.
    static func splits(_ starts: [Int], _ rng: inout SplitMix64) -> [StateCodec.Split] {
        guard starts.count > 1 else { return [] }
        var at = Set((0..<rng.int(0...3)).map { _ in rng.int(1...(starts.count - 1)) }).sorted()
            .map { StateCodec.Split(tasksBefore: $0, offset: starts[$0]) }
        if !at.isEmpty && rng.chance(0.2) {
            let k = rng.int(0...(at.count - 1))
            if rng.chance(0.5) { at[k].offset += 1 } else { at[k].tasksBefore -= 1 }
        }
        return at
    }

    @Test("a search in parts, split anywhere and pausing anywhere, lists what the whole state's listing keeps, in order")
    func partsListWhatTheWholeStateKeeps() throws {
        var split = 0
        try forEachSeed(400) { seed, rng in
            let history = Gen.history(&rng, steps: 20...60)
            let all = Gen.interleaving(history, &rng)
            let saved = Gen.state(history, prefixes: Gen.prefixes(history, &rng))
            let (body, starts) = Self.encoded(saved)
            let head = try StateCodec.head(of: SharedBytes(body))
            var after = TaskState(continuing: head.version, latestTime: head.latestTime)
            for (r, c) in all { after.apply(c, from: r) }
            let whole = Gen.state(applying: all)
            guard after.followsInCreationOrder(savedLatest: head.latestTime) else { return }
            for _ in 0..<3 {
                let query = TaskQuery(
                    status: rng.pick([.open, .done, .all] as [TaskQuery.Status]), tag: rng.chance(0.2) ? rng.pick(Gen.tags) : nil)
                let words = WordSearch((0..<rng.int(0...2)).map { _ in rng.pick(Self.vocabulary) })
                let splits = Self.splits(starts, &rng)
                let turns = Turns()
                let pauseAfter = rng.chance(0.5) ? rng.int(0...2) : nil
                var sinks = (0...splits.count + rng.int(0...1)).map {
                    Collecting(part: $0, words: words, pauseAfter: pauseAfter, turns: turns)
                }
                let linked = try after.forEachTask(
                    query, mergingSaved: SharedBytes(body), head: head, splits: splits, words: words.isEmpty ? nil : words, into: &sinks)
                let expected = whole.tasks(query).filter { words.isEmpty || words.matches($0) }
                #expect(sinks.flatMap(\.items) == expected, "seed \(seed), \(query), \(words.words), splits \(splits)")
                #expect(turns.order == Array(sinks.indices), "seed \(seed): each part in its turn, in order")
                #expect(!linked, "seed \(seed): no generated task names a parent or a dependency")
                if sinks.count > 1 { split += 1 }
            }
        }
        #expect(split > 200)  // most searches were read in several parts
    }

    @Test("stepping over a saved task ends where reading it ends, with its creation time, title and notes")
    func skimEndsWhereReadingEnds() throws {
        try forEachSeed(300) { seed, rng in
            let state = Gen.state(applying: Gen.interleaving(Gen.history(&rng, steps: 20...60), &rng))
            let (body, starts) = Self.encoded(state)
            let decoded = try StateCodec.decode(body)
            let replicas = try body.withUnsafeBytes { (buf) throws(DecodeError) in
                var r = ByteReader(buf)
                return try StateCodec.BodyReader.start(&r, byteCount: buf.count).0.replicas.count
            }
            try body.withUnsafeBytes { buf in
                for (i, start) in starts.enumerated() {
                    var r = ByteReader(buf, offset: start)
                    let id = try StateCodec.taskID(&r)
                    let skim = try #require(TaskSkim(buf, at: r.offset, replicas: replicas), "seed \(seed), \(id)")
                    let record = decoded.records[id]!
                    #expect(skim.end == (i + 1 < starts.count ? starts[i + 1] : buf.count), "seed \(seed), \(id)")
                    #expect(skim.created == record.createdAt, "seed \(seed), \(id)")
                    #expect(Array(skim.title) == Array((record.title?.value ?? "").utf8), "seed \(seed), \(id)")
                    #expect(skim.notes.map(Array.init) == (record.notes?.value ?? nil).map { Array($0.utf8) }, "seed \(seed), \(id)")
                    #expect(!skim.holdsLink)
                }
            }
        }
    }

    @Test("stepping over damaged or cut tasks never reads out of bounds, and a damaged state searched in parts throws or lists")
    func skimOfDamagedBytesStaysInBounds() throws {
        try forEachSeed(300) { seed, rng in
            let state = Gen.state(applying: Gen.interleaving(Gen.history(&rng, steps: 20...60), &rng))
            var (body, starts) = Self.encoded(state)
            guard let first = starts.first else { return }
            for _ in 0..<rng.int(1...4) { body[rng.int(first...(body.count - 1))] = UInt8(truncatingIfNeeded: rng.next()) }
            body.removeLast(rng.chance(0.3) ? rng.int(0...(body.count - first)) : 0)
            body.withUnsafeBytes { buf in
                for start in starts where start < buf.count {
                    if let skim = TaskSkim(buf, at: start + 1, replicas: 4) { #expect(skim.end <= buf.count, "seed \(seed)") }
                }
            }
            guard let head = try? StateCodec.head(of: SharedBytes(body)) else { return }
            let turns = Turns()
            var sinks = [0, 1].map { Collecting(part: $0, words: WordSearch(["milk"]), pauseAfter: nil, turns: turns) }
            let splits = Self.splits(starts.filter { $0 < body.count }, &rng)
            _ = try? TaskState(continuing: head.version, latestTime: head.latestTime).forEachTask(
                TaskQuery(status: .all), mergingSaved: SharedBytes(body), head: head, splits: splits, words: WordSearch(["milk"]), into: &sinks)
        }
    }
}
