/// The rules for a device's name (Spec/crdt.md, "Device names"): at most ``maxBytes`` bytes
/// of UTF-8 and no control character. A name set here is checked against them; a name read
/// from another device's log is brought within them, since anyone may have written it.
public enum DeviceName {
    /// The most bytes of UTF-8 a name may have.
    public static let maxBytes = 64

    /// Why a name cannot be set.
    public enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case tooLong(bytes: Int)
        case controlCharacter(UInt32)

        public var description: String {
            switch self {
            case .empty: "a device name must not be empty"
            case .tooLong(let n): "a device name is at most \(DeviceName.maxBytes) bytes of UTF-8; this one has \(n)"
            case .controlCharacter(let v):
                "a device name must not hold control characters; this one holds U+\(String(v, radix: 16, uppercase: true))"
            }
        }
    }

    /// `name` if it may be set as it is.
    public static func checked(_ name: String) throws(Invalid) -> String {
        if name.unicodeScalars.allSatisfy({ $0 == " " }) { throw .empty }
        if let c = name.unicodeScalars.first(where: isControl) { throw .controlCharacter(c.value) }
        guard name.utf8.count <= maxBytes else { throw .tooLong(bytes: name.utf8.count) }
        return name
    }

    /// `name` within the rules: each control character replaced by U+FFFD, then cut to at most
    /// ``maxBytes`` bytes between two Unicode scalars. A name that keeps the rules is unchanged.
    public static func normalised(_ name: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            let kept = isControl(scalar) ? Unicode.Scalar(0xFFFD)! : scalar
            let size = UTF8.width(kept)
            guard bytes + size <= maxBytes else { break }
            out.append(kept)
            bytes += size
        }
        return String(out)
    }

    /// C0 and C1 controls, DEL, and the invisible marks that reorder the text around them
    /// (bidirectional embeddings, overrides and isolates): what a terminal or a label acts on.
    public static func isControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0..<0x20, 0x7f...0x9f, 0x202a...0x202e, 0x2066...0x2069: true
        default: false
        }
    }
}
