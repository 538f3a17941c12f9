import Foundation
import Testing
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP
@_spi(Engine) import TaskSyncRemote

@Suite("WebDAV storage on rclone serve webdav", .webDAVServer(.rclone))
struct RcloneWebDAVStorageTests {
    var check: WebDAVStorageChecks { get throws { try WebDAVStorageChecks() } }

    @Test("published files list, read back whole, and go when removed") func roundTrip() throws { try check.roundTrip() }
    @Test("a namespace is a collection made with MKCOL") func namespaces() throws { try check.namespacesAreCollections() }
    @Test("names needing percent-encoding round-trip") func encodedNames() throws { try check.encodedNames() }
    @Test("hrefs outside the collection in a real answer are ignored") func foreignHrefs() throws { try check.foreignHrefsIgnored() }
    @Test("a wrong password is one line saying the server refused it") func wrongPassword() throws { try check.wrongPassword() }
    @Test("a missing folder is folderMissing and is not created") func missingFolder() throws { try check.missingFolder() }
    @Test("a server that is down is unreachable") func serverDown() throws { try check.serverDown() }
    @Test("an object larger than largest is refused") func largeObject() throws { try check.largeObjectRefused() }
    @Test("createIfAbsent never replaces an object") func createIfAbsent() throws { try check.createIfAbsentKeepsTheFirst() }
    @Test("the change marker changes when marked, and is shared, unlisted and stable otherwise") func marker() throws { try check.markerFollowsChanges() }
    @Test("removing a locked object says it is locked") func locked() throws { try check.lockedObject() }
}

@Suite("WebDAV storage on Apache mod_dav", .webDAVServer(.apache))
struct ApacheWebDAVStorageTests {
    var check: WebDAVStorageChecks { get throws { try WebDAVStorageChecks() } }

    @Test("published files list, read back whole, and go when removed") func roundTrip() throws { try check.roundTrip() }
    @Test("a namespace is a collection made with MKCOL") func namespaces() throws { try check.namespacesAreCollections() }
    @Test("names needing percent-encoding round-trip") func encodedNames() throws { try check.encodedNames() }
    @Test("hrefs outside the collection in a real answer are ignored") func foreignHrefs() throws { try check.foreignHrefsIgnored() }
    @Test("a wrong password is one line saying the server refused it") func wrongPassword() throws { try check.wrongPassword() }
    @Test("a missing folder is folderMissing and is not created") func missingFolder() throws { try check.missingFolder() }
    @Test("a server that is down is unreachable") func serverDown() throws { try check.serverDown() }
    @Test("an object larger than largest is refused") func largeObject() throws { try check.largeObjectRefused() }
    @Test("createIfAbsent never replaces an object") func createIfAbsent() throws { try check.createIfAbsentKeepsTheFirst() }
    @Test("the change marker changes when marked, and is shared, unlisted and stable otherwise") func marker() throws { try check.markerFollowsChanges() }
    @Test("removing a locked object says it is locked") func locked() throws { try check.lockedObject() }

    @Test("a redirect is not followed and says where it points") func redirect() throws {
        let server = try #require(WebDAVServer.current)
        let moved = WebDAVStorage(try WebDAVLocation.parse("webdav://me@127.0.0.1:\(server.port)/moved/x/"), credentials: nil)
        let error = #expect(throws: SyncError.self) { try moved.list() }
        #expect(error?.description.contains("redirects PROPFIND to http://127.0.0.1:\(server.port)/elsewhere/x/ (302)") == true, "\(String(describing: error))")
    }
}

/// The checks both servers pass, each in a new folder of the suite's server.
struct WebDAVStorageChecks {
    let server: WebDAVServer
    let folder: String
    let storage: WebDAVStorage
    static let namespace = "tasklog-" + String(repeating: "ab", count: 16)

    init() throws {
        server = try #require(WebDAVServer.current, "no WebDAV server was started for this suite")
        folder = try server.newFolder()
        storage = try server.storage(folder)
    }

