#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// Set by SIGINT/SIGTERM; long-running commands finish their current step and exit 0.
package let interrupted = StopFlag()

package func stopOnSignals() {
    signal(SIGINT) { _ in interrupted.set() }
    signal(SIGTERM) { _ in interrupted.set() }
    // A parent may have started us with these signals blocked; they must reach the handlers.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &set, nil)
}

extension Context {
    /// The seconds `--interval` gives, else 1.
    func interval() throws(UsageError) -> Double {
        try arguments.value(Options.interval) ?? 1
    }

    func sync() throws -> Int32 {
        let target = try positionals(1...1, "TARGET (a folder, s3://, webdav:// or an http:// peer)")[0]
        if ["http://", "https://", "caldav://", "caldavs://"].contains(where: target.hasPrefix) {
            let every = try interval()
            guard let http else { return try HTTPTool.handOver() }
            return try http.sync(self, peer: target, every: every)
        }
        guard let storage = try folderStorage(target) else { return try HTTPTool.handOver() }
        return try syncFolder(storage)
    }

    /// `sync` with a shared folder in `storage`: once, or with --watch until interrupted. A
    /// local folder is watched for changes; a remote one is asked at each interval, which
    /// costs one request while nothing changes (Spec/sync-folder.md, "Idle syncs").
    private func syncFolder(_ storage: any FolderStorage) throws -> Int32 {
        let local = storage is LocalFolderStorage
        let every = !arguments.given(Options.interval) && !local ? Self.remoteInterval : try interval()
        let watch = arguments.has(Flags.watch)
        let (store, engine) = try storeForSync { store in
            let engine = try FolderSync(store: store, storage: storage, keyring: try folderKeyring(store, storage: storage))
            if !watch {
                var noted = Set<String>()
                let before = try stateBeforeSync(store)
                describe(try engine.sync(), since: before, in: store, always: true, noted: &noted)
            }
            return engine
        }
        guard watch else {
            report(store)
            return 0
        }
        stopOnSignals()
        let watcher = FileWatcher(roots: (local ? [storage.location] : []) + [store.path + "/logs"], pollInterval: every)
        var noted = Set<String>()  // each skipped file is reported once, not at every wake-up
        var synced = false  // a server that fails once it has answered is waited for
        repeat {
            let before = try stateBeforeSync(store)
            switch Result(catching: { () throws(SyncError) -> SyncReport in try engine.sync() }) {
            case .success(let r):
                synced = true
                describe(r, since: before, in: store, always: false, noted: &noted)
                reportNew(store, noted: &noted)
            case .failure(.folderMissing(let p)):
                Output.warning("the sync folder \(p) is missing; waiting for it to come back")
            case .failure(let e) where synced && e.isStorageFailure:
                Output.warning("\(e); trying again in \(Int(every)) s")
            case .failure(let e): throw e
            }
        } while watcher.wait(shouldStop: { interrupted.isSet })
        return 0
    }

    /// How often `sync --watch` asks a remote folder when no --interval is given: one small
    /// request each time while nothing changes.
    static let remoteInterval = 5.0

    package func token() throws -> String? {
        if let t = try arguments.value(Options.token) { return t }
        if let file = try arguments.value(Options.tokenFile) {
            let text = String(decoding: try readSecretLine(file, what: "token file"), as: UTF8.self).trimmingCharacters(in: " \t")
            guard !text.isEmpty else { throw CommandFailure(message: "the token file \(file) is empty") }
            return text
        }
        if let v = getenv("TASKLOG_TOKEN"), !String(cString: v).isEmpty { return String(cString: v) }
        return nil
    }

