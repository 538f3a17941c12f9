#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
import Dispatch
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskModel

/// A task list stored as this device's append-only operation log plus the logs of the
/// replicas it has synced with, in one folder.
///
/// Several processes may open the same folder at once: appends are serialised by an advisory
/// lock held only while writing, and each read first catches up with what other processes
/// wrote. One `TaskStore` per folder per process is enough; it is safe to share between threads.
///
/// ```swift
/// let store = try TaskStore.open(at: folder)
/// let milk = try store.add(NewTask(title: "Buy milk", tags: ["home"]))
/// try store.complete([milk.id])
/// for task in try store.tasks(TaskQuery(status: .all)) {
///     print(task.title, task.isDone ? "done" : "open")
/// }
/// ```
public final class TaskStore: Sendable {
    /// How a store trades durability for speed.
    public struct Options: Sendable {
        /// fsync every commit before it is acknowledged (default). Without it a commit
        /// survives a process crash but may be lost on power failure.
        public var durable: Bool = true
        /// Seal the tail into an immutable segment once it passes this many bytes.
        public var sealThreshold: Int = 1 << 20
        /// With ``sealsInBackground`` and a ``lockLease``: when a burst of commits ends (its
        /// lease runs out) leaving a tail longer than this many bytes, seal it in the
        /// background, so that the log at rest is compressed and other processes opening the
        /// store read a short tail.
        public var idleSealThreshold: Int = 64 << 10
        /// Merge this replica's newest segments while their total stays under this many bytes.
        public var mergeTarget: Int = 4 << 20
        /// With ``sealsInBackground``, the longest the tail may grow while commits outpace the
        /// background seals (a burst writes about three times faster than a seal compresses);
        /// the commit that passes it seals the tail itself. It bounds the tail every reader
        /// scans. Nil: sixteen times ``sealThreshold`` (16 MiB by default).
        public var tailLimit: Int?
        /// Seal, merge and save the snapshot on a background thread (at a lower priority) rather than inside the
        /// commit that crosses ``sealThreshold``, which then returns as fast as any other.
        /// Turn it off in short-lived processes (the CLI does: a process may exit before
        /// the work is done) and where runs must be reproducible (the simulator).
        public var sealsInBackground: Bool = true
        /// Do the work ``sealsInBackground`` queues on the committing thread, after the commit
        /// has released the locks (reproducible runs of the simulator).
        package var maintenanceOnCallingThread = false
        /// After a commit, keep the store lock this long (from when it was taken; at most
        /// 10 ms) so that a burst of commits takes it once. A commit after it has run out
        /// carries it on for as long again while no other writer says it waits for the lock
        /// (this library's writers do), up to 10 ms from taking it: a writer that says so
        /// waits at most this much longer, any other at most 10 ms. Zero releases it after
        /// every commit. A store object dropped during its lease lives on until the lease
        /// ends, and then releases the lock, as it lives on through a background seal;
        /// ``waitForMaintenance()`` ends the lease at once.
        public var lockLease: Duration = .milliseconds(1)
        /// Save a snapshot when opening replays more than this many operations past the last one.
        public var snapshotAfterOperations: UInt64 = 2048
        /// The wall clock in milliseconds since the epoch (tests may pin it).
        public var wallClock: @Sendable () -> UInt64 = { Posix.wallClockMilliseconds() }
        /// The replica id of a store this open creates (nil: a random one). For tests and
        /// simulations that must be reproducible.
        public var newReplicaID: ReplicaID?
        /// The whole-file operations of seals and merges (tests stop them midway).
        package var fileSystem: any LogFileSystem = PosixFileSystem()
        /// The clock and timer the lock lease runs on (tests move it by hand).
        package var leaseClock: any LeaseClock = SystemLeaseClock()

        public init() {}
    }

    /// The store folder.
    public let path: String
    /// This store's replica (device) id. It changes only when a fork is resolved against this
    /// store's own branch (Spec/sync-folder.md, "Forks").
    public var replica: ReplicaID { identity.withLock { $0 } }
    let identity: Mutex<ReplicaID>
    let layout: StoreLayout
    package let options: Options
    /// How long a commit keeps the lock afterwards (``Options/lockLease``, at most 10 ms).
    let leaseNanoseconds: UInt64
    let inner: Mutex<Inner>
    /// Background seals, merges and snapshots (``Options/sealsInBackground``), one at a time
    /// (a seal is queued only when none is), each on a thread of its own at a lower priority.
    let maintenanceRunning = DispatchGroup()
    let undoGroupsOpen = Atomic<Int>(0)  // the undoable(_:_:) calls running: only then do commits look for their group

