import Foundation
import Testing

/// Live changes across processes: `tasklog watch` and `tasklog sync DIR --watch`.
@Suite("watching for changes")
struct WatchTests {
    let dir = TemporaryDirectory()

    /// Polls `file` until it contains `text` or `timeout` seconds pass; returns the seconds taken.
    func waitFor(_ text: String, in file: String, timeout: Double = 5) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if let s = try? String(contentsOfFile: file, encoding: .utf8), s.contains(text) {
                return Date().timeIntervalSince(start)
            }
            usleep(10_000)
        }
        return nil
    }

    @Test("tasklog watch in one process shows another process's write within a second, and SIGTERM ends it cleanly")
    func watchShowsOtherProcessWrites() throws {
        let store = CLIStore(path: dir.sub("store"))
        try store.ok("init")
        let out = URL(fileURLWithPath: dir.sub("watch"))
        let watcher = try CLI.start(["watch", "--json"], store: store.path, output: out)
        defer { if watcher.isRunning { watcher.terminate() } }
        usleep(300_000)
        let id = try store.ok("add", "seen by the widget").trimmingCharacters(in: .newlines)
        let took = waitFor(id, in: out.path + ".out")
        #expect(took != nil && took! < 1.0, "took \(String(describing: took))")
        try store.ok("done", id)
        #expect(waitFor("\"done\":true", in: out.path + ".out") != nil)
        let line = try String(contentsOfFile: out.path + ".out", encoding: .utf8).split(separator: "\n").first!
        let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        #expect(obj["id"] as? String == id && obj["deleted"] as? Bool == false && (obj["task"] as? [String: Any])?["title"] as? String == "seen by the widget")
        watcher.terminate()
        watcher.waitUntilExit()
        #expect(watcher.terminationReason == .exit && watcher.terminationStatus == 0)
    }

    @Test("sync --watch on two replicas carries an edit across within a couple of seconds")
    func syncWatchCarriesEdits() throws {
        let shared = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        let a = CLIStore(path: dir.sub("a"))
        let b = CLIStore(path: dir.sub("b"))
        try a.ok("init")
        try b.ok("init")
        let pa = try CLI.start(["sync", shared, "--watch", "--interval", "5"], store: a.path, output: URL(fileURLWithPath: dir.sub("sa")))
        let pb = try CLI.start(["sync", shared, "--watch", "--interval", "5"], store: b.path, output: URL(fileURLWithPath: dir.sub("sb")))
        defer { for p in [pa, pb] where p.isRunning { p.terminate() } }
        let bOut = URL(fileURLWithPath: dir.sub("bwatch"))
        let bw = try CLI.start(["watch", "--json"], store: b.path, output: bOut)
        defer { if bw.isRunning { bw.terminate() } }
        usleep(300_000)
        let id = try a.ok("add", "travels").trimmingCharacters(in: .newlines)
        #expect(waitFor(id, in: bOut.path + ".out", timeout: 5) != nil)
        try b.ok("edit", id, "--title", "edited on b")
        let start = Date()
        var seen = false
        while Date().timeIntervalSince(start) < 5 {
            if try a.tasks().first?["title"] as? String == "edited on b" { seen = true; break }
            usleep(20_000)
        }
        #expect(seen)
        #expect(Date().timeIntervalSince(start) < 2.5, "took \(Date().timeIntervalSince(start)) s")
        for p in [pa, pb, bw] {
            p.terminate()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
    }
}
