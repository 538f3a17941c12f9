/// Words looked for in a task's title and notes, ignoring case and accents (Spec/cli.md,
/// "Listing"): a task matches when each word occurs, folded, in its folded title or notes.
package struct WordSearch: Sendable {
    /// Each word, folded.
    let words: [String]
    /// Each word, folded, as UTF-8; nil for a word with other than ASCII bytes.
    let asciiWords: [[UInt8]?]

    package init(_ words: [String]) {
        self.words = words.map(TextFolding.folded)
        asciiWords = self.words.map { w in w.utf8.allSatisfy { $0 < 0x80 } ? Array(w.utf8) : nil }
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
        // Fast path: ASCII text folds to its lowercase bytes, so it is compared in place. A
        // folded word that is not ASCII cannot occur in it.
        for word in asciiWords {
            guard let word else { return false }
            let found = word.withUnsafeBufferPointer { w in
                Self.containsLowercased(title, w) || (notes.map { Self.containsLowercased($0, w) } ?? false)
            }
            if !found { return false }
        }
        return true
    }

    /// Whether every byte is below 0x80, read eight at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            i += 8
        }
        while i < bytes.count {
            if base[i] >= 0x80 { return false }
            i += 1
        }
        return true
    }

    /// Whether `needle` (lowercase) occurs in `haystack` once its capital letters are lowered.
    /// Eight bytes are looked at together for starts: those equal to the needle's first byte
    /// with bit 0x20 set on both sides (a superset of the starts, each then compared in full).
    static func containsLowercased(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        let (h, n) = (haystack.count, needle.count)
        guard n <= h, let hay = haystack.baseAddress, let word = needle.baseAddress else { return n == 0 }
        let last = h - n
        let lead = UInt64(word[0] | 0x20) &* 0x0101_0101_0101_0101
        var block = 0
        while block <= last {
            // Eight bytes from `base`: the next eight, or the last eight when fewer are left
            // (those before `block` already looked at are masked off).
            let base = block + 8 <= h || h < 8 ? block : h - 8
            var starts: UInt64 = 0x8080_8080_8080_8080  // a haystack under 8 bytes: try each start
            if h >= 8 {
                let v = (UnsafeRawPointer(hay + base).loadUnaligned(as: UInt64.self) | 0x2020_2020_2020_2020) ^ lead
                starts = (v &- 0x0101_0101_0101_0101) & ~v & 0x8080_8080_8080_8080  // its zero bytes, little-endian
                starts &= ~0 &<< UInt64(8 * (block - base))
            }
            while starts != 0 {
                let start = base + starts.trailingZeroBitCount / 8
                starts &= starts - 1
                guard start <= last else { break }
                var i = 0
                while i < n && lowered(hay[start + i]) == word[i] { i += 1 }
                if i == n { return true }
            }
            block = base + 8
        }
        return false
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
