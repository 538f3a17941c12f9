#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// The commands about the store as a whole: status, the log, replay and compaction.
extension Context {
    func status() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        let s = try store.status()
        let folders = FolderSync.syncedFolders(of: store)
        if json {
            var w = JSONWriter()
            w.raw("{\"replica\":")
            w.string(s.replica.hex)
            w.raw(",\"versionVector\":{")
            for (i, e) in s.version.sortedEntries.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(e.replica.hex)
                w.raw(":")
                w.number(e.seq)
            }
            w.raw("},\"ops\":")
            w.number(s.operations)
            w.raw(",\"tasks\":")
            w.number(Int64(s.tasks))
            w.raw(",\"bytes\":")
            w.number(Int64(s.bytes))
            w.raw(",\"segments\":")
            w.number(Int64(s.segments))
            w.raw(",\"store\":")
            w.string(storePath)
            w.raw(",\"folders\":[")
            for (i, f) in folders.enumerated() {
                w.raw(i > 0 ? ",{\"path\":" : "{\"path\":")
                w.string(f.path)
                w.raw(f.isEncrypted ? ",\"encrypted\":true,\"epoch\":" : ",\"encrypted\":false,\"epoch\":")
                if let e = f.epoch { w.number(Int64(e)) } else { w.raw("null") }
                w.raw("}")
            }
            w.raw("]}\n")
            Output.bytes(w.bytes)
        } else {
            Output.line("store     \(storePath)")
            Output.line("replica   \(s.replica.hex)")
            Output.line("tasks     \(s.tasks)")
            Output.line("ops       \(s.operations)")
            Output.line("segments  \(s.segments)")
            Output.line("bytes     \(s.bytes)")
            for e in s.version.sortedEntries {
                Output.line("version   \(e.replica.hex) \(e.seq)\(e.replica == s.replica ? " (this replica)" : "")")
            }
            for f in folders {
                Output.line("folder    \(f.path) (\(f.epoch.map { "encrypted, key epoch \($0)" } ?? "plaintext"))")
            }
        }
        report(store)
        return 0
    }

    func log() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { return 0 }
        let filter = try arguments.value(Options.replica)
        var text = ""
        for (replica, commit) in try store.history() {
            if let f = filter, !replica.hex.hasPrefix(f.lowercased()) { continue }
            for (i, op) in commit.operations.enumerated() {
                text += Render.operation(op, replica: replica, seq: commit.firstSeq + UInt64(i), time: commit.time, json: json)
                text += "\n"
            }
            if text.utf8.count > 1 << 16 {
                Output.out(text)
                text = ""
            }
        }
        Output.out(text)
        report(store)
        return 0
    }

    func replay() throws -> Int32 {
        _ = try positionals(0...0, "")
        if arguments.given(Options.from) || arguments.given(Options.until) {
            guard !arguments.has(Flags.verify) else { throw UsageError(message: "--verify checks the store's own saved state; it does not combine with --from or --until") }
            return try replayLogs()
        }
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        let (state, warnings) = try store.replay()
        for w in warnings { Output.warning(w.description) }
        if arguments.has(Flags.verify) {
            let verified = try store.verify()
            guard warnings.isEmpty else {
                throw CommandFailure(message: "the logs have damaged or foreign files (see the warnings above); the saved state was checked against what is readable")
            }
            let now = Int64(Posix.wallClockMilliseconds())
            if let problem = try Urgency.planProblems(in: store, now: now, zone: LocalZone()).first {
                throw CommandFailure(message: "\(problem); the plan is a cache of the snapshot: 'tasklog compact' writes both afresh")
            }
            if json {
                var w = JSONWriter()
                w.raw("{\"verified\":true,\"ops\":")
                w.number(verified.operations)
                w.raw(",\"savedOps\":")
                if let saved = verified.saved { w.number(saved) } else { w.raw("null") }
                w.raw("}\n")
                Output.bytes(w.bytes)
            } else if let saved = verified.saved {
                Output.line("verified: the saved state, brought up to date from the logs, matches them (\(verified.operations) operations, \(saved) of them saved)")
            } else {
                Output.line("no saved state yet; the logs replay cleanly (\(verified.operations) operations)")
            }
            return 0
        }
        if json {
            var w = JSONWriter()
            w.taskArray(TaskQuery(status: .all).apply(to: state.liveTasks))
            w.raw("\n")
            Output.bytes(w.bytes)
        } else {
            Output.line(Render.replayed(state, live: state.liveCount))
        }
        return 0
    }

    func compact() throws -> Int32 {
        _ = try positionals(0...0, "")
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        for w in try store.compact() { Output.warning(w.description) }
        let s = try store.status()
        Output.line("compacted: \(Render.count(s.operations, "operation")) in \(Render.count(s.segments, "segment file")), \(Render.count(s.bytes, "byte"))")
        report(store)
        return 0
    }

    /// The bytes of the file at `path` (`-` is standard input), refused past `limit` bytes.
    package func readInput(_ path: String, limit: Int = .max, what: String = "file") throws -> [UInt8] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandFailure(message: "cannot open \(path): \(systemErrorText(errno))") }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: limit < 1 << 16 ? limit + 1 : 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandFailure(message: "cannot read \(path): \(systemErrorText(errno))")
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit {
                throw CommandFailure(message: "the \(what) \(path) is longer than \(limit) bytes; check that it is the right file")
            }
        }
    }

    /// The first line of a small file holding a secret (a passphrase, token or password),
    /// read no further than ``secretFileLimit`` bytes.
    package func readSecretLine(_ path: String, what: String) throws -> [UInt8] {
        let bytes = try readInput(path, limit: Self.secretFileLimit, what: what)
        return Array(bytes.prefix { $0 != 10 && $0 != 13 })
    }

    /// The most a secret file may hold: a passphrase, token or password is a line, not a file.
    package static let secretFileLimit = 4096

    func completion() throws -> Int32 {
        let shell = try positionals(1...1, "SHELL (bash, zsh or fish)")[0]
        guard let script = Completion.script(shell) else { throw UsageError(message: "completion takes bash, zsh or fish, got '\(shell)'") }
        Output.out(script)
        return 0
    }
}
