@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

extension TaskStore {
    /// The changes committed from now on: through this store object, and (noticed on each
    /// read) by other processes or syncs. ``changes(pollInterval:)`` also watches the files.
    package func observeChanges() -> AsyncStream<StoreChange> {
        let (stream, continuation) = AsyncStream<StoreChange>.makeStream(bufferingPolicy: .unbounded)
        let key = inner.withLock { inner in
            let key = inner.nextObserver
            inner.nextObserver += 1
            inner.observers[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.inner.withLock { $0.observers.removeValue(forKey: key) }
        }
        return stream
    }
}

func notify(_ observers: [Int: AsyncStream<StoreChange>.Continuation], _ change: StoreChange) {
    for (_, c) in observers { c.yield(change) }
}

/// One commit that landed in the store.
public struct StoreChange: Sendable {
    public var replica: ReplicaID
    public var commit: Commit
    /// Whether the commit was made through this store object.
    public var isLocal: Bool

    /// The tasks the commit touched, in order of first mention.
    public var taskIDs: [TaskID] {
        var seen = Set<TaskID>()
        return commit.operations.compactMap(\.task).filter { seen.insert($0).inserted }
    }
}
