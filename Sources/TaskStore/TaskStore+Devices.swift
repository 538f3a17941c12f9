@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// One device (replica) a store knows, as `tasklog devices` shows it.
public struct DeviceStatus: Sendable, Equatable {
    public var replica: ReplicaID
    /// The name it last gave itself, bounded (Spec/crdt.md, "Device names"); nil if none.
    public var name: String?
    public var isThisDevice: Bool
    /// The store holds its operations 1...held (0: none).
    public var held: UInt64
    /// The time of its newest commit the store holds: when it was last seen writing.
    public var lastSeen: Timestamp?

    public init(replica: ReplicaID, name: String?, isThisDevice: Bool, held: UInt64, lastSeen: Timestamp?) {
        self.replica = replica
        self.name = name
        self.isThisDevice = isThisDevice
        self.held = held
        self.lastSeen = lastSeen
    }
}

extension TaskStore {
    /// This device's name; nil until one is set here or learned from a copy of this store's log.
    public func deviceName() throws(StoreError) -> String? {
        let me = replica
        return try withState { $0.deviceName(of: me) }
    }

    /// Names this device. The name travels with the log: every store that syncs learns it, and
    /// the newest name wins. Setting the name it has already writes nothing.
    /// - Throws: ``StoreError/invalidArgument(_:)`` for an empty name, one over
    ///   ``DeviceName/maxBytes`` bytes, or one holding a control character.
    public func setDeviceName(_ name: String) throws(StoreError) {
        let checked: String
        do { checked = try DeviceName.checked(name) } catch { throw .invalidArgument(error.description) }
        guard try deviceName() != checked else { return }
        try commit([.deviceName(checked)])
    }

    /// Every device this store knows, this one first, then by name and id: what it holds of
    /// each and when each last wrote.
    public func devices() throws(StoreError) -> [DeviceStatus] {
        let me = replica
        let (version, names) = try withState { ($0.version, $0.deviceNameRegisters) }
        var out: [DeviceStatus] = []
        for replica in Set(version.entries.keys).union([me]) {
            let held = version[replica]
            let name = names[replica].flatMap { $0.value.isEmpty ? nil : $0.value }
            out.append(DeviceStatus(
                replica: replica, name: name, isThisDevice: replica == me, held: held, lastSeen: try lastCommit(of: replica)?.time))
        }
        return out.sorted(by: Self.deviceOrder)
    }

    /// This device first, then named devices by name, then by id.
    package static func deviceOrder(_ a: DeviceStatus, _ b: DeviceStatus) -> Bool {
        if a.isThisDevice != b.isThisDevice { return a.isThisDevice }
        switch (a.name, b.name) {
        case (let x?, let y?) where x != y: return x < y
        case (.some, nil): return true
        case (nil, .some): return false
        default: return a.replica < b.replica
        }
    }
}
