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
@_spi(Engine) import TaskSyncHTTP
@_spi(Engine) import TaskSyncRemote
@_spi(Engine) import WebPage

/// `serve` and `sync http(s)://…`: the commands that need the HTTP libraries. They live in
/// this separate executable so that every other command starts without loading them.
struct HTTPCommandSet: HTTPCommands {
    func sync(_ context: Context, peer url: String, every: Double) throws -> Int32 {
        url.hasPrefix("caldav") ? try context.syncCalDAV(url, every: every) : try context.syncHTTP(url, every: every)
    }

    func serve(_ context: Context) throws -> Int32 {
        try context.serve()
    }

    func folderStorage(_ target: String, _ context: Context) throws -> any FolderStorage {
        try RemoteFolders.storage(target, context)
    }

    func hint(for error: any Error) -> String? {
        switch error {
        case HTTPClientError.unauthorised(_): "; pass it with --token, --token-file or TASKLOG_TOKEN"
        case HTTPServerError.couldNotStart(_, _): " (--port, --bind, --tls-cert, --tls-key)"
        case CalDAVBridgeError.unauthorised(_): "; give the password with --password-file or TASKLOG_CALDAV_PASSWORD"
        case is S3SettingsError: RemoteFolders.s3SettingsHint
        case SyncError.credentialsRefused(_, _): RemoteFolders.webDAVPasswordHint
        default: nil
        }
    }
}

extension Context {
    func syncHTTP(_ url: String, every: Double) throws -> Int32 {
        let token = try token()
        var noted = Set<String>()
        let watch = arguments.has(Flags.watch)
        let (store, (engine, first)) = try storeForSync { store in
            let engine = HTTPSync(store: store, peer: url, token: token, trustedCertificates: try arguments.value(Options.tlsCA))
            let before = try stateBeforeSync(store)
            let first = try engine.sync()
            describe(first.report, since: before, in: store, always: !watch, noted: &noted)
            return (engine, first)
        }
        guard watch else {
            report(store)
            return 0
        }
        stopOnSignals()
        // Pull as the peer's changes feed reports changes; push as local changes land.
        let gate = Mutex(())
        let cursor = Mutex(first.cursor)
        let lastExchanged = Mutex(try? store.version)
        DispatchQueue.global().async {
            var warned = Set<String>()
            while !interrupted.isSet {
                do {
                    let (next, changed) = try engine.waitForChanges(after: cursor.withLock { $0 }, timeoutMs: 25_000)
                    cursor.withLock { $0 = next }
                    if changed {
                        let (before, r) = try gate.withLock { _ in (try stateBeforeSync(store), try engine.sync()) }
                        lastExchanged.withLock { $0 = try? store.version }
                        var quiet = Set<String>()
                        describe(r.report, since: before, in: store, always: false, noted: &quiet)
                        reportNew(store, noted: &warned)
                    }
                } catch {
                    Output.warning("\(error); retrying")
                    usleep(UInt32(min(every, 5) * 1_000_000))
                }
            }
        }
        let watcher = FileWatcher(roots: [store.path + "/logs"], pollInterval: every)
        while watcher.wait(shouldStop: { interrupted.isSet }) {
            // Push only when this store changed since the last exchange.
            let now = try? store.version
            guard lastExchanged.withLock({ $0 != now }) else { continue }
            do {
                let (before, r) = try gate.withLock { _ in (try stateBeforeSync(store), try engine.sync()) }
                lastExchanged.withLock { $0 = try? store.version }
                describe(r.report, since: before, in: store, always: false, noted: &noted)
                reportNew(store, noted: &noted)
            } catch {
                Output.warning("\(error); retrying")
            }
        }
        return 0
    }

    func serve() throws -> Int32 {
        _ = try positionals(0...0, "")
        let bind = try arguments.value(Options.bind) ?? "127.0.0.1"
        let port = try arguments.value(Options.port) ?? 4984
        if arguments.given(Options.token) && arguments.given(Options.tokenFile) {
            throw UsageError(message: "--token and --token-file exclude each other")
        }
        let token = try self.token()
        let loopback = bind == "127.0.0.1" || bind == "::1" || bind.hasPrefix("127.")
        if token == nil {
            guard arguments.has(Flags.allowGuest) else {
                throw UsageError(message: "serve needs a token (--token, --token-file or TASKLOG_TOKEN), or --allow-guest for unauthenticated access on loopback")
            }
            guard loopback else {
                throw UsageError(message: "--allow-guest is refused on \(bind): guests may only connect over loopback (127.0.0.1 or ::1); give a token instead")
            }
        }
        var tls: (certificate: String, key: String)?
        switch (try arguments.value(Options.tlsCert), try arguments.value(Options.tlsKey)) {
        case (nil, nil): break
        case (let c?, let k?):
            let pem = { (path: String, what: String) in String(decoding: try self.readInput(path, limit: 1 << 20, what: what), as: UTF8.self) }
            tls = (try pem(c, "certificate file"), try pem(k, "key file"))
        default: throw UsageError(message: "--tls-cert and --tls-key go together")
        }
        let store = try longRunningStore()
        let service = HTTPService(store: store, token: token, orders: ["urgency": HTTPService.urgencyOrder])
        let calendars = CalDAVService(store: store, onWrite: { service.bump() })
        var limits = service.limits
        limits.authorise = { method, path, header in WebPage.isPublic(method: method, path: path) || service.authorised(header: header) }
        // Each front end says which requests are its own: the page's files, CalDAV, then REST.
        let server = try HTTPServer(address: bind, port: port, limits: limits, tls: tls) {
            WebPage.handles($0) ? WebPage.handle($0) : CalDAVService.handles($0) ? calendars.handle($0) : service.handle($0)
        }
        stopOnSignals()
        service.startWatching()
        let scheme = tls == nil ? "http" : "https"
        let host = bind.contains(":") ? "[\(bind)]" : bind
        Output.line("serving \(store.path) on \(scheme)://\(host):\(server.port)\(token == nil ? " (guest mode, loopback only)" : "")")
        var noted = Set<String>()  // warnings met while serving (a pushed file's), each once
        while !interrupted.isSet {
            reportNew(store, noted: &noted)
            usleep(100_000)
        }
        service.shutdown()
        server.stop()
        store.waitForMaintenance()
        return 0
    }
}