    struct Inner: ~Copyable {
        var writer: TailWriter
        var state: TaskState?
        var warnings: [StoreWarning] = []
        var observers: [Int: AsyncStream<StoreChange>.Continuation] = [:]
        var nextObserver = 0
        var snapshotVersion = VersionVector()
        /// The tails as they were when last read into `state`.
        var tails: [ReplicaID: TailMark] = [:]
        /// The lock file (opened on the first write) and the lease kept on it.
        var lock = StoreLock.Handle()
        /// The identity file's version when the state was loaded: resolving a fork rewrites the
        /// file, telling every process to load the state afresh.
        var identityVersion: FileVersion?
        /// The last commit of each replica this store object integrated or compared, so that the
        /// next integration need not read it back from the logs (dropped when they may change).
        var lastIntegrated: [ReplicaID: Commit] = [:]
        /// A background seal is queued or running.
        var sealQueued = false
        /// ``TaskStore/tasks(_:)`` was called: later listings load the state.
        var hasRead = false
        /// The seal queued for the calling thread (``Options/maintenanceOnCallingThread``).
        var sealWaiting: (replica: ReplicaID, mark: TailMark)?
        /// The last background seal failed: the next one runs in the commit, which reports why.
        var sealInCommit = false
        /// The snapshot as a listing last read and checked it (``VerifiedSnapshot``).
        var verifiedSnapshot: VerifiedSnapshot?

        /// Keeps the warnings not already kept.
        mutating func note(_ found: [StoreWarning]) {
            for w in found where !warnings.contains(w) { warnings.append(w) }
        }

        deinit {
            var writer = writer
            writer.release()
            var lock = lock
            lock.release()
        }
    }

    private init(path: String, replica: ReplicaID, options: Options) {
        self.path = path
        identity = Mutex(replica)
        self.options = options
        leaseNanoseconds = min(UInt64(max(0, options.lockLease.nanoseconds)), StoreLock.longestLeaseNanoseconds)
        layout = StoreLayout(root: path)
        inner = Mutex(Inner(writer: TailWriter(layout: layout, replica: replica, options: options)))
    }

    /// Opens the store at `path`, creating it (and a new replica id) if `create` and it does not exist.
    /// - Throws: ``StoreError/storeNotFound(path:)`` when it does not exist and `create` is false.
    public static func open(at path: String, create: Bool = true, options: Options = Options()) throws(StoreError) -> TaskStore {
        let layout = StoreLayout(root: path)
        if Posix.exists(path) && !Posix.isDirectory(path) { throw .notAStore(path: path, reason: "it is a file, not a folder") }
        if let bytes = try Posix.readFile(layout.identityFile) {
            return TaskStore(path: path, replica: try StoreIdentity.decode(bytes, path: path), options: options)
        }
        guard create else { throw .storeNotFound(path: path) }
        try Posix.makeDirectories(path)
        let replica = try StoreLock.holding(layout.lockFile) { () throws(StoreError) -> ReplicaID in
            if let bytes = try Posix.readFile(layout.identityFile) {  // another process won the race
                return try StoreIdentity.decode(bytes, path: path)
            }
            let replica = options.newReplicaID ?? ReplicaID.random()
            try Posix.makeDirectories(layout.logDirectory(replica))
            try Posix.fsyncDirectory(layout.logsDirectory)
            try Posix.writeAtomically(layout.tailFile(replica), SegmentCodec.tail(replica, firstSeq: 1, clock: .zero))
            try Posix.writeAtomically(layout.deviceKeyFile, (0..<32).map { _ in UInt8.random(in: 0...255) })
            try Posix.writeAtomically(layout.identityFile, StoreIdentity.encode(replica))
            return replica
        }
        return TaskStore(path: path, replica: replica, options: options)
    }

    // MARK: Reading

    /// Runs `body` on the state brought up to date with every process's writes.
    func withState<R>(_ body: (borrowing TaskState) throws(StoreError) -> R) throws(StoreError) -> R {
        try inner.withLock { (inner) throws(StoreError) -> R in
            try refresh(&inner)
            return try body(inner.state!)
        }
    }

