import CRDTCore
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// A shared folder in a WebDAV collection (RFC 4918), reached with libcurl.
///
/// Namespaces are collections made with MKCOL; the folder itself must exist. A file is put
/// under a `.tmp-` name in its collection, then moved to its name, so readers find all of it
/// or nothing. Nothing relies on ETags or `If-Match`: proxies and compression rewrite them.
/// Every answer is bounded: listings by ``WebDAVListing/answerLimit``, files by the reader.
package struct WebDAVStorage: FolderStorage {
    package let folder: WebDAVLocation
    let authorization: String?
    let transport: any HTTPTransport
    let retry: RetryPolicy

    /// The object whose content changes on every publish and removal (``changeMarker()``).
    /// It starts with `.`, and ``list()`` leaves it out.
    package static let markerName = ".tasklog-changed"
    /// The largest answer to a request that moves no file: its body only explains a status.
    static let replyLimit = 1 << 20
    /// The time one request may take (a large file on a slow link), unless it stalls first.
    static let requestSeconds = 600.0

    package var location: String { folder.description }

    /// - Parameter transport: by default libcurl, trusting `trustedCertificates` (a PEM file)
    ///   instead of the system's certificates when given.
    package init(
        _ folder: WebDAVLocation, credentials: WebDAVCredentials?, trustedCertificates: String? = nil, transport: (any HTTPTransport)? = nil,
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.folder = folder
        self.retry = retry
        authorization = credentials.map { "Basic " + Base64.encoded(Array(($0.user + ":" + $0.password).utf8)) }
        var client = HTTPClient(trustedCertificates: trustedCertificates)
        client.timeoutSeconds = Self.requestSeconds
        client.stallWindow = retry.stallSeconds
        self.transport = transport ?? client
    }

    package func list() throws(SyncError) -> [StoredObject] {
        guard let top = try members(of: folder.baseURL) else { throw .folderMissing(location) }
        var out: [StoredObject] = []
        for m in top.members where m.name != Self.markerName {
            out.append(StoredObject(key: m.name, kind: m.isCollection ? .folder : .file, size: m.size, identity: m.identity))
            // A namespace removed since the first answer lists nothing.
            guard m.isCollection, Self.isNamespace(m.name), let inner = try members(of: folder.collectionURL(m.name)) else { continue }
            for n in inner.members {
                out.append(StoredObject(key: m.name + "/" + n.name, kind: n.isCollection ? .folder : .file, size: n.size, identity: n.identity))
            }
        }
        return out
    }

    /// The members a PROPFIND `Depth: 1` of `collection` lists; nil when it is not there.
    private func members(of collection: String) throws(SyncError) -> WebDAVListing? {
        let headers = ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"]
        let reply = try request("PROPFIND", collection, headers: headers, body: WebDAVListing.request, limit: WebDAVListing.answerLimit, expect: [207, 404])
        guard reply.status == 207 else { return nil }
        do {
            return try WebDAVListing(reply.body, collectionURL: collection)
        } catch {
            throw .storageRefused(location: location, reason: "sent a listing this client cannot read: \(error.description)")
        }
    }

    /// The most bytes a change marker may hold.
    static let markerLimit = 256

    /// The marker's content. Its GET takes ``leastReadLimit``, so that an error page (a 401's
    /// HTML) is read and named by its status; a marker over ``markerLimit`` is refused.
    package func changeMarker() throws(SyncError) -> String? {
        let reply = try request("GET", folder.url(of: Self.markerName), limit: Self.leastReadLimit, expect: [200, 404])
        if reply.status == 200 && reply.body.count > Self.markerLimit {
            throw .storageRefused(location: location, reason: "holds a change marker of \(reply.body.count) bytes, more than \(Self.markerLimit); check that the URL is a TaskLog folder")
        }
        // Before any device marked a change, its absence is the marker.
        return reply.status == 200 ? String(decoding: reply.body, as: UTF8.self) : ""
    }

    /// Gives the marker a new random content; called after a sync's publishes and removals.
    /// A reader who read the marker before listing sees every change made before the marker
    /// it reads next.
    package func markChanged() throws(SyncError) {
        let token = Array((Self.randomHex() + "\n").utf8)
        _ = try request("PUT", folder.url(of: Self.markerName), body: token, expect: [200, 201, 204], missingFolder: true)
    }

    package func read(_ key: String, largest: Int) throws(SegmentFile.Invalid) -> [UInt8]? {
        // At least 64 KiB is taken, so that a 404's page always fits; a smaller file over
        // `largest` is read, then refused.
        let limit = max(largest, Self.leastReadLimit)
        let reply: HTTPReply
        do {
            reply = try exchange("GET", folder.url(of: key), limit: limit)
        } catch .tooLarge(_, let passed) where passed == limit {
            // The size is not known, only that it passes `limit`; the caller knows the operations.
            throw .tooLarge(bytes: limit + 1, operations: 0)
        } catch {
            throw .unavailable(unreachable(error).description)
        }
        switch reply.status {
        case 200 where reply.body.count > largest: throw .tooLarge(bytes: reply.body.count, operations: 0)
        case 200: return reply.body
        case 404: return nil
        default: throw .unavailable(refusal(reply, "GET", key).description)
        }
    }

    /// The least answer a GET takes, whatever the file's bound.
    package static let leastReadLimit = 64 << 10

    /// Publishes `bytes` as `key`; the sync calls ``markChanged()`` after its last change.
    package func publish(_ bytes: [UInt8], as key: String) throws(SyncError) {
        let temporary = try putTemporary(bytes, near: key)
        try move(temporary, to: key, overwrite: true)
    }

    package func remove(_ keys: [String]) throws(SyncError) {
        for key in keys {
            _ = try request("DELETE", folder.url(of: key), expect: [200, 204, 404])
        }
    }

    /// Whether a namespace's name: `tasklog-` and a replica id in lowercase hex.
    static func isNamespace(_ name: String) -> Bool {
        guard name.hasPrefix("tasklog-"), let r = ReplicaID(hex: name.dropFirst(8)) else { return false }
        return "tasklog-" + r.hex == name
    }

    static func randomHex() -> String {
        var g = SystemRandomNumberGenerator()
        return [g.next(), g.next()].map { (v: UInt64) in
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }.joined()
    }
}
