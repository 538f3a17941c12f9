/// Replaces some ASCII characters of a string with strings, working on its UTF-8 bytes. This
/// is safe because UTF-8 never uses an ASCII byte inside a multi-byte character.
package struct ASCIIEscaper: Sendable {
    private var replacements: [[UInt8]?] = Array(repeating: nil, count: 128)

    /// `map` takes ASCII characters to what replaces them ("" drops one).
    package init(_ map: [Unicode.Scalar: String]) {
        for (scalar, text) in map {
            precondition(scalar.isASCII, "ASCIIEscaper replaces ASCII characters only")
            replacements[Int(scalar.value)] = Array(text.utf8)
        }
    }

    /// `s` with each mapped character replaced; `s` itself when none occurs.
    package func callAsFunction(_ s: String) -> String {
        let utf8 = s.utf8
        guard utf8.contains(where: { $0 < 128 && replacements[Int($0)] != nil }) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            if byte < 128, let r = replacements[Int(byte)] { out += r } else { out.append(byte) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
