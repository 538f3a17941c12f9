import Dispatch
import Synchronization

extension TaskStore {
    /// Every change that lands in the store from now on, whichever process or sync made it:
    /// the store's files are watched (with change notifications where the system has them,
    /// and polled every `pollInterval` seconds) and each change is read as it appears. The
    /// sequence ends when the consumer stops iterating.
    public func changes(pollInterval: Double = 1) -> AsyncStream<StoreChange> {
        let changes = observeChanges()
        let stop = StopFlag()
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { _ in stop.set() }
        try? Posix.makeDirectories(layout.logsDirectory)
        _ = try? catchUp()  // load now, so only later changes are reported
        let forward = Task {
            for await c in changes { continuation.yield(c) }
        }
        let roots = [layout.logsDirectory]
        DispatchQueue.global().async { [self] in
            let watcher = FileWatcher(roots: roots, pollInterval: pollInterval)
            while watcher.wait(shouldStop: { stop.isSet }) {
                _ = try? catchUp()  // announces what other processes wrote
            }
            forward.cancel()
            continuation.finish()
        }
        return stream
    }
}

/// A flag one thread sets and others read.
package final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    package init() {}
    package func set() { flag.store(true, ordering: .relaxed) }
    package var isSet: Bool { flag.load(ordering: .relaxed) }
}
