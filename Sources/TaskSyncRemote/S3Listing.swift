import BoundedXML
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// The most a listing may hold. A server past them is refused rather than followed.
package struct S3ListingBounds: Sendable {
    /// Pages of one listing (S3 sends up to 1000 keys in each).
    package var pages = 5000
    /// Objects under the prefix.
    package var objects = 1_000_000
    /// Bytes of one page's XML.
    package var pageBytes = 4 << 20

    package init() {}
}

/// An object as a listing names it: its key, size and ETag (empty when none is given).
package struct S3ListedObject: Sendable, Equatable {
    package var key: String
    package var size: Int
    package var etag: String
}

/// One page of a ListObjectsV2 answer.
struct S3ListingPage {
    var objects: [S3ListedObject] = []
    var isTruncated = false
    var nextToken: String?

    /// Reads a page; elements are matched by local name, whatever their namespace.
    init(_ body: [UInt8], bounds: S3ListingBounds) throws(XMLTree.ParseError) {
        let tree: XMLTree
        do {
            tree = try XMLTree.parse(body, bounds: XMLBounds(elements: 16 * 1024, attributesPerElement: 8, depth: 8))
        } catch {
            throw XMLTree.ParseError(description: error.isOverBound ? "a page holds more XML than a listing page may" : "a page is not well-formed XML")
        }
        guard tree.name == "ListBucketResult" else { throw XMLTree.ParseError(description: "a page's root element is \(S3ErrorAnswer.clean(tree.name, longest: 64)), not ListBucketResult") }
        // Keys come percent-encoded when the server honours `encoding-type=url`: XML 1.0
        // cannot carry every character a key may hold (a control character, say).
        let encoded = tree.children.contains { $0.name == "EncodingType" && $0.text == "url" }
        for child in tree.children {
            switch child.name {
            case "IsTruncated": isTruncated = child.text == "true"
            case "NextContinuationToken": nextToken = child.text.isEmpty ? nil : child.text
            case "Contents":
                guard let raw = child.children.first(where: { $0.name == "Key" })?.text, !raw.isEmpty,
                    let size = child.children.first(where: { $0.name == "Size" }).flatMap({ Int($0.text) }), size >= 0
                else { throw XMLTree.ParseError(description: "a page has an entry without a key or a size") }
                let key = try encoded ? Self.decoded(raw) : raw
                let etag = child.children.first(where: { $0.name == "ETag" })?.text ?? ""
                objects.append(S3ListedObject(key: key, size: size, etag: S3ErrorAnswer.clean(etag, longest: 200)))
            default: continue
            }
        }
    }
}

extension S3ListingPage {
    /// A key as `encoding-type=url` gave it, decoded.
    static func decoded(_ key: String) throws(XMLTree.ParseError) -> String {
        guard let text = PercentDecoding.text(key, plusIsSpace: true) else {
            throw XMLTree.ParseError(description: "a page has a key that is not percent-encoded UTF-8 as asked")
        }
        return text
    }
}

extension S3Client {
    /// Every object under `prefix`, following pages, with keys relative to the prefix.
    /// A key listed twice with the same size is kept once.
    /// - Throws: ``S3Failure/badListing(location:reason:)`` for a page token that comes
    ///   again, a truncated page without a token, a key outside the prefix or listed with
    ///   two sizes, or a listing past `bounds`.
    package func listAll(prefix: String, bounds: S3ListingBounds) throws(S3Failure) -> [S3ListedObject] {
        var found: [S3ListedObject] = []
        var sizes: [String: Int] = [:]
        var tokens: Set<String> = []
        var token: String?
        for _ in 0..<bounds.pages {
            let page = try listPage(prefix: prefix, token: token, bounds: bounds)
            for var object in page.objects {
                let (key, size) = (object.key, object.size)
                guard key.hasPrefix(prefix) else { throw bad("it holds \(S3ErrorAnswer.clean(key, longest: 200)), which is outside the prefix") }
                if let earlier = sizes[key] {
                    guard earlier == size else { throw bad("it lists \(S3ErrorAnswer.clean(key, longest: 200)) twice, with \(earlier) and \(size) bytes") }
                    continue
                }
                sizes[key] = size
                object.key = String(key.dropFirst(prefix.count))
                found.append(object)
                guard found.count <= bounds.objects else { throw bad("it holds more than \(bounds.objects) objects") }
            }
            guard page.isTruncated else { return found }
            guard let next = page.nextToken else { throw bad("a page says more follow but gives no token for them") }
            guard tokens.insert(next).inserted else { throw bad("the server gave the same page token twice, so its listing loops") }
            token = next
        }
        throw bad("it runs to more than \(bounds.pages) pages")
    }

    private func listPage(prefix: String, token: String?, bounds: S3ListingBounds) throws(S3Failure) -> S3ListingPage {
        var query = [("list-type", "2"), ("encoding-type", "url")]
        if !prefix.isEmpty { query.append(("prefix", prefix)) }
        if let token { query.append(("continuation-token", token)) }
        let reply = try send(Request(method: "GET", key: nil, query: query, limit: bounds.pageBytes, accept: [200]))
        do throws(XMLTree.ParseError) {
            return try S3ListingPage(reply.body, bounds: bounds)
        } catch {
            throw bad(error.description)
        }
    }

    private func bad(_ reason: String) -> S3Failure { .badListing(location: location, reason: reason) }
}
