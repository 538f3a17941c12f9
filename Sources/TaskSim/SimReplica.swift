@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSyncHTTP

/// One simulated device: its store folder, its clock, the store objects of the processes
/// that have it open, and its HTTP peer.
final class SimReplica {
    static let token = "sim-token"

    let index: Int
    /// The store's replica id (it changes if the store's own branch loses a fork).
    var id: ReplicaID
    let path: String
    let clock: SimClock
    let options: TaskStore.Options
    /// The app's store object (nil while the device is down).
    private(set) var store: TaskStore!
    /// A second process on the same folder (a widget, a CLI), sometimes.
    var second: TaskStore?
    /// The replica's HTTP peer (`tasklog serve`), over the app's store object.
    private(set) var service: HTTPService!
    /// After a restore from a backup: this replica's own operations up to here exist
    /// elsewhere, and it must hold them again before it writes.
    var catchUpTarget: UInt64 = 0
    /// Copies of the store folder, with the operations each held.
    var backups: [(path: String, version: VersionVector)] = []

    init(index: Int, id: ReplicaID, path: String, clock: SimClock, options: TaskStore.Options) {
        self.index = index
        self.id = id
        self.path = path
        self.clock = clock
        self.options = options
    }

    var name: String { "replica-\(index)" }

    var tailPath: String { SimFiles.join(SimFiles.join(SimFiles.join(path, "logs"), id.hex), "tail.tlog") }
    var ownLogDirectory: String { SimFiles.join(SimFiles.join(path, "logs"), id.hex) }

    /// Opens the store (creating it on first use) as a freshly started process would.
    func open() throws(StoreError) {
        store = try TaskStore.open(at: path, options: options)
        id = store.replica
        service = HTTPService(store: store, token: Self.token)
        second = nil
    }

    /// Drops every store object: the device stops (or crashes) here.
    func close() {
        service = nil
        store = nil
        second = nil
    }

    /// Whether this replica may write: a restored replica first syncs its own newer
    /// operations back from wherever they are.
    func mayWrite() throws(StoreError) -> Bool {
        if catchUpTarget == 0 { return true }
        return try store.version[id] >= catchUpTarget
    }
}
