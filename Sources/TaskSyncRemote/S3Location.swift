/// Why an S3 location or its settings cannot be used, in one line that says what to fix.
public struct S3SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String

    package init(_ description: String) { self.description = description }
}

/// A shared folder in an S3 bucket: `s3://BUCKET/PREFIX`. The prefix is empty (the whole
/// bucket) or ends with `/`.
public struct S3Location: Sendable, Hashable, CustomStringConvertible {
    public var bucket: String
    public var prefix: String

    /// The longest prefix accepted: S3 keys are at most 1024 bytes, and the folder's own
    /// keys need room after it.
    static let longestPrefix = 512

    /// Reads `s3://BUCKET` or `s3://BUCKET/PREFIX`. The bucket follows the AWS naming rules
    /// (3 to 63 lowercase letters, digits, dots and hyphens); the prefix has no empty, `.`
    /// or `..` segment and no control character.
    public static func parse(_ text: String) throws(S3SettingsError) -> S3Location {
        guard text.hasPrefix("s3://") else { throw S3SettingsError("\(text) is not an S3 location; write it as s3://BUCKET/PREFIX") }
        let rest = text.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        guard isBucketName(bucket) else {
            throw S3SettingsError("'\(bucket)' is not a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit")
        }
        var prefix = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]) : ""
        if prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty {
            guard prefix.utf8.count <= longestPrefix else { throw S3SettingsError("the prefix in \(text) is longer than \(longestPrefix) bytes") }
            let segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
            guard segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
                prefix.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else { throw S3SettingsError("the prefix in \(text) has an empty, '.' or '..' part, or a control character") }
            prefix += "/"
        }
        return S3Location(bucket: bucket, prefix: prefix)
    }

    public init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    public var description: String { "s3://\(bucket)/\(prefix)" }

    static func isBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func alphanumeric(_ b: UInt8) -> Bool { (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) }
        guard (3...63).contains(bytes.count), alphanumeric(bytes[0]), alphanumeric(bytes[bytes.count - 1]) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") } && !name.contains("..")
    }
}

/// How requests reach a bucket: path style (`ENDPOINT/BUCKET/KEY`) for a custom endpoint or
/// a bucket name with dots, virtual host (`https://BUCKET.s3.REGION.amazonaws.com/KEY`) for
/// AWS otherwise.
package struct S3Addressing: Sendable {
    /// The scheme and authority (and any path) before the bucket or key, without a final `/`.
    let base: String
    /// The bucket's path segment, with its `/`, in path style; empty for a virtual host.
    let bucketPath: String

    package init(bucket: String, region: String, endpoint: String?) {
        if let endpoint {
            base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            bucketPath = "/" + bucket
        } else if bucket.contains(".") {
            // A dotted name does not match the certificate of *.s3.REGION.amazonaws.com.
            base = "https://s3.\(region).amazonaws.com"
            bucketPath = "/" + bucket
        } else {
            base = "https://\(bucket).s3.\(region).amazonaws.com"
            bucketPath = ""
        }
    }

    /// The URL of object `key`, or of the bucket when `key` is nil, with `query` sorted by
    /// name and percent-encoded as Signature Version 4 requires.
    package func url(key: String?, query: [(String, String)] = []) -> String {
        var url = base + bucketPath
        if let key { url += "/" + Self.encode(key, keepSlash: true) } else if bucketPath.isEmpty { url += "/" }
        if !query.isEmpty {
            url += "?" + query.sorted { $0.0 < $1.0 }.map { Self.encode($0.0, keepSlash: false) + "=" + Self.encode($0.1, keepSlash: false) }
                .joined(separator: "&")
        }
        return url
    }

    /// `text` with every byte but the unreserved ones (and `/` when `keepSlash`) as `%XX`.
    static func encode(_ text: String, keepSlash: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.append(b)
            case UInt8(ascii: "/") where keepSlash: out.append(b)
            default: out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
