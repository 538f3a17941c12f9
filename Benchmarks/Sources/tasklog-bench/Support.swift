#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// `--name value` pairs and bare `--flag`s.
struct Arguments {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ args: ArraySlice<String>) {
        var i = args.startIndex
        while i < args.endIndex {
            let a = args[i]
            if a.hasPrefix("--"), i + 1 < args.endIndex, !args[i + 1].hasPrefix("--") {
                values[String(a.dropFirst(2))] = args[i + 1]
                i += 2
            } else {
                flags.insert(String(a.dropFirst(2)))
                i += 1
            }
        }
    }

    func int(_ k: String, _ d: Int) -> Int { values[k].flatMap { Int($0.replacingOccurrences(of: "_", with: "")) } ?? d }
    var repeats: Int { max(1, int("repeat", 3)) }
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func milliseconds(_ d: Duration) -> Double { seconds(d) * 1000 }

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("[tasklog-bench] \(text)\n".utf8))
}

func directorySize(_ path: String, matching: (String) -> Bool = { _ in true }) -> (bytes: Int, files: Int) {
    var bytes = 0
    var files = 0
    guard let e = FileManager.default.enumerator(atPath: path) else { return (0, 0) }
    while let f = e.nextObject() as? String {
        guard matching(f) else { continue }
        let attrs = try? FileManager.default.attributesOfItem(atPath: path + "/" + f)
        if attrs?[.type] as? FileAttributeType == .typeRegular {
            bytes += attrs?[.size] as? Int ?? 0
            files += 1
        }
    }
    return (bytes, files)
}

/// The scratch folder for a workload: `--dir`, else the temporary folder (or, for workloads
/// that should not wait on the disk, /dev/shm when it exists).
func temporaryBase(_ a: Arguments, _ name: String, memory: Bool = false) -> String {
    var root = a.values["dir"] ?? NSTemporaryDirectory()
    if a.values["dir"] == nil, memory, FileManager.default.fileExists(atPath: "/dev/shm") { root = "/dev/shm" }
    let base = root + "/tasklog-bench-\(name)-\(getpid())"
    try? FileManager.default.removeItem(atPath: base)
    return base
}

// MARK: Repetitions

/// Runs `body` once per repetition and folds the results: a number that differs between
/// repetitions becomes `{median, min, max, n, runs}`; values equal in every repetition (sizes,
/// counts) stay as they are.
func repeated(_ a: Arguments, _ name: String, _ body: (Int) throws -> [String: Any]) throws -> [String: Any] {
    var runs: [[String: Any]] = []
    for rep in 0..<a.repeats {
        progress("\(name): repetition \(rep + 1) of \(a.repeats)")
        runs.append(try body(rep))
    }
    return summarize(runs)
}

func summarize(_ runs: [[String: Any]]) -> [String: Any] {
    var out: [String: Any] = [:]
    guard let first = runs.first else { return out }
    for key in first.keys {
        let values = runs.compactMap { $0[key] }
        let numbers = values.compactMap(number)
        if numbers.count == values.count, !values.contains(where: { $0 is Bool }) {
            if Set(numbers).count == 1 {
                out[key] = values[0]
            } else {
                out[key] = summary(numbers)
            }
        } else {
            let same = values.allSatisfy { "\($0)" == "\(values[0])" }
            out[key] = same ? values[0] : values
        }
    }
    out["repetitions"] = runs.count
    return out
}

func summary(_ xs: [Double]) -> [String: Any] {
    ["median": median(xs), "min": xs.min()!, "max": xs.max()!, "n": xs.count, "runs": xs]
}

func number(_ v: Any) -> Double? {
    if v is Bool { return nil }
    if let i = v as? Int { return Double(i) }
    if let u = v as? UInt64 { return Double(u) }
    if let d = v as? Double { return d }
    return nil
}

// MARK: Output

func formatNumber(_ x: Double) -> String {
    if x == x.rounded(), abs(x) < 1e15 {
        return Int(x).formatted(.number.grouping(.automatic))
    }
    let a = abs(x)
    if a >= 1000 { return Int(x.rounded()).formatted(.number.grouping(.automatic)) }
    if a >= 100 { return String(format: "%.1f", x) }
    if a >= 10 { return String(format: "%.2f", x) }
    return String(format: "%.3g", x)
}

func describe(_ v: Any) -> String {
    if let d = v as? [String: Any], let m = d["median"].flatMap(number), let lo = d["min"].flatMap(number), let hi = d["max"].flatMap(number) {
        return "\(formatNumber(m)) (\(formatNumber(lo))–\(formatNumber(hi)))"
    }
    if let b = v as? Bool { return b ? "true" : "false" }
    if let x = number(v) { return formatNumber(x) }
    if let s = v as? String { return s }
    if JSONSerialization.isValidJSONObject([v]), let data = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys]) {
        return String(decoding: data, as: UTF8.self)
    }
    return "\(v)"
}

/// A two-column table: each key, and its median (min–max) over the repetitions.
func table(_ title: String, _ result: [String: Any]) -> String {
    var rows: [(String, String)] = []
    for key in result.keys.sorted() {
        let v = result[key]!
        if let list = v as? [[String: Any]] {
            for (i, item) in list.enumerated() {
                for k in item.keys.sorted() { rows.append(("\(key)[\(i)].\(k)", describe(item[k]!))) }
            }
        } else {
            rows.append((key, describe(v)))
        }
    }
    let w0 = max(7, rows.map(\.0.count).max() ?? 0)
    let w1 = max(22, rows.map(\.1.count).max() ?? 0)
    func pad(_ s: String, _ w: Int) -> String { s + String(repeating: " ", count: max(0, w - s.count)) }
    var out = "\(title)\n\(pad("measure", w0))  median (min–max)\n\(String(repeating: "-", count: w0))  \(String(repeating: "-", count: w1))\n"
    for (k, v) in rows { out += "\(pad(k, w0))  \(v)\n" }
    return out
}

// MARK: Child processes

/// Runs a program to completion with its output discarded.
/// - Returns: wall time in ms, peak resident set size in KiB, and the exit status.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> (ms: Double, maxRSSKiB: Int, status: Int32) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
    guard rc == 0 else { throw BenchError("cannot start \(path): errno \(rc)") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { throw BenchError("wait4 failed: errno \(errno)") }
    }
    let took = clock.now - start
    let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (milliseconds(took), Int(usage.ru_maxrss), exit)
}
