/// The entries of a netrc file: `machine HOST login USER password SECRET`, and a `default`
/// entry. Tokens are separated by white space; a token may be double-quoted, with `\`
/// escaping the next character. `account` values are skipped and `macdef` bodies too (up to
/// a blank line). Anything else is refused with the word and line it found.
struct Netrc {
    struct Entry: Equatable {
        /// Nil for the `default` entry.
        var machine: String?
        var login: String?
        var password: String?
    }

    /// The largest netrc file read.
    static let fileLimit = 64 << 10

    private(set) var entries: [Entry] = []

    init(_ bytes: [UInt8], path: String) throws(WebDAVCredentials.Unusable) {
        var tokens = Tokens(bytes: bytes)
        while let (word, line) = tokens.next() {
            func value() throws(WebDAVCredentials.Unusable) -> String {
                guard let (v, _) = tokens.next() else { throw .init(description: "the netrc file \(path) ends after '\(word)' on line \(line)") }
                return v
            }
            switch word {
            case "machine": entries.append(Entry(machine: try value().lowercased()))
            case "default": entries.append(Entry(machine: nil))
            case "login", "password", "account":
                guard !entries.isEmpty else { throw .init(description: "the netrc file \(path) has '\(word)' before any machine, on line \(line)") }
                let v = try value()
                if word == "login" { entries[entries.count - 1].login = v }
                if word == "password" { entries[entries.count - 1].password = v }
            case "macdef":
                _ = try value()
                tokens.skipPastBlankLine()
            default:
                throw .init(description: "the netrc file \(path) has an unknown word on line \(line); it holds machine, login and password entries")
            }
        }
    }

    /// The login and password for `host`: the first entry naming it (with login `user` when
    /// given), else the `default` entry; only entries with a password count.
    func login(host: String, user: String?) -> (login: String, password: String)? {
        let host = host.lowercased()
        for wanted in [host, nil] as [String?] {
            for e in entries where e.machine == wanted {
                guard let password = e.password else { continue }
                if let user, let login = e.login, login != user { continue }
                guard let login = user ?? e.login else { continue }
                return (login, password)
            }
        }
        return nil
    }

    /// A cursor over the file's tokens, counting lines.
    private struct Tokens {
        let bytes: [UInt8]
        var i = 0
        var line = 1

        static func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 10 || b == 13 }

        mutating func next() -> (String, Int)? {
            while i < bytes.count, Self.isSpace(bytes[i]) {
                if bytes[i] == 10 { line += 1 }
                i += 1
            }
            guard i < bytes.count else { return nil }
            let quoted = bytes[i] == UInt8(ascii: "\"")
            if quoted { i += 1 }
            var token: [UInt8] = []
            while i < bytes.count {
                var b = bytes[i]
                if quoted ? b == UInt8(ascii: "\"") : Self.isSpace(b) { break }
                if b == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    i += 1
                    b = bytes[i]
                }
                if b == 10 { line += 1 }
                token.append(b)
                i += 1
            }
            if quoted && i < bytes.count { i += 1 }
            return (String(decoding: token, as: UTF8.self), line)
        }

        /// Skips a macro's body: everything up to and including the next empty line.
        mutating func skipPastBlankLine() {
            while i < bytes.count {
                if bytes[i] == 10 {
                    line += 1
                    if i + 1 < bytes.count, bytes[i + 1] == 10 || (bytes[i + 1] == 13 && i + 2 < bytes.count && bytes[i + 2] == 10) {
                        i += 1
                        return
                    }
                }
                i += 1
            }
        }
    }
}
