import Foundation
@_spi(Engine) import TaskModel
import Testing

@testable import tasklog_bench

/// The benchmark tool's own behaviour: it reads the peer harness's operation stream as the
/// harness writes it, generates the same shape of work when the harness is absent, runs a
/// workload end to end as the real binary, and its report renders the results it keeps.
@Suite("tasklog-bench")
struct BenchmarkTests {
    static let first = "5f0c6b8e-3d2a-4c1b-9e7f-0a1b2c3d4e5f"
    static let second = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"

    /// Lines in the form of the harness's `ops.jsonl` (one compact JSON object per line; a
    /// create carries `done` and `createdAt`, which the replay does not need).
    static let stream = """
        {"op":"create","ts":1767225600000,"rep":"dev-A","id":"\(first)","title":"Buy milk for the weekend","done":false,"priority":2,"createdAt":1767225600123}
        {"op":"create","ts":1767225601000,"rep":"dev-A","id":"\(second)","title":"Call the dentist","done":false,"priority":0,"createdAt":1767225660456}
        {"op":"set","ts":1767225602000,"rep":"dev-A","id":"\(first)","f":"title","v":"Buy oat milk"}
        {"op":"set","ts":1767225603000,"rep":"dev-A","id":"\(first)","f":"done","v":true}
        {"op":"set","ts":1767225604000,"rep":"dev-A","id":"\(first)","f":"priority","v":3}
        {"op":"set","ts":1767225605000,"rep":"dev-A","id":"\(first)","f":"due","v":1767312000000}
        {"op":"set","ts":1767225606000,"rep":"dev-A","id":"\(first)","f":"due","v":1767312000001}
        {"op":"set","ts":1767225607000,"rep":"dev-A","id":"\(first)","f":"notes","v":"bring the receipt"}
        {"op":"del","ts":1767225608000,"rep":"dev-A","id":"\(second)"}

        """