    /// Loads the state (snapshot + the log after it) on first use; afterwards applies what
    /// other processes (or syncs) appended since.
    @discardableResult
    func refresh(_ inner: inout Inner) throws(StoreError) -> [StoreChange] {
        let reader = LogReader(layout: layout)
        try followIdentityFile(&inner)
        if inner.state == nil {
            try finishInterruptedRewrite(&inner)
            var state = TaskState()
            var fromSnapshot = false
            if let bytes = try Posix.mapFile(layout.snapshotFile) {
                switch Snapshot.decode(bytes) {
                case .success(let s):
                    state = s
                    fromSnapshot = true
                case .failure where Snapshot.isOlderVersion(bytes): break
                case .failure(let e):
                    inner.warnings.append(StoreWarning(
                        path: layout.snapshotFile, message: "\(e); rebuilding the state from the logs"))
                }
            }
            inner.snapshotVersion = state.version
            let outcome: LogReader.Outcome
            if fromSnapshot {
                outcome = try reader.catchUp(&state, tails: &inner.tails)
            } else {
                (state, outcome) = try reader.rebuild(tails: &inner.tails)
            }
            inner.warnings += outcome.warnings
            inner.state = state
            if outcome.appliedOperations > options.snapshotAfterOperations {
                try? saveSnapshot(&inner)
            }
            return []
        }
        var state = inner.state.take()!
        defer { inner.state = state }
        var changes: [StoreChange] = []
        let observers = inner.observers
        let outcome = try reader.catchUp(&state, tails: &inner.tails) { replica, commit in
            let change = StoreChange(replica: replica, commit: commit, isLocal: false)
            notify(observers, change)
            changes.append(change)
        }
        inner.note(outcome.warnings)
        return changes
    }

    /// Adopts the identity file if it changed since the state was loaded: on first use, or
    /// after a fork resolution rewrote the logs, reading starts from the files.
    func followIdentityFile(_ inner: inout Inner) throws(StoreError) {
        let identityVersion = Posix.version(of: layout.identityFile)
        if identityVersion != inner.identityVersion {
            try adoptIdentity(&inner)
            inner.identityVersion = identityVersion
        }
    }

    /// Reads what other processes (or syncs) wrote since this store object last read.
    /// - Returns: the commits that were new to it, in the order they were applied (none on
    ///   the first call, which loads the state).
    @_spi(Engine) public func catchUp() throws(StoreError) -> [StoreChange] {
        try inner.withLock { (inner) throws(StoreError) -> [StoreChange] in try refresh(&inner) }
    }

    func saveSnapshot(_ inner: inout Inner) throws(StoreError) {
        guard let state = inner.state else { return }
        let snapshot = Snapshot.encode(state)
        try Posix.writeAtomically(layout.snapshotFile, snapshot, cached: false)
        inner.snapshotVersion = state.version
        savePlan(ofSnapshot: snapshot)
    }

    /// Problems met while reading (damaged or foreign files); reading went on past each.
    public var warnings: [StoreWarning] { inner.withLock { $0.warnings } }

    /// The live tasks matching `query`, sorted and limited as it asks, with every process's
    /// writes so far. The store picks how to read them: a few named tasks through the
    /// snapshot's task index, a store object's first listing straight from the snapshot,
    /// and otherwise the state it loads once and then keeps up to date.
    public func tasks(_ query: TaskQuery = TaskQuery()) throws(StoreError) -> [TaskItem] {
        let firstRead = inner.withLock { inner in
            defer { inner.hasRead = true }
            return !inner.hasRead && inner.state == nil
        }
        if let ids = query.ids {
            return query.apply(to: Array(try liveTasks(ids).values))
        }
        if firstRead {
            var items: [TaskItem] = []
            do {
                try scanTasks(query) { items.append($0) }
                return items
            } catch .damagedSnapshot {
                // Set aside by the scan: the state below is rebuilt from the logs.
            }
        }
        return try withState { $0.tasks(query) }
    }

    /// Hands the tasks matching `query` to `body` one at a time, in the query's order (a long
    /// listing never holds every task at once).
    package func forEachTask(_ query: TaskQuery, _ body: (TaskItem) -> Void) throws(StoreError) {
        try withState { $0.forEachTask(query, body) }
    }

    /// The task with this exact id, live or deleted (nil if never seen); through the snapshot's index when it can.
    public func task(_ id: TaskID) throws(StoreError) -> TaskItem? {
        if let answered = try indexedTask(id) { return answered }
        if let live = try liveTasks([id])[id] { return live }
        return try withState { $0.task(id) }
    }