    func bytes(_ count: Int, _ seed: UInt8 = 1) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    func roundTrip() throws {
        let (epoch, segment) = ("tasklog-epoch-1", Self.namespace + "/seg.tlog")
        try storage.publish(bytes(10), as: epoch)
        try storage.publish(bytes(70_000), as: segment)
        let listed = try storage.list()
        #expect(Set(listed.map { StoredObject(key: $0.key, kind: $0.kind, size: $0.size) }) == [
            StoredObject(key: epoch, kind: .file, size: 10), StoredObject(key: Self.namespace, kind: .folder, size: 0),
            StoredObject(key: segment, kind: .file, size: 70_000),
        ])
        #expect(listed.allSatisfy { !$0.identity.isEmpty }, "size and modification time tell versions apart")
        #expect(try storage.read(segment, largest: 1 << 20) == bytes(70_000))
        #expect(try storage.read(epoch, largest: 4096) == bytes(10))
        try storage.remove([segment, Self.namespace + "/never-there.tlog"])
        #expect(try Set(storage.list().map(\.key)) == [epoch, Self.namespace])
        #expect(try storage.read(segment, largest: 1 << 20) == nil)
        // No temporary object is left behind.
        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: server.data + "/" + folder)
        #expect(!onDisk.contains { $0.contains(".tmp-") }, "\(onDisk)")
    }

    func namespacesAreCollections() throws {
        let other = "tasklog-" + String(repeating: "0f", count: 16)
        try storage.publish(bytes(5), as: other + "/a.tlog")
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: "\(server.data)/\(folder)/\(other)", isDirectory: &isFolder) && isFolder.boolValue)
        // A folder that is not a namespace is listed, not entered.
        #expect(try server.raw("MKCOL", "\(folder)/junk/").status == 201)
        #expect(try server.raw("PUT", "\(folder)/junk/inside", body: [1]).status == 201)
        let keys = try storage.list().map(\.key).sorted()
        #expect(keys == ["junk", other, other + "/a.tlog"])
    }

    func encodedNames() throws {
        let names = ["a b%25 é#?;+&=.tlog", "100%", "quote\"and'<x>", "ünïcödé", ".tmp-1-x"]
        for name in names { try storage.publish(bytes(name.utf8.count), as: Self.namespace + "/" + name) }
        try storage.publish(bytes(3), as: "top level with space")
        let listed = try storage.list()
        #expect(Set(listed.map(\.key)) == Set(names.map { Self.namespace + "/" + $0 } + ["top level with space", Self.namespace]))
        for name in names { #expect(try storage.read(Self.namespace + "/" + name, largest: 100) == bytes(name.utf8.count), "\(name)") }
    }

    func foreignHrefsIgnored() throws {
        try storage.publish(bytes(4), as: "tasklog-epoch-1")
        let answer = try server.raw("PROPFIND", folder + "/", headers: ["Depth": "1"], body: WebDAVListing.request)
        #expect(answer.status == 207)
        let base = "\(server.prefix)/\(folder)/"
        let foreign = [
            "http://elsewhere.example\(base)stolen", "https://127.0.0.1:\(server.port)\(base)other-scheme", "\(server.prefix)/outside",
            "\(base)tasklog-x/deeper", "\(base)..%2Fescape", "\(base)../\(folder)-sibling", "\(base)q?x=1", "//127.0.0.1\(base)net-path",
        ]
        var text = String(decoding: answer.body, as: UTF8.self)
        let end = try #require(text.range(of: "</", options: .backwards))
        text.insert(contentsOf: foreign.map(Self.response).joined() + Self.response("http://127.0.0.1:\(server.port)\(base)%41bsolute"), at: end.lowerBound)
        let listing = try WebDAVListing(Array(text.utf8), collectionURL: try server.location(folder).baseURL)
        #expect(listing.members.map(\.name).sorted() == ["Absolute", "tasklog-epoch-1"])
        #expect(listing.listedItself && listing.ignored == foreign.count)
    }

    /// A response naming `href`, a file of one byte.
    static func response(_ href: String) -> String {
        "<D:response xmlns:D=\"DAV:\"><D:href>\(href)</D:href><D:propstat><D:prop><D:resourcetype/><D:getcontentlength>1</D:getcontentlength>"
            + "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }

    func wrongPassword() throws {
        let wrong = try server.storage(folder, password: "not-pw")
        #expect(throws: SyncError.credentialsRefused(location: wrong.location, status: 401)) { try wrong.list() }
        #expect(throws: SyncError.credentialsRefused(location: wrong.location, status: 401)) { try wrong.publish([1], as: "tasklog-epoch-1") }
        let line = SyncError.credentialsRefused(location: wrong.location, status: 401).description
        #expect(line == "webdav://me@127.0.0.1:\(server.port)\(server.prefix)/\(folder)/ refused the user name or password (401); check them")
        #expect(try storage.list().isEmpty)
    }

    func missingFolder() throws {
        let missing = try server.storage(folder + "/not-made")
        #expect(throws: SyncError.folderMissing(missing.location)) { try missing.list() }
        #expect(throws: SyncError.folderMissing(missing.location)) { try missing.publish([1], as: Self.namespace + "/a.tlog") }
        #expect(throws: SyncError.folderMissing(missing.location)) { try missing.publish([1], as: "tasklog-epoch-1") }
        #expect(throws: SyncError.folderMissing(missing.location)) { try missing.list() }
        #expect(try storage.list().isEmpty)
    }

    func serverDown() throws {
        let down = WebDAVStorage(try WebDAVLocation.parse("webdav://me@127.0.0.1:\(try WebDAVServer.freePort())/x/"), credentials: nil)
        let error = #expect(throws: SyncError.self) { try down.list() }
        #expect(error?.description == "cannot reach \(down.location): the connection was refused; check that the server runs there, on that port")
        #expect(throws: SegmentFile.Invalid.self) { try down.read("tasklog-epoch-1", largest: 100) }
    }

    func largeObjectRefused() throws {
        try storage.publish(bytes(100_000), as: "tasklog-epoch-9")
        // Reading stops past 64 KiB (an error page always fits): the size is known only to pass it.
        #expect(throws: SegmentFile.Invalid.tooLarge(bytes: WebDAVStorage.leastReadLimit + 1, operations: 0)) {
            try storage.read("tasklog-epoch-9", largest: 1000)
        }
        try storage.publish(bytes(2000), as: "tasklog-epoch-8")
        #expect(throws: SegmentFile.Invalid.tooLarge(bytes: 2000, operations: 0)) {
            try storage.read("tasklog-epoch-8", largest: 1000)
        }
        #expect(try storage.read("tasklog-epoch-9", largest: 100_000) == bytes(100_000))
    }

    func createIfAbsentKeepsTheFirst() throws {
        #expect(try storage.createIfAbsent(bytes(8, 1), as: "tasklog-epoch-2"))
        #expect(try !storage.createIfAbsent(bytes(8, 2), as: "tasklog-epoch-2"))
        #expect(try !storage.createIfAbsent(bytes(9, 3), as: "tasklog-epoch-2"))
        #expect(try storage.read("tasklog-epoch-2", largest: 100) == bytes(8, 1))
        #expect(try storage.createIfAbsent(bytes(8, 4), as: Self.namespace + "/first.tlog"))
        #expect(try storage.list().count == 3)
    }

    func markerFollowsChanges() throws {
        let other = try server.storage(folder)
        let start = try storage.changeMarker()
        try storage.publish(bytes(3), as: Self.namespace + "/a.tlog")
        #expect(try other.changeMarker() == start)
        try storage.markChanged()
        let published = try other.changeMarker()
        #expect(published != start)
        #expect(try storage.changeMarker() == published)
        _ = try storage.list()
        _ = try storage.read(Self.namespace + "/a.tlog", largest: 10)
        #expect(try other.changeMarker() == published)
        try other.remove([Self.namespace + "/a.tlog"])
        try other.markChanged()
        let removed = try storage.changeMarker()
        #expect(removed != published && removed != start)
        #expect(try !storage.list().map(\.key).contains(WebDAVStorage.markerName))
    }

    func lockedObject() throws {
        try storage.publish(bytes(3), as: "tasklog-epoch-3")
        let lockinfo = "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>"
        let lock = try server.raw("LOCK", "\(folder)/tasklog-epoch-3", headers: ["Timeout": "Second-60", "Content-Type": "application/xml"], body: Array(lockinfo.utf8))
        #expect(lock.status == 200, "\(lock.status)")
        #expect(throws: SyncError.storageRefused(
            location: storage.location, reason: "has tasklog-epoch-3 locked (423); another program holds a WebDAV lock, try again later")
        ) { try storage.remove(["tasklog-epoch-3"]) }
    }
}
