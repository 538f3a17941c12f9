@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// What a shared folder holds of each device beside what a store holds, and why the store
/// lacks what it lacks (``FolderSurvey``).
public struct FolderReport: Sendable {
    /// The folder's key epoch this store seals with, or nil for a plaintext folder (or an
    /// encrypted one whose key this store does not know).
    public var epoch: UInt32?
    /// Every device the store or the folder knows, this one first.
    public var devices: [SurveyedDevice] = []
    /// Problems that concern no one device: the folder's keys, files outside any namespace.
    public var problems: [SurveyProblem] = []
}

/// One device as the store and the folder know it.
public struct SurveyedDevice: Sendable {
    /// As the store knows it; its name and last time may come from the folder's files when
    /// the store has none of its operations yet.
    public var status: DeviceStatus
    /// Its operations the folder's usable files hold: merged ranges, ascending.
    public var inFolder: [ClosedRange<UInt64>] = []
    /// Its operations the folder holds and the store lacks.
    public var storeLacks: UInt64 = 0
    /// Of those, the ones the next sync brings in: they continue what the store holds.
    public var nextSyncBrings: UInt64 = 0
    /// Its operations the store holds and the folder lacks: the next sync publishes them.
    public var folderLacks: UInt64 = 0
    /// Why operations of it are not applied, or not in the folder.
    public var problems: [SurveyProblem] = []

    /// A device as the store knows it, before any folder is compared.
    public init(status: DeviceStatus) { self.status = status }
}

/// Why operations the folder holds do not reach the store.
public enum SurveyProblem: Sendable, Equatable, CustomStringConvertible {
    /// A file the next sync would not import, with the range its name claims and the reason.
    case skippedFile(path: String, first: UInt64?, last: UInt64?, reason: String)
    /// No usable file holds these operations, so the device's later ones wait for them.
    case missingOperations(first: UInt64, last: UInt64)
    /// The folder was rekeyed to an epoch whose key this store lacks.
    case keyEpochMissing(epoch: UInt32, known: UInt32)
    /// Files of the namespace hold other operations under the device's sequence numbers than
    /// the store does, from `seq` on: two copies of one store wrote.
    case fork(namespace: String, seq: UInt64)
    /// The folder's keys cannot be used: a passphrase is needed, or key files are missing.
    case encryption(EncryptionError)

    public var description: String {
        switch self {
        case .skippedFile(let path, _, _, let reason): "\(path) is not imported: \(reason)"
        case .missingOperations(let first, let last):
            (first == last ? "operation \(first) is" : "operations \(first)-\(last) are")
                + " in no usable file of the folder, so the later ones wait; the device that holds them must sync"
        case .keyEpochMissing(let epoch, let known):
            "the folder was rekeyed to key epoch \(epoch) and this store knows only epoch \(known); sync with the new passphrase"
        case .fork(let namespace, let seq):
            "the files in \(namespace) differ from this store's from operation \(seq) on (a copied store wrote too); the next sync settles it"
        case .encryption(let e): e.description
        }
    }
}
