/// Percent-decoding of names a server lists. Any character may come back, control
/// characters included: the folder protocol notes a name it cannot use, and escapes it
/// when it prints it. Only bytes that are not UTF-8 make a name unreadable.
enum PercentDecoding {
    /// `text` decoded; nil when a `%` is not followed by two hex digits, or the bytes are not
    /// UTF-8. With `plusIsSpace`, `+` stands for a space (form encoding, as S3 answers).
    static func text(_ text: some StringProtocol, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            switch byte {
            case UInt8(ascii: "+") where plusIsSpace: bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                rest = rest.dropFirst(2)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
