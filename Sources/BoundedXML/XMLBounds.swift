/// The most a request body's XML may hold, checked by a linear scan before libxml2 reads it:
/// libxml2 compares each attribute of an element with every earlier one, so 80,000 attributes
/// on one element cost it minutes.
package struct XMLBounds {
    /// Elements in the whole document.
    package var elements = Int.max
    /// Attributes (namespace declarations included) on one element.
    package var attributesPerElement = 64
    /// Elements open at once.
    package var depth = 64

    package init(elements: Int = .max, attributesPerElement: Int = 64, depth: Int = 64) {
        self.elements = elements
        self.attributesPerElement = attributesPerElement
        self.depth = depth
    }

    /// The bounds of a request body to the CalDAV server (Spec/interop.md).
    package static let request = XMLBounds(elements: 20_000)

    /// Throws when `bytes` hold more than the bounds allow. Comments, processing instructions,
    /// CDATA sections and declarations are skipped; quoted values may hold `>` and `=`.
    package func check(_ bytes: [UInt8]) throws(XMLTree.ParseError) {
        var scan = Scan(bytes: bytes)
        var elements = 0
        var open = 0
        while let kind = scan.nextMarkup() {
            switch kind {
            case .end:
                open -= 1
            case .start(let attributes, let empty):
                elements += 1
                if !empty { open += 1 }
                guard attributes <= attributesPerElement else { throw refusal("an element has more than \(attributesPerElement) attributes") }
                guard elements <= self.elements else { throw refusal("it has more than \(self.elements) elements") }
                guard open <= depth else { throw refusal("its elements nest deeper than \(depth)") }
            }
        }
    }

    private func refusal(_ what: String) -> XMLTree.ParseError {
        XMLTree.ParseError(description: "the request body is more XML than this server reads: \(what)", isOverBound: true)
    }

    /// A cursor over the bytes that stops at each tag.
    private struct Scan {
        enum Markup {
            case start(attributes: Int, empty: Bool)
            case end
        }

        let bytes: [UInt8]
        var i = 0

        /// The next start or end tag, skipping text and other markup; nil at the end.
        mutating func nextMarkup() -> Markup? {
            while i < bytes.count {
                guard bytes[i] == UInt8(ascii: "<") else {
                    i += 1
                    continue
                }
                i += 1
                if starts("!--") {
                    skip(past: "-->")
                } else if starts("![CDATA[") {
                    skip(past: "]]>")
                } else if starts("?") {
                    skip(past: "?>")
                } else if starts("!") {
                    _ = tag()  // a declaration: quotes and brackets kept together
                } else if starts("/") {
                    _ = tag()
                    return .end
                } else {
                    let (attributes, empty) = tag()
                    return .start(attributes: attributes, empty: empty)
                }
            }
            return nil
        }

        private func starts(_ text: String) -> Bool {
            let t = Array(text.utf8)
            return bytes.count - i >= t.count && bytes[i..<i + t.count].elementsEqual(t)
        }

        private mutating func skip(past text: String) {
            while i < bytes.count && !starts(text) { i += 1 }
            i = min(bytes.count, i + text.utf8.count)
        }

        /// Reads to the `>` that ends a tag: the `=` signs outside quotes (its attributes),
        /// and whether it ends with `/>`.
        private mutating func tag() -> (attributes: Int, empty: Bool) {
            var quote: UInt8? = nil
            var brackets = 0
            var attributes = 0
            var last: UInt8 = 0
            while i < bytes.count {
                let b = bytes[i]
                i += 1
                if let q = quote {
                    if b == q { quote = nil }
                    continue
                }
                switch b {
                case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = b
                case UInt8(ascii: "="): attributes += 1
                case UInt8(ascii: "["): brackets += 1
                case UInt8(ascii: "]"): brackets -= 1
                case UInt8(ascii: ">") where brackets <= 0: return (attributes, last == UInt8(ascii: "/"))
                default: break
                }
                last = b
            }
            return (attributes, false)
        }
    }
}
