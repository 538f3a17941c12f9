#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text from outside (file names, task titles, a peer's messages) made safe to print: every
/// control character is written as an escape such as `\x1b` or `\u{202e}`, so no byte a
/// terminal would act on (a colour, a title change, reordered text) reaches it.
enum TerminalText {
    /// The width of the terminal standard output is, from `COLUMNS` or the terminal itself;
    /// nil when it is not a terminal (tables are then never cut).
    static let columns: Int? = {
        guard Context.standardOutputIsTerminal else { return nil }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let n = Int(text), n > 0 { return n }
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }()

    /// `text` with its control characters escaped; newlines kept when `keepingNewlines`.
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        // Plain printable ASCII, the common case, is returned as it is.
        func printable(_ bytes: some Sequence<UInt8>) -> Bool { !bytes.contains { $0 < 0x20 || $0 >= 0x7f } }
        guard !(text.utf8.withContiguousStorageIfAvailable(printable) ?? printable(text.utf8)) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if !isControl(scalar) || (keepingNewlines && scalar == "\n") {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
            }
        }
        return out
    }

    /// C0 and C1 controls, DEL, and the invisible marks that reorder the text around them
    /// (bidirectional embeddings, overrides and isolates).
    static func isControl(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0..<0x20, 0x7f...0x9f, 0x202a...0x202e, 0x2066...0x2069: true
        default: false
        }
    }
}
