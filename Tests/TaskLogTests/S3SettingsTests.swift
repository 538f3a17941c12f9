import Foundation
import Testing
@_spi(Engine) import TaskSyncRemote

/// `s3://` locations, and the keys, region and endpoint found as the AWS tools find them.
@Suite("S3 settings")
struct S3SettingsTests {
    let dir = TemporaryDirectory()

    /// Writes `~/.aws/credentials` and `~/.aws/config` under the test's home folder.
    func aws(credentials: String? = nil, config: String? = nil) throws -> String {
        let folder = try dir.folder("home/.aws")
        if let credentials { try credentials.write(toFile: folder + "/credentials", atomically: true, encoding: .utf8) }
        if let config { try config.write(toFile: folder + "/config", atomically: true, encoding: .utf8) }
        return dir.sub("home")
    }

    @Test("s3://BUCKET/PREFIX reads into a bucket and a prefix ending in /; bad names and prefixes are refused")
    func locations() throws {
        #expect(try S3Location.parse("s3://my-bucket") == S3Location(bucket: "my-bucket", prefix: ""))
        #expect(try S3Location.parse("s3://my.bucket/a/b/") == S3Location(bucket: "my.bucket", prefix: "a/b/"))
        #expect(try S3Location.parse("s3://b12/tasks").description == "s3://b12/tasks/")
        for bad in ["http://b/x", "s3://", "s3://ab", "s3://Upper", "s3://-bucket", "s3://a..b", "s3://bkt/a//b", "s3://bkt/../x", "s3://bkt/a\u{7}"] {
            #expect(throws: S3SettingsError.self, "\(bad)") { try S3Location.parse(bad) }
        }
    }

    @Test("keys in the environment win over the files; region and endpoint from the environment")
    func environmentFirst() throws {
        let home = try aws(credentials: "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n")
        let env = ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "ENVSECRET", "AWS_SESSION_TOKEN": "TOKEN",
                   "AWS_DEFAULT_REGION": "eu-west-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/"]
        let found = try S3Credentials.resolve(environment: env, home: home)
        #expect(found == S3Credentials(accessKeyID: "ENVKEY", secretAccessKey: "ENVSECRET", sessionToken: "TOKEN", region: "eu-west-1", endpoint: "http://127.0.0.1:9000"))
        #expect(try S3Credentials.resolve(environment: env.merging(["AWS_REGION": "us-west-2"]) { $1 }, home: home).region == "us-west-2")
        #expect(!found.description.contains("ENVSECRET") && !found.description.contains("TOKEN"))
    }

    @Test("a named profile: keys from the credentials file, region and endpoint from [profile NAME] in the config file")
    func profiles() throws {
        let home = try aws(
            credentials: "# comment\n[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\n[work]\naws_access_key_id = W\naws_secret_access_key = WS\naws_session_token = WT\n",
            config: "[default]\nregion = eu-central-1\n[profile work]\nregion = ap-south-1\ns3 =\n  endpoint_url = http://10.0.0.1:8333\n  addressing_style = path\n[sso-session x]\nregion = nowhere\n")
        let work = try S3Credentials.resolve(environment: ["AWS_PROFILE": "work"], home: home)
        #expect(work == S3Credentials(accessKeyID: "W", secretAccessKey: "WS", sessionToken: "WT", region: "ap-south-1", endpoint: "http://10.0.0.1:8333", profile: "work"))
        let plain = try S3Credentials.resolve(environment: [:], home: home)
        #expect(plain == S3Credentials(accessKeyID: "D", secretAccessKey: "DS", region: "eu-central-1"))
    }

    @Test("keys in the config file alone, endpoint_url at the profile's top level, and files named by the environment")
    func configFileAlone() throws {
        let home = try aws(config: "[profile lab]\naws_access_key_id = L\naws_secret_access_key = LS\nendpoint_url = https://s3.lab.example\n")
        let lab = try S3Credentials.resolve(environment: ["AWS_PROFILE": "lab"], home: home)
        #expect(lab.accessKeyID == "L" && lab.endpoint == "https://s3.lab.example" && lab.region == "us-east-1")
        let elsewhere = dir.sub("elsewhere")
        try "[default]\naws_access_key_id = E\naws_secret_access_key = ES\n".write(toFile: elsewhere, atomically: true, encoding: .utf8)
        #expect(try S3Credentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": elsewhere], home: nil).accessKeyID == "E")
    }

    @Test("no keys, an unknown profile, a bad endpoint or region: one line each, with no secret in it")
    func refusals() throws {
        let home = try aws(credentials: "[default]\naws_access_key_id = K\naws_secret_access_key = TOPSECRET\n")
        let cases: [([String: String], String)] = [
            (["AWS_PROFILE": "nope"], "the AWS profile 'nope' is in neither"),
            (["AWS_ENDPOINT_URL": "ftp://x"], "not an http:// or https:// URL"),
            (["AWS_ENDPOINT_URL": "http://user@x"], "no user, query or spaces"),
            (["AWS_REGION": "EU WEST"], "not an AWS region name"),
        ]
        for (env, expected) in cases {
            let error = try #require(throws: S3SettingsError.self) { try S3Credentials.resolve(environment: env, home: home) }
            #expect(error.description.contains(expected) && !error.description.contains("TOPSECRET"), "\(error)")
        }
        let error = try #require(throws: S3SettingsError.self) { try S3Credentials.resolve(environment: [:], home: dir.sub("empty")) }
        #expect(error.description == "no S3 access key and secret key were found for the AWS profile 'default'")
    }

    @Test("hostile files are refused quickly: too large, a long line, a FIFO, a folder; binary junk finds no keys")
    func hostileFiles() throws {
        let folder = try dir.folder("hostile")
        try String(repeating: "x = y\n", count: 60_000).write(toFile: folder + "/large", atomically: true, encoding: .utf8)
        try ("[default]\naws_access_key_id = " + String(repeating: "k", count: 10_000)).write(toFile: folder + "/long", atomically: true, encoding: .utf8)
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 131) }).write(to: URL(fileURLWithPath: folder + "/junk"))
        for (name, expected) in [("large", "larger than 256 KiB"), ("long", "longer than"), ("fifo", "not a regular file"), ("", "not a regular file")] {
            let error = try #require(throws: S3SettingsError.self) {
                try S3Credentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": folder + "/" + name], home: nil)
            }
            #expect(error.description.contains(expected), "\(name): \(error)")
        }
        #expect(throws: S3SettingsError.self) { try S3Credentials.resolve(environment: ["AWS_SHARED_CREDENTIALS_FILE": folder + "/junk"], home: nil) }
    }
}
