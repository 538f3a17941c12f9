/// Words looked for in a task's title and notes, ignoring case and accents (Spec/cli.md,
/// "Listing"): a task matches when each word occurs, folded, in its folded title or notes.
package struct WordSearch: Sendable {
    /// Each word, folded.
    let words: [String]
    /// The ASCII words, compared with ASCII text in place; nil when some word is not ASCII
    /// (it cannot occur in ASCII text). Their bytes, held by `asciiOwner`, are read through
    /// a plain pointer, with no reference counting for each task.
    nonisolated(unsafe) private let ascii: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>?
    private let asciiOwner: ASCIIWords?

    package init(_ words: [String]) {
        self.words = words.map(TextFolding.folded)
        asciiOwner = self.words.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } } ? ASCIIWords(self.words) : nil
        ascii = asciiOwner?.words
    }

    package var isEmpty: Bool { words.isEmpty }

    package func matches(_ task: TaskItem) -> Bool {
        var (title, notes) = (task.title, task.notes ?? "")
        return title.withUTF8 { t in notes.withUTF8 { n in matches(title: t, notes: task.notes == nil ? nil : n) } }
    }

    package func matches(_ task: borrowing SavedTask) -> Bool { matches(title: task.title, notes: task.notes) }

    /// Whether every word occurs in `title` or in `notes`.
    func matches(title: UnsafeBufferPointer<UInt8>, notes: UnsafeBufferPointer<UInt8>?) -> Bool {
        guard Self.isASCII(title) && (notes.map(Self.isASCII) ?? true) else {
            let text = TextFolding.folded(String(decoding: title, as: UTF8.self) + " " + (notes.map { String(decoding: $0, as: UTF8.self) } ?? ""))
            return words.allSatisfy(text.contains)
        }
        // Fast path: ASCII text folds to its lowercase bytes, so it is compared in place.
        guard let ascii else { return false }
        for word in ascii {
            guard Self.containsLowercased(title, word) || (notes.map { Self.containsLowercased($0, word) } ?? false) else {
                return false
            }
        }
        return true
    }

    /// The bytes of ASCII words, held where reading them takes no reference counting (the
    /// search reads them once for each task).
    private final class ASCIIWords: @unchecked Sendable {
        /// Each word's bytes, in memory this object owns and never changes.
        let words: UnsafeBufferPointer<UnsafeBufferPointer<UInt8>>

        init(_ words: [String]) {
            let all = UnsafeMutableBufferPointer<UnsafeBufferPointer<UInt8>>.allocate(capacity: words.count)
            for (i, w) in words.enumerated() {
                let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: w.utf8.count)
                _ = bytes.initialize(from: w.utf8)
                all[i] = UnsafeBufferPointer(bytes)
            }
            self.words = UnsafeBufferPointer(all)
        }

        deinit {
            for w in words { w.deallocate() }
            words.deallocate()
        }
    }

    /// Whether every byte is below 0x80, read eight at a time (the last eight overlapping
    /// those before).
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let n = bytes.count
        guard n >= 8 else { return !bytes.contains { $0 >= 0x80 } }
        let raw = UnsafeRawPointer(base)
        var any = raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        var i = 0
        while i + 8 < n {
            any |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// Whether `needle` (lowercase) occurs in `haystack` once its capital letters are lowered.
    /// Eight bytes are looked at together for starts: those equal to the needle's first byte
    /// with bit 0x20 set on both sides (a superset of the starts, each then compared in full).
    static func containsLowercased(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        let (h, n) = (haystack.count, needle.count)
        guard n > 0 else { return true }
        guard n <= h, let hay = haystack.baseAddress, let word = needle.baseAddress else { return false }
        guard h >= 8 else { return (0...(h - n)).contains { matches(hay + $0, word, n) } }
        let last = h - n
        let lead = UInt64(word[0] | 0x20) &* 0x0101_0101_0101_0101
        var block = 0
        while block <= last {
            // The next eight bytes, or the last eight when fewer are left (those before
            // `block`, already looked at, are masked off).
            let base = min(block, h - 8)
            let v = (UnsafeRawPointer(hay + base).loadUnaligned(as: UInt64.self) | 0x2020_2020_2020_2020) ^ lead
            var starts = (v &- 0x0101_0101_0101_0101) & ~v & 0x8080_8080_8080_8080  // its zero bytes, little-endian
            if base < block { starts &= ~0 &<< UInt64(8 * (block - base)) }
            while starts != 0 {
                let start = base + starts.trailingZeroBitCount / 8
                starts &= starts &- 1
                guard start <= last else { break }
                if matches(hay + start, word, n) { return true }
            }
            block = base + 8
        }
        return false
    }

    /// Whether the `n` bytes at `text`, their capital letters lowered, are those of `word`.
    @inline(__always)
    private static func matches(_ text: UnsafePointer<UInt8>, _ word: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var i = 0
        while i < n && lowered(text[i]) == word[i] { i += 1 }
        return i == n
    }

    @inline(__always) static func lowered(_ b: UInt8) -> UInt8 { b &- 0x41 < 26 ? b | 0x20 : b }
}

/// Text folded for matching: lowercase, with accents taken off Latin letters (precomposed
/// letters of Latin-1 and Latin Extended-A, and combining marks after any letter).
package enum TextFolding {
    private static let table: [Character: String] = {
        let groups = [
            ("a", "àáâãäåāăą"), ("c", "çćĉċč"), ("d", "ďđ"), ("e", "èéêëēĕėęě"), ("g", "ĝğġģ"), ("h", "ĥħ"),
            ("i", "ìíîïĩīĭįı"), ("j", "ĵ"), ("k", "ķ"), ("l", "ĺļľŀł"), ("n", "ñńņňŉ"), ("o", "òóôõöøōŏő"),
            ("r", "ŕŗř"), ("s", "śŝşšß"), ("t", "ţťŧ"), ("u", "ùúûüũūŭůűų"), ("w", "ŵ"), ("y", "ýÿŷ"), ("z", "źżž"),
            ("ae", "æ"), ("oe", "œ"),
        ]
        var out: [Character: String] = [:]
        for (base, accented) in groups { for c in accented { out[c] = base } }
        return out
    }()

    package static func folded(_ s: String) -> String {
        // ASCII folds to its lowercase, without the table.
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return s.lowercased() }
        var out = ""
        for c in s.lowercased() {
            if let base = table[c] {
                out += base
            } else if c.unicodeScalars.count > 1, let first = c.unicodeScalars.first {
                // A letter followed by combining marks: the letter alone (folded again).
                out += table[Character(first)] ?? String(first)
            } else {
                out.append(c)
            }
        }
        return out
    }
}
