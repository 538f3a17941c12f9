#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TaskStore

/// An AWS shared config or credentials file (`~/.aws/config`, `~/.aws/credentials`): INI
/// sections of `name = value` lines, read within bounds. Values are never echoed in errors.
struct S3ConfigFile {
    /// The most bytes read from one file; a larger one is refused.
    static let largestFile = 256 << 10
    /// The most bytes in one line.
    static let longestLine = 8 << 10

    /// Each profile's settings, by profile name; names are lowercased. A nested setting
    /// (`s3 =` followed by indented lines) is named `s3.NAME`.
    var profiles: [String: [String: String]] = [:]

    /// Reads the file at `path`; an absent file has no profiles. In the config file
    /// (`isConfig`) a profile's section is `[profile NAME]`, except `[default]`.
    /// - Throws: when the file cannot be read, is not a regular file, or passes the bounds.
    static func read(_ path: String, isConfig: Bool) throws(S3SettingsError) -> S3ConfigFile {
        guard let bytes = try readBounded(path) else { return S3ConfigFile() }
        return try parse(bytes, isConfig: isConfig, path: path)
    }

    static func parse(_ bytes: [UInt8], isConfig: Bool, path: String) throws(S3SettingsError) -> S3ConfigFile {
        var file = S3ConfigFile()
        var section: String?
        var nested: String?
        for (number, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            guard raw.count <= longestLine else { throw S3SettingsError("line \(number + 1) of \(path) is longer than \(longestLine) bytes") }
            let line = String(decoding: raw, as: UTF8.self)
            let indented = line.first == " " || line.first == "\t"
            let text = line.trimmingCharacters(in: " \t\r")
            if text.isEmpty || text.hasPrefix("#") || text.hasPrefix(";") { continue }
            if text.hasPrefix("[") {
                guard text.hasSuffix("]") else { throw S3SettingsError("line \(number + 1) of \(path) opens a section it does not close") }
                section = profileName(String(text.dropFirst().dropLast()), isConfig: isConfig)
                nested = nil
                continue
            }
            guard let equals = text.firstIndex(of: "=") else { throw S3SettingsError("line \(number + 1) of \(path) is not 'name = value'") }
            let name = text[..<equals].trimmingCharacters(in: " \t").lowercased()
            let value = text[text.index(after: equals)...].trimmingCharacters(in: " \t")
            guard let profile = section else { continue }
            if indented, let parent = nested {
                file.profiles[profile, default: [:]][parent + "." + name] = value
            } else {
                nested = value.isEmpty ? name : nil
                file.profiles[profile, default: [:]][name] = value
            }
        }
        return file
    }

    /// The profile a section header names; nil for a section that is not a profile (in the
    /// config file: `[sso-session x]`, `[services x]`).
    static func profileName(_ header: String, isConfig: Bool) -> String? {
        let words = header.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard isConfig else { return header.trimmingCharacters(in: " \t") }
        if words.count == 1, words[0] == "default" { return "default" }
        guard words.count == 2, words[0] == "profile" else { return nil }
        return String(words[1])
    }

    /// The bytes of the regular file at `path`, at most ``largestFile``; nil when there is
    /// no such file. A FIFO or a device is refused without blocking on it.
    static func readBounded(_ path: String) throws(S3SettingsError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw S3SettingsError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { throw S3SettingsError("\(path) is not a regular file") }
        guard st.st_size <= largestFile else { throw S3SettingsError("\(path) is larger than \(largestFile >> 10) KiB") }
        var bytes = [UInt8](repeating: 0, count: largestFile + 1)
        var count = 0
        while count <= largestFile {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, largestFile + 1 - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw S3SettingsError("cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= largestFile else { throw S3SettingsError("\(path) is larger than \(largestFile >> 10) KiB") }
        return Array(bytes[..<count])
    }
}