    /// The id of the task that `text` names: an exact id, or a unique prefix of at least
    /// 4 characters. It is found, or refused, without loading the state when the snapshot
    /// allows (``resolveSaved(_:includeDeleted:)``).
    /// - Parameter includeDeleted: also match deleted tasks (for `restore`).
    package func resolve(_ text: String, includeDeleted: Bool = false) throws(StoreError) -> TaskID {
        if let answered = try resolveSaved(text, includeDeleted: includeDeleted) { return try answered.get() }
        return try withState { (state) throws(StoreError) -> TaskID in
            if let exact = TaskID(text), state.task(exact) != nil, includeDeleted || state.isLive(exact) {
                return exact
            }
            guard text.utf8.count >= 4 else { throw .taskNotFound(text) }
            let candidates = (includeDeleted ? state.allTasks : state.liveTasks)
                .filter { $0.id.rawValue.hasPrefix(text) }.map(\.id).sorted()
            guard let first = candidates.first else { throw .taskNotFound(text) }
            guard candidates.count == 1 else { throw .ambiguousID(prefix: text, candidates: candidates.map(\.rawValue)) }
            return first
        }
    }

    /// The operations this store holds, per replica.
    @_spi(Engine) public var version: VersionVector {
        get throws(StoreError) { try withState { $0.version } }
    }

    /// A copy of the whole materialised state.
    public func state() throws(StoreError) -> TaskState { try withState { copy $0 } }

    // MARK: Writing

    /// Appends one commit of `operations` to this replica's log. The commit is durable when
    /// this returns (unless ``Options/durable`` is off).
    @discardableResult
    @_spi(Engine) public func commit(_ operations: [TaskOperation]) throws(StoreError) -> Commit {
        guard !operations.isEmpty else { throw .invalidArgument("a commit needs at least one operation") }
        return try appending { (writer, floor, wall, throughMemory) throws(StoreError) in
            CollectionOfOne(try writer.append(
                operations, floor: floor, wall: wall, durable: options.durable, throughMemory: throughMemory))
        }.first!
    }

    /// Appends several commits at once: each is its own commit (its own record, clock time
    /// and sequence numbers, exactly as if committed one by one), but they are written with
    /// one write and made durable with one fsync, under one short hold of the lock. For
    /// imports, replays and bulk edits.
    @discardableResult
    @_spi(Engine) public func commit(batch: [[TaskOperation]]) throws(StoreError) -> [Commit] {
        guard !batch.isEmpty, batch.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidArgument("a commit needs at least one operation")
        }
        return try appending { (writer, floor, wall, throughMemory) throws(StoreError) in
            try writer.append(batch, floor: floor, wall: wall, durable: options.durable, throughMemory: throughMemory)
        }
    }

    /// Runs `write` (which appends commits to the tail, at the wall-clock time it is given)
    /// under the store lock, then applies its commits to the state, seals when the tail has
    /// grown past the threshold and tells the observers.
    func appending<Commits: Collection<Commit> & Sendable>(
        _ write: @Sendable (inout TailWriter, _ floor: Timestamp, _ wall: UInt64, _ throughMemory: Bool) throws(StoreError) -> Commits
    ) throws(StoreError) -> Commits {
        defer { if options.maintenanceOnCallingThread { runWaitingSeal() } }
        return try inner.withLock { (inner) throws(StoreError) -> Commits in
            // Under a lease this store has held the lock since its last commit, so nobody
            // else can have appended: the tail needs no check.
            let leased = inner.lock.isLeased
            return try holdingLock(&inner, leaseNanoseconds: leaseNanoseconds) { (inner) throws(StoreError) -> Commits in
                if !leased { try synchroniseOwnTail(&inner) }
                let floor = Self.inPlace(&inner.state) { $0.latestTime }
                // The state's latest time may be a received one far ahead: it moves the clock
                // only as far as any received time may.
                let wall = options.wallClock()
                let bounded = floor.map { HybridLogicalClock.admitted($0, wall: wall) }
                let commits = try write(&inner.writer, bounded ?? .zero, wall, !options.durable && leaseNanoseconds > 0)
                let tailLimit = options.tailLimit ?? 16 * options.sealThreshold
                let (me, needsSeal, pastLimit) = Self.inPlace(&inner.writer) {
                    ($0.replica, $0.needsSeal, $0.isLonger(than: tailLimit))
                }
                if floor != nil {  // the state is loaded
                    for c in commits { inner.state!.apply(c, from: me) }
                }
                if needsSeal {
                    // Commits faster than the background can seal them: past the tail limit
                    // the commit seals, which bounds the tail every reader scans.
                    if options.sealsInBackground && !inner.sealInCommit && !pastLimit {
                        queueSeal(&inner)
                    } else {
                        inner.sealInCommit = false
                        inner.warnings += try inner.writer.seal()
                        if inner.state != nil { try? saveSnapshot(&inner) }
                    }
                }
                noteTailHeld(&inner)
                if !inner.observers.isEmpty {
                    for c in commits { notify(inner.observers, StoreChange(replica: me, commit: c, isLocal: true)) }
                }
                noteForUndo(commits)
                return commits
            }
        }
    }
}
