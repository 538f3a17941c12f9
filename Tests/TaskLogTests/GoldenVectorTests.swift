import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskStore
import Testing

/// Replays the golden logs in Spec/vectors through the real binary: each must give exactly
/// the tasks, version vector and warnings its `.expected.json` lists.
@Suite("golden vectors")
struct GoldenVectorTests {
    static let vectors: String = {
        var dir = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { dir.deleteLastPathComponent() }
        return dir.appendingPathComponent("Spec/vectors").path
    }()

    static let names: [String] = {
        ((try? FileManager.default.contentsOfDirectory(atPath: vectors)) ?? [])
            .filter { $0.hasSuffix(".expected.json") }.map { String($0.dropLast(".expected.json".count)) }.sorted()
    }()

    struct Expected {
        var replica: String
        var placement: String
        var file: String
        var taskLines: [String]
        var version: [String: Int]
        var ending: String
        /// Each device's name, in the vectors that name one.
        var devices: [String: String]?
    }

    static func expected(_ name: String) throws -> Expected {
        let text = try String(contentsOfFile: "\(vectors)/\(name).expected.json", encoding: .utf8)
        let obj = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        return Expected(
            replica: obj["replica"] as! String, placement: obj["placement"] as! String, file: obj["file"] as! String,
            taskLines: taskLines(text), version: obj["version"] as! [String: Int], ending: obj["ending"] as! String,
            devices: obj["devices"] as? [String: String])
    }

    /// The task objects exactly as written, one per line.
    static func taskLines(_ text: String) -> [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("{\"id\":") }.map { line in
            var l = String(line)
            while l.hasSuffix(",") || l.hasSuffix("]") { l.removeLast() }
            return l
        }
    }

    @Test("every vector is listed and placed", arguments: names)
    func vectorReplaysToItsExpectedState(name: String) throws {
        let e = try Self.expected(name)
        let dir = TemporaryDirectory()
        let store = dir.sub("store")
        let fm = FileManager.default
        if e.placement == "store" {
            try fm.copyItem(atPath: "\(Self.vectors)/\(e.file)", toPath: store)
        } else {
            try fm.createDirectory(atPath: "\(store)/logs/\(e.replica)", withIntermediateDirectories: true)
            try "tasklog-store 1\nreplica \(e.replica)\n".write(toFile: "\(store)/tasklog-store", atomically: true, encoding: .utf8)
            try fm.copyItem(atPath: "\(Self.vectors)/\(name).tlog", toPath: "\(store)/logs/\(e.replica)/\(e.file)")
        }
        let r = try CLI.run(["list", "--all", "--json"], store: store)
        #expect(r.status == 0, "\(name): \(r)")
        #expect(Self.taskLines(r.stdout) == e.taskLines, "\(name)")
        if e.ending == "corrupt" {
            #expect(r.stderr.contains("tasklog: warning:"), "\(name): \(r.stderr)")
        } else {
            #expect(r.stderr.isEmpty, "\(name): \(r.stderr)")
        }
        let status = try JSONSerialization.jsonObject(with: Data(try CLI.run(["status", "--json"], store: store).stdout.utf8)) as! [String: Any]
        #expect(status["versionVector"] as? [String: Int] == e.version, "\(name)")
        if let names = e.devices {
            let devices = try JSONSerialization.jsonObject(with: Data(try CLI.run(["devices", "--json"], store: store).stdout.utf8)) as! [String: Any]
            let shown = (devices["devices"] as! [[String: Any]]).reduce(into: [String: String]()) { $0[$1["replica"] as! String] = $1["name"] as? String }
            #expect(shown == names, "\(name)")
        }
    }

    /// The decompressed payloads of every record (LZ4 output differs between library
    /// versions; what it decodes to must not).
    static func payloads(_ bytes: [UInt8]) throws -> [[UInt8]] {
        try bytes.withUnsafeBytes { buf in
            let scan = try SegmentScanner.scan(buf)
            return try scan.records.map { try RecordFraming.payload(of: $0, in: buf) }
        }
    }

    @Test("clean sealed vectors re-encode to the same header and record payloads")
    func sealedVectorsReencodeByteForByte() throws {
        var checked = 0
        for name in Self.names {
            let e = try Self.expected(name)
            guard e.placement == "sealed", e.ending == "clean" else { continue }
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.vectors)/\(name).tlog")))
            let decoded = try SegmentFile.decode(bytes)
            let again = SegmentFile.encode(replica: decoded.replica, commits: decoded.commits)
            #expect(Array(again.prefix(36)) == Array(bytes.prefix(36)), "\(name)")
            #expect(try Self.payloads(again) == Self.payloads(bytes), "\(name)")
            checked += 1
        }
        #expect(checked >= 2)
    }
}
