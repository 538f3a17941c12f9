@_spi(Engine) import TaskSyncHTTP

/// The page people use at `/` of `tasklog serve`: HTML, CSS and JavaScript held in this
/// binary, so nothing is read from disk or fetched from elsewhere. Its files are public; the
/// tasks it shows come from the REST API, which needs the token (Spec/web-page.md).
@_spi(Engine) public enum WebPage {
    /// One file of the page.
    struct Asset: Sendable {
        var contentType: String
        var body: [UInt8]
        /// A strong validator of the body, quoted.
        var etag: String

        init(_ contentType: String, _ text: String) {
            self.contentType = contentType
            body = Array(text.utf8)
            etag = "\"" + String(WebPage.fingerprint(body), radix: 16) + "\""
        }
    }

    /// The page's files by path. The service worker names the others' fingerprint, so a
    /// browser takes a new build's files as soon as it is online.
    static let assets: [String: Asset] = {
        var files: [String: Asset] = [
            "/": Asset("text/html; charset=utf-8", PageHTML.document),
            "/app.css": Asset("text/css; charset=utf-8", PageStyle.sheet),
            "/app.js": Asset("text/javascript; charset=utf-8", PageScript.whole),
            "/icon.svg": Asset("image/svg+xml", PageHTML.icon),
        ]
        let version = files.keys.sorted().map { files[$0]!.etag }.joined()
        let worker = PageWorker.script(version: String(fingerprint(Array(version.utf8)), radix: 16))
        files["/sw.js"] = Asset("text/javascript; charset=utf-8", worker)
        return files
    }()

    /// The bytes of all the page's files together.
    package static var weight: Int { assets.values.reduce(0) { $0 + $1.body.count } }

    /// Whether `request` asks for one of the page's files (GET or HEAD on its path).
    public static func handles(_ request: HTTPRequest) -> Bool {
        isPublic(method: request.method, path: request.path)
    }

    /// Whether a request may go without the token: only reading the page's own files.
    public static func isPublic(method: String, path: String) -> Bool {
        (method == "GET" || method == "HEAD") && assets[path] != nil
    }

    /// The file asked for, or 304 when the browser's copy is current.
    public static func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard let asset = assets[request.path] else { return .error(404, "no such page file: \(request.path)") }
        var headers = securityHeaders + [("ETag", asset.etag), ("Cache-Control", "no-cache")]
        if request.headers["if-none-match"]?.split(separator: ",").contains(where: { String($0).trimmed == asset.etag }) == true {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.append(("Content-Type", asset.contentType))
        return HTTPResponse(status: 200, headers: headers, body: asset.body)
    }

    /// Scripts, styles and connections from this origin only; no inline script or style, no
    /// framing, no referrer. The page sets no cookie.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "worker-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
    ]

    /// FNV-1a, 64 bits: enough to tell one build's file from another's.
    static func fingerprint(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        return hash
    }
}

extension String {
    /// Without the spaces at either end.
    fileprivate var trimmed: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
