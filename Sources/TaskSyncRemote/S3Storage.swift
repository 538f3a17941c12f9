import Synchronization
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// A shared folder under a prefix of an S3 bucket, on AWS or any S3-compatible server.
/// Every request is signed (Signature Version 4) and goes through the retry layer.
///
/// A small marker object (``markerKey``) gets new bytes at each ``markChanged()``, so
/// ``changeMarker()`` costs one conditional GET (a 304 when nothing changed). ``list()``
/// never shows it. An object's identity is its ETag.
@_spi(Engine) public final class S3Storage: FolderStorage {
    /// The marker's key under the prefix.
    package static let markerKey = ".tasklog-changed"
    /// The most bytes of the marker object read.
    static let markerLimit = 4096
    /// The least body limit of a GET, so that an error answer (a 404's XML) always fits. An
    /// object over the caller's bound but under this is read, then refused.
    static let leastLimit = 64 << 10

    public let location: String
    let prefix: String
    package let client: S3Client
    let bounds: S3ListingBounds
    /// The marker's last ETag, kept to ask for it again with `If-None-Match`.
    private let lastMarker = Mutex<String?>(nil)

    package init(_ folder: S3Location, credentials: S3Credentials, retry: RetryPolicy = RetryPolicy(), bounds: S3ListingBounds = S3ListingBounds()) {
        location = folder.description
        prefix = folder.prefix
        client = S3Client(location: folder, credentials: credentials, retry: retry)
        self.bounds = bounds
    }

    /// Objects at the top of the prefix and one level below, each known by its ETag; deeper
    /// keys, folder markers (keys ending in `/`) and the change marker are left out.
    public func list() throws(SyncError) -> [StoredObject] {
        let all: [S3ListedObject]
        do {
            all = try client.listAll(prefix: prefix, bounds: bounds)
        } catch {
            throw error.syncError
        }
        return all.compactMap { object in
            let slashes = object.key.utf8.count { $0 == UInt8(ascii: "/") }
            guard object.key != Self.markerKey, slashes <= 1, !object.key.hasSuffix("/"), !object.key.hasPrefix("/") else { return nil }
            return StoredObject(key: object.key, kind: .file, size: object.size, identity: object.etag)
        }
    }

    /// The marker object's ETag, asked for with the last one (a 304 returns it again);
    /// `none` while no marker exists.
    public func changeMarker() throws(SyncError) -> String? {
        let last = lastMarker.withLock { $0 }
        var request = S3Client.Request(method: "GET", key: prefix + Self.markerKey, limit: Self.markerLimit, accept: [200, 304, 404])
        if let last { request.headers["If-None-Match"] = last }
        do {
            let reply = try client.send(request)
            switch reply.status {
            case 304: return last
            case 404: return "none"
            default:
                let tag = reply.headers["etag"].map { S3ErrorAnswer.clean($0, longest: 200) } ?? ""
                lastMarker.withLock { $0 = tag.isEmpty ? nil : tag }
                return tag.isEmpty ? String(decoding: reply.body, as: UTF8.self) : tag
            }
        } catch {
            throw error.syncError
        }
    }

    /// Writes a new marker, so that other devices' ``changeMarker()`` sees a change.
    public func markChanged() throws(SyncError) {
        let token = "\(Posix.wallClockMilliseconds())-\(UInt64.random(in: 0...UInt64.max))\n"
        try put(Array(token.utf8), as: Self.markerKey)
    }

    /// The object's bytes; nil when it is gone. A `Content-Length` over `largest` (and over
    /// ``leastLimit``) is refused before the body is read.
    public func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        let reply: HTTPReply
        do {
            reply = try client.send(S3Client.Request(method: "GET", key: prefix + key, limit: max(largest, Self.leastLimit), accept: [200, 404]))
        } catch .network(.tooLarge, _) {
            throw .tooLarge(bytes: size(of: key) ?? largest + 1, operations: 0)
        } catch {
            throw .unavailable(error.description)
        }
        guard reply.status == 200 else { return nil }
        guard reply.body.count <= largest else { throw .tooLarge(bytes: reply.body.count, operations: 0) }
        return reply.body
    }

    /// Puts the object: S3 replaces an object whole, so a reader finds all of it or nothing.
    public func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        try put(bytes, as: key)
    }

    /// The first `count` bytes, asked for with a `Range` header (all of a shorter object).
    /// - Throws: ``SegmentFile/Invalid/unavailable(_:)`` also when the server ignores the range
    ///   and sends more.
    public func readPrefix(_ key: String, count: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        var request = S3Client.Request(method: "GET", key: prefix + key, limit: max(count, Self.leastLimit), accept: [200, 206, 404, 416])
        request.headers["Range"] = "bytes=0-\(count - 1)"
        do {
            let reply = try client.send(request)
            return reply.status == 404 ? nil : reply.status == 416 ? [] : Array(reply.body.prefix(count))
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// Removes each object (a missing one is no error).
    public func remove(_ keys: [String]) throws(SyncError) {
        guard !keys.isEmpty else { return }
        do {
            for key in keys { _ = try client.send(S3Client.Request(method: "DELETE", key: prefix + key, limit: 1 << 16, accept: [200, 204, 404])) }
        } catch {
            throw error.syncError
        }
    }

    /// Puts `bytes` as `key` as they are (no change marked); returns the status, one of `accept`.
    @discardableResult
    package func put(_ bytes: [UInt8], as key: String, headers: [String: String] = [:], accept: Set<Int> = [200]) throws(SyncError) -> Int {
        var all = headers
        all["Content-Type"] = "application/octet-stream"
        let request = S3Client.Request(method: "PUT", key: prefix + key, headers: all, body: bytes, limit: 1 << 16, accept: accept)
        do {
            return try client.send(request).status
        } catch {
            throw error.syncError
        }
    }

    /// The object's size from a HEAD request; nil when it cannot be had.
    func size(of key: String) -> Int? {
        let reply = try? client.send(S3Client.Request(method: "HEAD", key: prefix + key, limit: S3Client.headLimit, accept: [200]))
        return reply?.headers["content-length"].flatMap { Int($0) }
    }
}

extension S3Storage {
    /// Puts the object unless one exists: a HEAD first, then a PUT with `If-None-Match: *`,
    /// then the object read back and compared. A 412 answer, or other bytes read back, means
    /// another writer's object is there.
    ///
    /// AWS S3 and SeaweedFS refuse the PUT when the object exists; some servers (rclone's
    /// `serve s3`) ignore the header. There, two writers that both pass the HEAD both put, and
    /// the later object stays. The read back tells the earlier writer it lost, unless it reads
    /// before the later PUT lands: then both believe they made it. The window is one request
    /// long, and the folder protocol makes it rare (one new epoch file per rekey).
    public func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        let existing: HTTPReply
        do {
            existing = try client.send(S3Client.Request(method: "HEAD", key: prefix + key, limit: S3Client.headLimit, accept: [200, 404]))
        } catch {
            throw error.syncError
        }
        guard existing.status == 404 else { return false }
        // After a 412, the object may still be ours: an earlier attempt whose answer was lost.
        _ = try put(bytes, as: key, headers: ["If-None-Match": "*"], accept: [200, 412])
        let stored: [UInt8]?
        do {
            stored = try read(key, largest: bytes.count)
        } catch .tooLarge {
            return false
        } catch {
            throw .storageFailed(error.description)
        }
        return stored == bytes
    }
}
