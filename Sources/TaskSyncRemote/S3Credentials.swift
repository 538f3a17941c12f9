/// The keys, region and endpoint for S3 requests, found where the AWS tools look for them.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// A temporary session's token, sent with each request when set.
    public var sessionToken: String?
    /// The region requests are signed for (`us-east-1` when none is set).
    public var region: String
    /// A custom endpoint (`http://host:port`), reached in path style; nil for AWS itself.
    public var endpoint: String?
    /// The profile the settings came from, for messages.
    public var profile: String

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1", endpoint: String? = nil, profile: String = "default") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.endpoint = endpoint
        self.profile = profile
    }

    /// The access key and where requests go; never the secret or the token.
    public var description: String { "access key \(accessKeyID) (profile \(profile)), region \(region), \(endpoint ?? "AWS")" }

    /// Finds the settings as the AWS command line does. The profile is `AWS_PROFILE`, else
    /// `default`. The keys come from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
    /// `AWS_SESSION_TOKEN`) when both are set, else from the profile in the credentials file,
    /// else from the profile in the config file. The region is `AWS_REGION`, else
    /// `AWS_DEFAULT_REGION`, else the profile's `region`. The endpoint is `AWS_ENDPOINT_URL_S3`,
    /// else `AWS_ENDPOINT_URL`, else the profile's `s3 = endpoint_url` or `endpoint_url`.
    /// The files are `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`, else
    /// `HOME/.aws/credentials` and `HOME/.aws/config`.
    /// - Throws: when no keys are found, a named profile is in neither file, a file is
    ///   unreadable or malformed, or the endpoint is not an http(s) URL.
    public static func resolve(environment: [String: String], home: String?) throws(S3SettingsError) -> S3Credentials {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let profile = env("AWS_PROFILE") ?? "default"
        let awsFolder = home.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + ".aws/" }
        let credentialsPath = env("AWS_SHARED_CREDENTIALS_FILE") ?? awsFolder.map { $0 + "credentials" }
        let configPath = env("AWS_CONFIG_FILE") ?? awsFolder.map { $0 + "config" }
        let fromCredentials = try credentialsPath.map { path throws(S3SettingsError) in try S3ConfigFile.read(path, isConfig: false) }?.profiles[profile]
        let fromConfig = try configPath.map { path throws(S3SettingsError) in try S3ConfigFile.read(path, isConfig: true) }?.profiles[profile]
        if env("AWS_PROFILE") != nil, fromCredentials == nil, fromConfig == nil {
            throw S3SettingsError("the AWS profile '\(profile)' is in neither the credentials file nor the config file")
        }
        func setting(_ name: String) -> String? {
            (fromCredentials?[name]).flatMap { $0.isEmpty ? nil : $0 } ?? (fromConfig?[name]).flatMap { $0.isEmpty ? nil : $0 }
        }
        var found: S3Credentials
        if let key = env("AWS_ACCESS_KEY_ID"), let secret = env("AWS_SECRET_ACCESS_KEY") {
            found = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN"), profile: profile)
        } else if let key = setting("aws_access_key_id"), let secret = setting("aws_secret_access_key") {
            found = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: setting("aws_session_token"), profile: profile)
        } else {
            throw S3SettingsError("no S3 access key and secret key were found for the AWS profile '\(profile)'")
        }
        found.region = env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? fromConfig?["region"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        let endpoint = env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL") ?? fromConfig?["s3.endpoint_url"] ?? fromConfig?["endpoint_url"]
        found.endpoint = try endpoint.map { url throws(S3SettingsError) in try checkedEndpoint(url) }
        try found.check()
        return found
    }

    /// Refuses keys, tokens and regions that would not fit in a request header.
    func check() throws(S3SettingsError) {
        func plain(_ text: String, longest: Int) -> Bool {
            text.utf8.count <= longest && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
        }
        guard plain(accessKeyID, longest: 256), plain(secretAccessKey, longest: 256) else {
            throw S3SettingsError("the S3 access key or secret key has spaces, control or non-ASCII characters, or is too long")
        }
        guard plain(sessionToken ?? "x", longest: 8192) else { throw S3SettingsError("the S3 session token has spaces, control or non-ASCII characters") }
        guard !region.isEmpty, region.utf8.count <= 64, region.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
        else { throw S3SettingsError("'\(region)' is not an AWS region name (like eu-west-1)") }
    }

    /// `url` when it is `http://` or `https://`, a host and maybe a port and a path, with no
    /// user, query or fragment; without a final `/`.
    static func checkedEndpoint(_ url: String) throws(S3SettingsError) -> String {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.utf8.count <= 2048 else {
            throw S3SettingsError("the S3 endpoint '\(url)' is not an http:// or https:// URL")
        }
        let afterScheme = url.drop { $0 != ":" }.dropFirst(3)
        let authority = afterScheme.prefix { $0 != "/" }
        guard !authority.isEmpty, !url.contains("@"), !url.contains("?"), !url.contains("#"),
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { throw S3SettingsError("the S3 endpoint '\(url)' must be a scheme, a host and a port, with no user, query or spaces") }
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}
