#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization
@_spi(Engine) import TaskCalDAV
import TaskLogCLI
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

extension Context {
    /// `sync caldav://…`: one exchange, or with --watch one now, then one whenever this store
    /// changes and one every `every` seconds (30 unless --interval says otherwise) for the server.
    func syncCalDAV(_ url: String, every: Double) throws -> Int32 {
        let password = try calDAVPassword()
        let watch = arguments.has(Flags.watch)
        let (store, bridge) = try storeForSync { store in
            let bridge = try CalDAVBridge(store: store, url: url, password: password, trustedCertificates: try arguments.value(Options.tlsCA))
            if !watch { describe(try bridge.sync(), always: true) }
            return bridge
        }
        guard !watch else { return try watchCalDAV(store, bridge, every: every) }
        report(store)
        return 0
    }

    private func watchCalDAV(_ store: TaskStore, _ bridge: CalDAVBridge, every: Double) throws -> Int32 {
        stopOnSignals()
        let poll = arguments.given(Options.interval) ? every : 30
        let gate = Mutex(try? store.version)
        // One exchange at a time; the version after it tells local changes from its own writes.
        let exchange: @Sendable () -> Void = {
            gate.withLock { last in
                do {
                    describe(try bridge.sync(), always: false)
                    last = try? store.version
                } catch {
                    Output.warning("\(error); retrying")
                }
            }
        }
        exchange()
        DispatchQueue.global().async {
            while !interrupted.isSet {
                for _ in 0..<Int(poll * 20) where !interrupted.isSet { usleep(50_000) }
                if !interrupted.isSet { exchange() }
            }
        }
        let watcher = FileWatcher(roots: [store.path + "/logs"], pollInterval: min(every, 1))
        while watcher.wait(shouldStop: { interrupted.isSet }) {
            let now = try? store.version
            if gate.withLock({ $0 != now }) { exchange() }
        }
        return 0
    }

    /// The password from --password-file (its first line), else $TASKLOG_CALDAV_PASSWORD, else
    /// none (the URL's, if it has one).
    private func calDAVPassword() throws -> String? {
        if let file = try arguments.value(Options.passwordFile) {
            return String(decoding: try readSecretLine(file, what: "password file"), as: UTF8.self)
        }
        return getenv("TASKLOG_CALDAV_PASSWORD").map { String(cString: $0) }
    }

    private func describe(_ r: CalDAVBridge.Report, always: Bool) {
        let moved = r.received + r.removedHere + r.sent + r.removedThere > 0
        if always || moved {
            Output.line("received \(r.received) task(s), removed \(r.removedHere) here; sent \(r.sent), removed \(r.removedThere) there")
        }
        for line in r.skipped { Output.warning("skipped \(line)") }
    }
}