    @Test("ops.jsonl lines in the peer harness's form parse into the operations they describe")
    func peerStreamParses() throws {
        let ops = try OpsFile.load(Array(Self.stream.utf8))
        let a = TaskID(Self.first)!
        let b = TaskID(Self.second)!
        #expect(ops == [
            .create(id: a, title: "Buy milk for the weekend", priority: 2, time: 1_767_225_600_000),
            .create(id: b, title: "Call the dentist", priority: 0, time: 1_767_225_601_000),
            .set(id: a, write: .title("Buy oat milk"), time: 1_767_225_602_000),
            .set(id: a, write: .done(true), time: 1_767_225_603_000),
            .set(id: a, write: .priority(3), time: 1_767_225_604_000),
            .set(id: a, write: .due(.date(days: 20_455)), time: 1_767_225_605_000),
            .set(id: a, write: .due(.instant(milliseconds: 1_767_312_000_001)), time: 1_767_225_606_000),
            .set(id: a, write: .notes("bring the receipt"), time: 1_767_225_607_000),
            .delete(id: b, time: 1_767_225_608_000),
        ])
    }

    @Test("an ops.jsonl line the replay cannot read is refused with an error that names what is wrong")
    func malformedLineIsRefused() throws {
        let unknownField = #"{"op":"set","ts":1,"rep":"dev-A","id":"\#(Self.first)","f":"colour","v":"red"}"#
        #expect(throws: BenchError.self) { try OpsFile.load(Array((unknownField + "\n").utf8)) }
        do {
            _ = try OpsFile.parse(Array(unknownField.utf8))
        } catch {
            #expect("\(error)".contains("colour"))
        }
        let noID = #"{"op":"del","ts":1,"rep":"dev-A"}"#
        #expect(throws: BenchError.self) { try OpsFile.parse(Array(noID.utf8)) }
    }

    @Test("the seeded W1 generator repeats itself and has the harness's shape: the creates, then uniform updates mixed 30/30/20/10/10")
    func generatorShape() throws {
        var g1 = W1Generator(rng: SplitMix64(seed: 7))
        var g2 = W1Generator(rng: SplitMix64(seed: 7))
        let ops = g1.make(tasks: 500, updates: 20_000)
        #expect(ops == g2.make(tasks: 500, updates: 20_000))
        var creates: [TaskID] = []
        var counts: [String: Int] = [:]
        var touched: [TaskID: Int] = [:]
        for (i, op) in ops.enumerated() {
            switch op {
            case .create(let id, let title, let priority, _):
                #expect(i < 500 && !title.isEmpty && priority <= 3)
                creates.append(id)
            case .set(let id, let write, _):
                #expect(i >= 500)
                touched[id, default: 0] += 1
                switch write {
                case .title: counts["title", default: 0] += 1
                case .done: counts["done", default: 0] += 1
                case .priority: counts["priority", default: 0] += 1
                case .due: counts["due", default: 0] += 1
                case .notes: counts["notes", default: 0] += 1
                default: Issue.record("unexpected write \(write)")
                }
            case .delete:
                Issue.record("W1 has no deletes")
            }
        }
        #expect(Set(creates).count == 500)
        #expect(Set(touched.keys).isSubset(of: Set(creates)) && touched.count > 490)
        for (field, share) in ["title": 0.30, "done": 0.30, "priority": 0.20, "due": 0.10, "notes": 0.10] {
            let seen = Double(counts[field] ?? 0) / 20_000
            #expect(abs(seen - share) < 0.015, "\(field): \(seen) of the updates, \(share) expected")
        }
        var other = W1Generator(rng: SplitMix64(seed: 8))
        #expect(other.make(tasks: 500, updates: 20_000) != ops)
    }

    @Test("tasklog-bench w1, run as the real binary on the harness's stream and on its own, builds a store, reads every task back and reports the figures")
    func w1RunsEndToEnd() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-bench-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.stream.write(toFile: dir + "/ops.jsonl", atomically: true, encoding: .utf8)

        let replayed = try Self.runBench(["w1", "--ops", dir + "/ops.jsonl", "--repeat", "1", "--dir", dir, "--json", dir + "/a.json"])
        #expect(replayed["logical_ops"] as? Int == 9)
        #expect(replayed["tasks_read"] as? Int == 1, "the second task was deleted")

        let generated = try Self.runBench(["w1", "--tasks", "300", "--updates", "3000", "--repeat", "2", "--dir", dir, "--json", dir + "/b.json"])
        #expect(generated["logical_ops"] as? Int == 3300)
        #expect(generated["tasks_read"] as? Int == 300)
        // A figure is a number when the repetitions agree, else {median, min, max, …}: even the
        // bytes at rest depend on when the background seals and merges ran.
        func median(_ key: String) -> Double {
            generated[key] as? Double ?? (generated[key] as? [String: Any])?["median"] as? Double ?? 0
        }
        for key in ["ops_per_s", "open_and_read_all_ms", "open_and_read_once_ms", "cold_replay_ms"] {
            #expect(median(key) > 0, "\(key): \(String(describing: generated[key]))")
        }
        let bytesPerOp = median("log_bytes_per_op_at_rest")
        #expect(bytesPerOp > 1 && bytesPerOp < 100, "\(bytesPerOp) bytes per op")
        let leftBehind = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("tasklog-bench-") }
        #expect(leftBehind.isEmpty, "stores left behind without --keep: \(leftBehind)")
    }

    @Test("tasklog-bench w3 through the library, a shared folder and HTTP, run as the real binary: each side gets the other's diverging operations and both end identical")
    func w3ConvergesEveryWay() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-bench-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var live: Set<Int> = []
        for workload in ["w3", "w3-folder", "w3-http"] {
            let out = try Self.runBench([workload, "--tasks", "200", "--diverge", "1000", "--repeat", "1", "--json", dir + "/\(workload).json"])
            #expect(out["converged"] as? Bool == true, "\(workload)")
            #expect(out["diverging_ops_per_side"] as? Int == 1000)
            if workload == "w3" { #expect(out["ops_into_a"] as? Int == 1000 && out["ops_into_b"] as? Int == 1000) }
            if workload == "w3-http" { #expect(out["ops_in"] as? Int == 1000 && out["ops_out"] as? Int == 1000) }
            let tasks = out["live_tasks"] as? Int ?? 0
            #expect(tasks > 150 && tasks < 200, "about 1% of 2,000 operations delete one of 200 tasks: \(tasks) left")
            live.insert(tasks)
        }
        #expect(live.count == 1, "the same seeded divergence every way: \(live)")
    }

    @Test("report.py renders the kept results into the README's tables: the figures, then the targets as ratios")
    func reportRendersKeptResults() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tasklog-report-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let readme = dir + "/README.md"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", Self.package + "/report.py", "render", "--results", Self.package + "/results",
                       "--readme", readme, "--intro", Self.package + "/README.md"]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        #expect(text.hasPrefix("# Benchmarks"))
        for part in ["## Results", "Run started", "### The targets as ratios", "| W1 history bytes per op ≤ 16 |",
                     "| W2 cold rebuild from the logs, ms ≤ 60 ms |", "| W4 `tasklog list --all --json`, ms ≤ 15 ms |"] {
            #expect(text.contains(part), "missing \(part)")
        }
    }

    /// The Benchmarks package's folder.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Runs the `tasklog-bench` built beside this test bundle; returns the JSON it wrote to `--json`.
    static func runBench(_ arguments: [String]) throws -> [String: Any] {
        let products = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        let p = Process()
        p.executableURL = products.appendingPathComponent("tasklog-bench")
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        p.standardError = errors
        try p.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "tasklog-bench \(arguments.joined(separator: " ")): \(stderr)")
        let path = arguments[arguments.firstIndex(of: "--json")! + 1]
        return try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    }
}
