#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSodium
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

extension WebDAVStorage {
    /// Publishes `bytes` as `key` unless `key` exists. A `MOVE` with `Overwrite: F` refuses
    /// to replace an object, but some servers (rclone, oCIS) ignore it; so `key` is checked
    /// first and read back after. Two devices racing on such a server can both see their
    /// own bytes read back, if one moves after the other read back: both then return true.
    package func createIfAbsent(_ bytes: [UInt8], as key: String) throws(SyncError) -> Bool {
        guard try !exists(key) else { return false }
        let temporary = try putTemporary(bytes, near: key)
        guard try move(temporary, to: key, overwrite: false) else { return false }
        let stored: [UInt8]?
        do {
            stored = try read(key, largest: bytes.count)
        } catch .unavailable(let why) {
            throw .unreachable(location: location, reason: why)
        } catch {
            return false  // another device's, larger than ours
        }
        return stored == bytes
    }

    /// Whether `key` is there (a PROPFIND `Depth: 0`: HEAD answers carry no body to bound).
    private func exists(_ key: String) throws(SyncError) -> Bool {
        let headers = ["Depth": "0", "Content-Type": "application/xml; charset=utf-8"]
        let reply = try request("PROPFIND", folder.url(of: key), headers: headers, body: WebDAVListing.request, expect: [207, 404])
        return reply.status == 207
    }

    /// Puts `bytes` under a new `.tmp-` name in `key`'s collection, made with MKCOL when the
    /// PUT finds it missing (404 or 409); the temporary key.
    func putTemporary(_ bytes: [UInt8], near key: String) throws(SyncError) -> String {
        let name = ".tmp-\(getpid())-\(Self.randomHex())"
        guard let slash = key.lastIndex(of: "/") else {
            _ = try request("PUT", folder.url(of: name), body: bytes, expect: [200, 201, 204], missingFolder: true)
            return name
        }
        let namespace = String(key[..<slash])
        let temporary = namespace + "/" + name
        let first = try request("PUT", folder.url(of: temporary), body: bytes, expect: [200, 201, 204, 404, 409])
        guard first.status == 404 || first.status == 409 else { return temporary }
        // 405: another request made it meanwhile. 409: the folder itself is missing.
        _ = try request("MKCOL", folder.collectionURL(namespace), expect: [201, 405], missingFolder: true)
        _ = try request("PUT", folder.url(of: temporary), body: bytes, expect: [200, 201, 204], missingFolder: true)
        return temporary
    }

    /// Moves `temporary` to `key`; false when `key` exists and `overwrite` is false. The
    /// temporary object is removed when the move fails.
    @discardableResult
    func move(_ temporary: String, to key: String, overwrite: Bool) throws(SyncError) -> Bool {
        let headers = ["Destination": folder.url(of: key), "Overwrite": overwrite ? "T" : "F"]
        do {
            let reply = try request("MOVE", folder.url(of: temporary), headers: headers, expect: [201, 204, 412])
            if reply.status == 412 { _ = try? request("DELETE", folder.url(of: temporary), expect: [200, 204, 404]) }
            return reply.status != 412
        } catch {
            _ = try? request("DELETE", folder.url(of: temporary), expect: [200, 204, 404])
            throw error
        }
    }

    /// Sends a request and checks its status is one of `expect`; any other becomes an error.
    /// - Parameter missingFolder: whether a 404 or 409 means the folder itself is missing.
    func request(
        _ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil, limit: Int = replyLimit,
        expect: Set<Int>, missingFolder: Bool = false
    ) throws(SyncError) -> HTTPReply {
        let reply: HTTPReply
        do {
            reply = try exchange(method, url, headers: headers, body: body, limit: limit)
        } catch {
            throw unreachable(error)
        }
        if expect.contains(reply.status) { return reply }
        if missingFolder && (reply.status == 404 || reply.status == 409) { throw .folderMissing(location) }
        if reply.status == 404 && url == folder.baseURL { throw .folderMissing(location) }
        throw refusal(reply, method, String(url.dropFirst(folder.baseURL.count)))
    }

    /// Every request to the server goes through here, and through the retry layer: a network
    /// error, a 429 or a 5xx answer (but 507, which waiting does not mend) is tried again.
    /// MOVE is sent again only when it never reached the server: once moved, its source is gone.
    func exchange(_ method: String, _ url: String, headers: [String: String] = [:], body: [UInt8]? = nil, limit: Int) throws(HTTPClientError) -> HTTPReply {
        var all = headers
        if let authorization { all["Authorization"] = authorization }
        var lastAnswer: HTTPReply?
        do {
            return try retry.run(idempotent: method != "MOVE") { (_: Int) throws(HTTPClientError) -> HTTPReply in
                let reply = try transport.send(method, url, headers: all, body: body, timeout: nil, limit: limit)
                guard reply.status == 429 || (500..<600).contains(reply.status) && reply.status != 507 else { return reply }
                lastAnswer = reply
                throw .failed(url: url, status: reply.status, message: "")
            }
        } catch .failed(_, let status, _) where lastAnswer?.status == status {
            // Out of attempts: the last answer says what went wrong.
            return lastAnswer!
        }
    }

    /// A request that failed before an answer, in words.
    func unreachable(_ error: HTTPClientError) -> SyncError {
        switch error {
        case .refused: .unreachable(location: location, reason: "the connection was refused; check that the server runs there, on that port")
        case .timedOut(_, let s): .unreachable(location: location, reason: "no answer within \(Int(s)) s; check the address and the network")
        case .unreachable(_, let why): .unreachable(location: location, reason: why)
        case .stalled(_, let bytes, let s):
            .unreachable(location: location, reason: "it sent fewer than \(bytes) bytes in \(s) s and was cut off; check the network")
        case .tooLarge(_, let limit):
            .storageRefused(location: location, reason: "sent more than \(HTTPClientError.size(limit)) in one answer; check that the URL is a WebDAV folder")
        default: .unreachable(location: location, reason: error.description)
        }
    }

    /// An answer with a status the request did not expect, in words. `what` is the key.
    func refusal(_ reply: HTTPReply, _ method: String, _ what: String) -> SyncError {
        let s = reply.status
        let target = what.isEmpty ? "the folder" : what
        switch s {
        case 401, 403: return .credentialsRefused(location: location, status: s)
        case 300..<400:
            let to = reply.headers["location"].map { " to \($0)" } ?? ""
            return .storageRefused(location: location, reason: "redirects \(method)\(to) (\(s)), which is not followed; give the URL it should be")
        case 423: return .storageRefused(location: location, reason: "has \(target) locked (423); another program holds a WebDAV lock, try again later")
        case 507: return .storageRefused(location: location, reason: "has no room left (507 Insufficient Storage); free space on the server")
        case 500..<600: return .storageRefused(location: location, reason: "failed \(method) of \(target) with \(s); try again later")
        default: return .storageRefused(location: location, reason: "refused \(method) of \(target) with \(s)")
        }
    }
}

/// Base64 of HTTP Basic credentials.
enum Base64 {
    static func encoded(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, sodium_base64_VARIANT_ORIGINAL))
        _ = sodium_bin2base64(&out, out.count, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
