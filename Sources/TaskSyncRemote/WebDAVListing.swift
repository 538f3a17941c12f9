import BoundedXML

/// One PROPFIND `Depth: 1` answer read: the members directly inside a collection. Hrefs
/// elsewhere (another origin, an outer or deeper path, a query) are ignored and counted.
package struct WebDAVListing: Equatable {
    package struct Member: Equatable {
        /// The member's name, percent-decoded.
        package var name: String
        package var isCollection: Bool
        package var size: Int
        /// `getlastmodified` as the server wrote it, or empty.
        package var modified = ""

        /// What tells this version of the member from another: its size and modification
        /// time (not its ETag, which proxies rewrite); empty when the server gave no time.
        package var identity: String { modified.isEmpty ? "" : "\(size) \(modified)" }
    }

    package var members: [Member] = []
    /// Whether the answer listed the collection itself.
    package var listedItself = false
    /// Hrefs that named nothing directly inside the collection.
    package var ignored = 0

    /// The request body: only the properties read.
    package static let request = Array(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><d:propfind xmlns:d=\"DAV:\"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/></d:prop></d:propfind>".utf8)

    /// The largest answer taken: about 80,000 members at 400 bytes each.
    package static let answerLimit = 32 << 20
    /// libxml2 reads at most this many elements: about ten per member.
    static let bounds = XMLBounds(elements: 1_000_000, attributesPerElement: 64, depth: 16)

    /// Reads a 207 multistatus answer to a PROPFIND of `collectionURL`.
    package init(_ body: [UInt8], collectionURL: String) throws(XMLTree.ParseError) {
        let tree = try XMLTree.parse(body, bounds: Self.bounds)
        guard tree.is("DAV:", "multistatus") else { throw XMLTree.ParseError(description: "the answer is not a DAV:multistatus") }
        guard let scope = HrefScope(collectionURL: collectionURL) else { throw XMLTree.ParseError(description: "the folder's URL does not decode") }
        for response in tree.all("DAV:", "response") {
            let href = response.child("DAV:", "href")?.text ?? ""
            switch scope.place(of: href) {
            case .collection: listedItself = true
            case .member(let name): members.append(Self.member(name, response))
            case .elsewhere: ignored += 1
            }
        }
    }

    /// A member's kind and size from the properties its `200` propstat gives.
    private static func member(_ name: String, _ response: XMLTree) -> Member {
        var member = Member(name: name, isCollection: false, size: 0)
        for propstat in response.all("DAV:", "propstat") {
            guard let status = propstat.child("DAV:", "status")?.text, status.split(separator: " ").dropFirst().first == "200",
                let prop = propstat.child("DAV:", "prop")
            else { continue }
            if let type = prop.child("DAV:", "resourcetype"), type.child("DAV:", "collection") != nil { member.isCollection = true }
            if let length = prop.child("DAV:", "getcontentlength"), let n = Int(length.text.filter { !$0.isWhitespace }), n >= 0 {
                member.size = n
            }
            if let modified = prop.child("DAV:", "getlastmodified")?.text, modified.utf8.count <= 64 {
                member.modified = modified.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            }
        }
        return member
    }
}

/// Which hrefs of a PROPFIND answer name a collection's members: those one segment below
/// it, percent-decoded, on its own origin (scheme, host and port).
struct HrefScope {
    enum Place: Equatable {
        case collection
        case member(String)
        case elsewhere
    }

    let origin: String
    let segments: [String]

    init?(collectionURL: String) {
        guard let (origin, path) = Self.split(collectionURL), let segments = WebDAVPath.segments(of: path) else { return nil }
        self.origin = origin
        self.segments = segments
    }

    func place(of href: String) -> Place {
        let h = href.filter { !$0.isWhitespace }
        guard !h.isEmpty, !h.contains("?"), !h.contains("#"), !h.contains("\\"), !h.hasPrefix("//") else { return .elsewhere }
        var path = h
        if h.contains("://") {
            guard let (origin, p) = Self.split(h), origin == self.origin else { return .elsewhere }
            path = p
        }
        // A relative href is relative to the collection.
        guard let found = WebDAVPath.segments(of: path.hasPrefix("/") ? path : "/" + path) else { return .elsewhere }
        let parts = path.hasPrefix("/") ? found : segments + found
        guard parts.starts(with: segments) else { return .elsewhere }
        switch parts.count - segments.count {
        case 0: return .collection
        case 1: return .member(parts[parts.count - 1])
        default: return .elsewhere
        }
    }

    /// `scheme://host[:port]` lowercased without the scheme's default port, and the path.
    private static func split(_ url: String) -> (origin: String, path: String)? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash].lowercased()
        guard !authority.contains("@") else { return nil }
        if (scheme == "http" && authority.hasSuffix(":80")) || (scheme == "https" && authority.hasSuffix(":443")) {
            authority.removeLast(scheme == "http" ? 3 : 4)
        }
        return (scheme + "://" + authority, slash == rest.endIndex ? "/" : String(rest[slash...]))
    }
}
