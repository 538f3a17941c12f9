/// A request target (`/path?key=value&…`) as the client sent it, percent-decoded strictly.
///
/// Decoding is done here rather than by the HTTP library, which cuts a decoded `%00` short
/// (so `/v1/tasks/a%00b` would name task `a`). A target whose decoded bytes hold a control
/// character or are not UTF-8 is refused whole.
package struct RequestTarget: Equatable {
    var path: String
    var query: [String: String]

    /// Why a target was refused (the 400 answer's message).
    package struct Refusal: Error, Equatable {
        var message: String
    }

    init(raw: String) throws(Refusal) {
        let parts = Array(raw.utf8).split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        path = try Self.decode(parts.first ?? [], plusIsSpace: false)
        query = [:]
        guard parts.count > 1 else { return }
        for pair in parts[1].split(separator: UInt8(ascii: "&")) {
            let kv = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(kv[0], plusIsSpace: true)
            query[key] = try Self.decode(kv.count > 1 ? kv[1] : [], plusIsSpace: true)
        }
    }

    /// Percent-decodes `text`, refusing a broken escape, a control character or bytes that are
    /// not UTF-8.
    package static func decode(_ text: some Collection<UInt8>, plusIsSpace: Bool) throws(Refusal) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var i = text.startIndex
        while i != text.endIndex {
            var byte = text[i]
            i = text.index(after: i)
            if byte == UInt8(ascii: "%") {
                guard i != text.endIndex, let high = hexValue(text[i]), text.index(after: i) != text.endIndex,
                    let low = hexValue(text[text.index(after: i)])
                else { throw Refusal(message: "the request target has a '%' not followed by two hex digits") }
                byte = high << 4 | low
                i = text.index(i, offsetBy: 2)
            } else if plusIsSpace && byte == UInt8(ascii: "+") {
                byte = UInt8(ascii: " ")
            }
            guard byte >= 0x20 && byte != 0x7f else {
                throw Refusal(message: "the request target holds a control character (such as %00); ids and values never do")
            }
            bytes.append(byte)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw Refusal(message: "the request target is not UTF-8 once percent-decoded")
        }
        return decoded
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
