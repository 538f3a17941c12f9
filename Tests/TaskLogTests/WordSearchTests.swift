@_spi(Engine) @testable import TaskModel
import TestSupport
import Testing

/// The fast path of word search (ASCII text compared in place, eight bytes at a time) against
/// its definition: the folded word occurs in the folded title and notes.
@Suite("word search")
struct WordSearchTests {
    /// Letters of both cases, the bytes next to them that bit 0x20 confuses, and (now and then)
    /// accented letters, which take the folding path.
    static let alphabet = Array("aAbBmMzZ@`[{ -09\u{7F}\t") + Array("éÉñß")

    func randomText(_ rng: inout SplitMix64, length: ClosedRange<Int>, accents: Bool) -> String {
        let pool = accents ? Self.alphabet : Array(Self.alphabet.dropLast(4))
        return String((0..<rng.int(length)).map { _ in rng.pick(pool) })
    }

    func item(_ title: String, _ notes: String?) -> TaskItem {
        TaskItem(
            id: TaskID("t")!, title: title, notes: notes, isDone: false, completedAt: nil, priority: nil, due: nil, tags: [],
            list: nil, meta: [:], createdAt: .zero, updatedAt: .zero, isDeleted: false)
    }

    func definition(_ word: String, title: String, notes: String?) -> Bool {
        TextFolding.folded(title + " " + (notes ?? "")).contains(TextFolding.folded(word))
    }

    @Test("on random text of every length, a match is found exactly when the folded word occurs in the folded title or notes")
    func fastPathAgreesWithFolding() {
        var rng = SplitMix64(seed: 28)
        for round in 0..<20_000 {
            let accents = round % 5 == 0
            let title = randomText(&rng, length: 0...40, accents: accents)
            let notes = rng.chance(0.3) ? randomText(&rng, length: 0...20, accents: accents) : nil
            let word = rng.chance(0.5) && title.count > 2
                ? String(title.dropFirst(rng.int(0...(title.count - 1))).prefix(rng.int(1...3))).uppercased()
                : randomText(&rng, length: 1...3, accents: false)
            guard !word.contains(" "), !word.isEmpty else { continue }
            #expect(WordSearch([word]).matches(item(title, notes)) == definition(word, title: title, notes: notes), "\(word) in \(title) / \(notes ?? "-")")
        }
    }

    @Test("with two or three random words, a match is found exactly when every folded word occurs in the folded title or notes")
    func severalWordsAgreeWithFolding() {
        var rng = SplitMix64(seed: 29)
        for round in 0..<20_000 {
            let accents = round % 5 == 0
            let title = randomText(&rng, length: 0...40, accents: accents)
            let notes = rng.chance(0.5) ? randomText(&rng, length: 0...20, accents: accents) : nil
            let text = title + (notes ?? "")
            let words = (0..<rng.int(2...3)).map { _ in
                rng.chance(0.6) && text.count > 2
                    ? String(text.dropFirst(rng.int(0...(text.count - 1))).prefix(rng.int(1...3))).uppercased()
                    : randomText(&rng, length: 1...2, accents: rng.chance(0.1))
            }
            guard words.allSatisfy({ !$0.contains(" ") && !$0.isEmpty }) else { continue }
            let expected = words.allSatisfy { definition($0, title: title, notes: notes) }
            #expect(WordSearch(words).matches(item(title, notes)) == expected, "\(words) in \(title) / \(notes ?? "-")")
        }
    }

    @Test("several words must all occur, each in the title or the notes")
    func everyWordMustOccur() {
        let item = item("Buy MILK and bread", "Ask at the Café")
        #expect(WordSearch(["milk", "cafe"]).matches(item))
        #expect(WordSearch(["BREAD", "ask"]).matches(item))
        #expect(!WordSearch(["milk", "cheese"]).matches(item))
        #expect(!WordSearch(["milkand"]).matches(item))
    }
}
