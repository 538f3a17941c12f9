#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TaskLogCLI
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncRemote

/// The storages of `sync s3://…` and `sync webdav://…`, with their credentials read as
/// Spec/cli.md says: the AWS tools' variables and files, and the WebDAV password's sources.
enum RemoteFolders {
    static let s3SettingsHint =
        " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials; AWS_ENDPOINT_URL for a server other than AWS)"

    static let webDAVPasswordHint = "; give the password with --password-file, TASKLOG_WEBDAV_PASSWORD or ~/.netrc"

    static func storage(_ target: String, _ context: Context) throws -> any FolderStorage {
        if target.hasPrefix("s3://") {
            let location = try S3Location.parse(target)
            let credentials = try S3Credentials.resolve(environment: environment(), home: environment()["HOME"])
            return S3Storage(location, credentials: credentials)
        }
        let location = try WebDAVLocation.parse(target)
        let credentials = try WebDAVCredentials.find(for: location, passwordFile: try context.arguments.value(Options.passwordFile))
        return WebDAVStorage(location, credentials: credentials, trustedCertificates: try context.arguments.value(Options.tlsCA))
    }

    /// The process's environment.
    static func environment() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { out[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            p += 1
        }
        return out
    }
}