    /// Says what one exchange did (Spec/cli.md, "What sync says"): on a terminal, what changed
    /// in tasks; otherwise what moved, as before; both with --verbose; one object with --json.
    /// - Parameter before: the store's state just before the exchange (``stateBeforeSync(_:)``).
    package func describe(_ r: SyncReport, since before: TaskState?, in store: TaskStore, always: Bool, noted: inout Set<String>) {
        for s in r.skipped where noted.insert(s.path + "\u{0}" + s.reason).inserted {
            Output.warning("skipped \(s.path): \(s.reason)")
        }
        for f in r.forks where noted.insert(f.description).inserted { Output.warning(f.description) }
        guard always || r.operationsIn > 0 || r.operationsOut > 0 else { return }
        // Only operations from elsewhere change the state: with none, no task changed.
        let digest = r.operationsIn == 0 ? before.map { _ in SyncDigest() } : before.flatMap { before in
            (try? store.state()).map { SyncDigest(before: before, after: $0, own: store.replica, peerHeldOwnThrough: r.peerHeldOwnThrough) }
        }
        if json { return Output.line(Self.syncJSON(r, digest)) }
        let verbose = arguments.has(Flags.verbose)
        if let digest, verbose || Self.standardOutputIsTerminal {
            let sent = r.operationsOut > 0 ? "; sent \(Render.count(r.operationsOut, "operation")) from here" : ""
            Output.line(TerminalText.escaped(digest.line) + sent)
        }
        if verbose || !Self.standardOutputIsTerminal || digest == nil {
            Output.line(
                "received \(Render.count(r.operationsIn, "operation")) (\(Render.count(r.bytesIn, "byte")) in \(Render.count(r.filesIn, "file"))); "
                    + "sent \(Render.count(r.operationsOut, "operation")) (\(Render.count(r.bytesOut, "byte")) in \(Render.count(r.filesOut, "file")))")
        }
    }

    /// The state to compare after a sync, when its output will say what changed in tasks: piped
    /// syncs without --verbose or --json say only what moved, and need not load it.
    package func stateBeforeSync(_ store: TaskStore) throws -> TaskState? {
        json || arguments.has(Flags.verbose) || Self.standardOutputIsTerminal ? try store.state() : nil
    }

    private static func syncJSON(_ r: SyncReport, _ digest: SyncDigest?) -> String {
        var w = JSONWriter()
        for (i, side) in [(r.operationsIn, r.bytesIn, r.filesIn), (r.operationsOut, r.bytesOut, r.filesOut)].enumerated() {
            w.raw(i == 0 ? "{\"received\":{\"operations\":" : ",\"sent\":{\"operations\":")
            w.number(side.0)
            w.raw(",\"bytes\":")
            w.number(Int64(side.1))
            w.raw(",\"files\":")
            w.number(Int64(side.2))
            w.raw("}")
        }
        digest?.writeJSON(&w)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func watch() throws -> Int32 {
        _ = try positionals(0...0, "")
        let store = try writableStore()
        _ = try store.catchUp()
        stopOnSignals()
        let watcher = FileWatcher(roots: [store.path + "/logs"], pollInterval: 1)
        while watcher.wait(shouldStop: { interrupted.isSet }) {
            let changes = try store.catchUp()
            var text = ""
            for change in changes {
                for id in change.taskIDs {
                    guard let t = try store.task(id) else { continue }
                    text += json ? changeJSON(t, change) : changeLine(t, change, own: store.replica)
                    text += "\n"
                }
            }
            Output.out(text)
        }
        return 0
    }

    func changeJSON(_ t: TaskItem, _ c: StoreChange) -> String {
        var w = JSONWriter()
        w.change(t, closed: false)
        w.raw(",\"replica\":")
        w.string(c.replica.hex)
        w.raw(",\"seq\":")
        w.number(c.commit.firstSeq)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func changeLine(_ t: TaskItem, _ c: StoreChange, own: ReplicaID) -> String {
        let state = t.isDeleted ? "deleted" : t.isDone ? "done" : "open"
        let by = c.replica == own ? "this replica" : "replica \(c.replica.hex.prefix(8))"
        return "\(isoTime(c.commit.time))  \(Render.shortID(t.id))  \(state)  \(TerminalText.escaped(t.title))  (\(by))"
    }
}
