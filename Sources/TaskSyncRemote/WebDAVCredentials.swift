#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore

/// The user name and password sent to a WebDAV server (HTTP Basic). The password never comes
/// from a process argument or the URL: other users can see those.
package struct WebDAVCredentials: Sendable, Equatable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Why no credentials could be had from a source that was there.
    package struct Unusable: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// The variable of the environment that may hold the password.
    package static let environmentVariable = "TASKLOG_WEBDAV_PASSWORD"
    /// The most a password file may hold: a password is a line, not a file.
    package static let passwordFileLimit = 4096

    /// The credentials for `location` from the first source that has a password: the first
    /// line of `passwordFile`, then ``environmentVariable``, then the `netrc` file's entry for
    /// the host (with the URL's user name when it gives one). Nil when none has one.
    /// - Parameter netrc: the netrc file's path; by default `$HOME/.netrc`.
    package static func find(
        for location: WebDAVLocation, passwordFile: String?, netrc: String? = defaultNetrcPath()
    ) throws(Unusable) -> WebDAVCredentials? {
        if let passwordFile {
            return try named(location, password: firstLine(ofFile: passwordFile), from: "the password file \(passwordFile)")
        }
        if let value = getenv(environmentVariable), value.pointee != 0 {
            return try named(location, password: String(cString: value), from: "the environment")
        }
        guard let netrc, let bytes = try BoundedFile.contents(netrc, limit: Netrc.fileLimit, what: "the netrc file", missingIsNil: true) else { return nil }
        let entries = try Netrc(bytes, path: netrc)
        guard let found = entries.login(host: location.host, user: location.user) else { return nil }
        return WebDAVCredentials(user: found.login, password: found.password)
    }

    /// `$HOME/.netrc`; nil without a home.
    package static func defaultNetrcPath() -> String? {
        guard let home = getenv("HOME"), home.pointee != 0 else { return nil }
        return String(cString: home) + "/.netrc"
    }

    /// The first line of a small file holding a password, without its line end.
    package static func firstLine(ofFile path: String) throws(Unusable) -> String {
        let bytes = try BoundedFile.contents(path, limit: passwordFileLimit, what: "the password file", missingIsNil: false) ?? []
        let line = bytes.prefix { $0 != 10 && $0 != 13 }
        guard !line.isEmpty else { throw Unusable(description: "the password file \(path) has an empty first line; put the password there") }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw Unusable(description: "the password file \(path) is not UTF-8 text; put the password on its first line")
        }
        return text
    }

    /// The URL's user with `password`; a password needs a user name to go with it.
    private static func named(_ location: WebDAVLocation, password: String, from source: String) throws(Unusable) -> WebDAVCredentials {
        guard let user = location.user else {
            throw Unusable(description: "\(source) gives a password but \(location) names no user; write webdav://USER@HOST/PATH/")
        }
        return WebDAVCredentials(user: user, password: password)
    }
}

/// Small files read whole within a bound: a password file and `~/.netrc`.
enum BoundedFile {
    /// The bytes of `path`, refused past `limit` bytes; nil when `missingIsNil` and it is not there.
    static func contents(_ path: String, limit: Int, what: String, missingIsNil: Bool) throws(WebDAVCredentials.Unusable) -> [UInt8]? {
        // Non-blocking, so a FIFO put in its place cannot hang the reader.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT && missingIsNil { return nil }
            throw .init(description: "cannot open \(what) \(path): \(systemErrorText(errno))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw .init(description: "\(what) \(path) is not a regular file")
        }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: limit + 1)
        while out.count <= limit {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, limit + 1 - out.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .init(description: "cannot read \(what) \(path): \(systemErrorText(errno))") }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
        throw .init(description: "\(what) \(path) is longer than \(limit) bytes; check that it is the right file")
    }
}
