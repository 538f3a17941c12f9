import Foundation
import Testing
@_spi(Engine) import TaskSyncRemote

/// `webdav://` URLs, and where the password comes from. Serialized: one test sets the
/// password's environment variable.
@Suite("WebDAV URLs and credentials", .serialized)
struct WebDAVLocationTests {
    let dir = TemporaryDirectory()

    @Test("webdav:// and webdavs:// read as http and https, with the user and each path segment encoded")
    func parsesURLs() throws {
        let plain = try WebDAVLocation.parse("webdav://me@Example.org:8080/dav/My Tasks")
        #expect(plain.baseURL == "http://example.org:8080/dav/My%20Tasks/" && plain.user == "me" && plain.host == "example.org")
        #expect(plain.description == "webdav://me@example.org:8080/dav/My%20Tasks/")
        let tls = try WebDAVLocation.parse("webdavs://a%40b@[::1]/x%2Dy/")
        #expect(tls.baseURL == "https://[::1]/x-y/" && tls.user == "a@b" && tls.host == "[::1]")
        #expect(try WebDAVLocation.parse("webdav://h/").baseURL == "http://h/")
        #expect(plain.url(of: "tasklog-x/a b#.tlog") == "http://example.org:8080/dav/My%20Tasks/tasklog-x/a%20b%23.tlog")
    }

    @Test("malformed URLs and passwords in URLs are refused with one line", arguments: [
        "http://h/x/", "webdav://me:secret@h/x/", "webdav:///x/", "webdav://h:0/x/", "webdav://h:99999/", "webdav://h:8a/",
        "webdav://h/a/../b/", "webdav://h/%zz/", "webdav://h/x?y", "webdav://h/x#y", "webdav://h/a b\n/", "webdav://h^/x/",
    ])
    func refusesMalformedURLs(_ text: String) {
        let error = #expect(throws: WebDAVLocation.Invalid.self) { try WebDAVLocation.parse(text) }
        #expect(error?.description.contains("\n") == false)
        if text.contains("secret") { #expect(error?.description.contains("holds a password") == true) }
    }

    @Test("the password comes from the file's first line, else the environment, else netrc; never from the URL")
    func findsThePassword() throws {
        let location = try WebDAVLocation.parse("webdav://me@dav.example/x/")
        let netrc = dir.sub("netrc")
        try "machine dav.example login me password fromnetrc\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        try "fromfile\nsecond line\n".write(toFile: dir.sub("pw"), atomically: true, encoding: .utf8)
        setenv(WebDAVCredentials.environmentVariable, "fromenv", 1)
        defer { unsetenv(WebDAVCredentials.environmentVariable) }
        #expect(try WebDAVCredentials.find(for: location, passwordFile: dir.sub("pw"), netrc: netrc) == .init(user: "me", password: "fromfile"))
        #expect(try WebDAVCredentials.find(for: location, passwordFile: nil, netrc: netrc) == .init(user: "me", password: "fromenv"))
        unsetenv(WebDAVCredentials.environmentVariable)
        #expect(try WebDAVCredentials.find(for: location, passwordFile: nil, netrc: netrc) == .init(user: "me", password: "fromnetrc"))
        #expect(try WebDAVCredentials.find(for: location, passwordFile: nil, netrc: dir.sub("none")) == nil)
        let noUser = try WebDAVLocation.parse("webdav://dav.example/x/")
        #expect(throws: WebDAVCredentials.Unusable.self) { try WebDAVCredentials.find(for: noUser, passwordFile: dir.sub("pw"), netrc: nil) }
    }

    @Test("a password file that is empty, too long, missing or a FIFO is refused with one line")
    func refusesBadPasswordFiles() throws {
        try "\nlater".write(toFile: dir.sub("empty"), atomically: true, encoding: .utf8)
        try String(repeating: "x", count: 5000).write(toFile: dir.sub("long"), atomically: true, encoding: .utf8)
        mkfifo(dir.sub("fifo"), 0o600)
        for name in ["empty", "long", "missing", "fifo"] {
            let error = #expect(throws: WebDAVCredentials.Unusable.self) { try WebDAVCredentials.firstLine(ofFile: dir.sub(name)) }
            #expect(error?.description.contains("\n") == false && error?.description.contains(dir.sub(name)) == true, "\(name)")
        }
    }

    @Test("netrc: the host's entry with the URL's user, else its first, else default, never another login's; quotes, macdef and account are read")
    func readsNetrc() throws {
        let text = """
            macdef init
            machine dav.example login evil password wrong

            machine other login x password y
            machine DAV.example login ann account a1 password "p w\\"1"
            machine dav.example login bob password pb
            default login anon password pd
            """
        let path = dir.sub("netrc")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        func find(_ url: String) throws -> WebDAVCredentials? {
            try WebDAVCredentials.find(for: WebDAVLocation.parse(url), passwordFile: nil, netrc: path)
        }
        #expect(try find("webdav://dav.example/x/") == .init(user: "ann", password: "p w\"1"))
        #expect(try find("webdav://bob@dav.example/x/") == .init(user: "bob", password: "pb"))
        #expect(try find("webdav://zed@dav.example/x/") == nil)
        #expect(try find("webdav://elsewhere:81/x/") == .init(user: "anon", password: "pd"))
    }

    @Test("a hostile netrc is refused with one line: unknown words, a dangling keyword, past 64 KiB")
    func refusesHostileNetrc() throws {
        let location = try WebDAVLocation.parse("webdav://h/x/")
        for (i, text) in ["machine h login", "login x", "machine h passwd y", String(repeating: "machine h ", count: 7000)].enumerated() {
            try text.write(toFile: dir.sub("n\(i)"), atomically: true, encoding: .utf8)
            let error = #expect(throws: WebDAVCredentials.Unusable.self) { try WebDAVCredentials.find(for: location, passwordFile: nil, netrc: dir.sub("n\(i)")) }
            #expect(error?.description.contains("\n") == false, "\(text.prefix(20))")
        }
    }
}
