@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// Writes the body of an encoded state (Spec/log-format.md, "Snapshot file"): the replica
/// table, the version, then each task with its registers and sets. Every replica named
/// anywhere is numbered once, in the table, and referred to by number.
struct StateEncoder {
    private var replicas: [ReplicaID: Int] = [:]
    private var replicaList: [ReplicaID] = []
    private(set) var w: ByteWriter

    /// Numbers every replica `state` names.
    init(numbering state: TaskState) {
        w = ByteWriter(capacity: state.records.count * 96)
        for (r, _) in state.version.entries { note(r) }
        for p in state.records.indices { state.records.liveDots(at: p)?.forEach { note($0.replica) } }
        state.membershipTombstones.forEach { note($0.replica) }
        for (_, name) in state.deviceNameRegisters { note(name.stamp.operation.replica) }
        for (_, rec) in state.records {
            for s in rec.stamps { note(s.operation.replica) }
            for (_, dots) in rec.tags.dotsByElement { dots.forEach { note($0.replica) } }
            rec.tags.tombstones.forEach { note($0.replica) }
        }
    }

    private mutating func note(_ r: ReplicaID) {
        if replicas[r] == nil {
            replicas[r] = replicaList.count
            replicaList.append(r)
        }
    }

    /// The replica table, version, latest time, membership tombstones, device names and task count.
    mutating func header(_ state: TaskState) {
        w.uvarint(replicaList.count)
        for r in replicaList { w.append(r.bytes) }
        let vv = state.version.sortedEntries
        w.uvarint(vv.count)
        for e in vv {
            w.uvarint(replicas[e.replica]!)
            w.uvarint(e.seq)
        }
        StateCodec.time(state.latestTime, &w)
        dots(state.membershipTombstones)
        let names = state.deviceNameRegisters.values.sorted { $0.stamp.operation < $1.stamp.operation }
        w.uvarint(names.count)
        for name in names {
            stamp(name.stamp)
            w.string(name.value)
        }
        w.uvarint(state.records.count)
    }

    mutating func dots(_ d: some Collection<OperationID>) {
        w.uvarint(d.count)
        for x in d.sorted() {
            w.uvarint(replicas[x.replica]!)
            w.uvarint(x.seq)
        }
    }

    private mutating func stamp(_ s: Stamp) {
        StateCodec.time(s.time, &w)
        w.uvarint(replicas[s.operation.replica]!)
        w.uvarint(s.operation.seq)
    }

    mutating func taskID(_ id: TaskID) { StateCodec.taskID(id, &w) }

    /// One task after its id: live dots, times, registers, meta and tags.
    mutating func task(_ rec: TaskRecord, liveDots: some Collection<OperationID>) {
        dots(liveDots)
        if let c = rec.createdAt {
            w.u8(1)
            StateCodec.time(c, &w)
        } else {
            w.u8(0)
        }
        StateCodec.time(rec.updatedAt, &w)
        registers(rec)
        w.uvarint(rec.meta.count)
        for key in rec.meta.keys.sorted() {
            let r = rec.meta[key]!
            w.string(key)
            stamp(r.stamp)
            StateCodec.optionalString(r.value, &w)
        }
        let tagDots = rec.tags.dotsByElement
        w.uvarint(tagDots.count)
        for tag in tagDots.keys.sorted() {
            w.string(tag)
            dots(tagDots[tag]!.set)
        }
        dots(rec.tags.tombstones)
    }

    /// The presence bits, then each present register's stamp and value.
    private mutating func registers(_ rec: TaskRecord) {
        var present: UInt8 = 0
        for (bit, on) in [rec.title != nil, rec.notes != nil, rec.done != nil, rec.priority != nil,
                          rec.due != nil, rec.list != nil].enumerated() where on {
            present |= 1 << UInt8(bit)
        }
        w.u8(present)
        if let r = rec.title { stamp(r.stamp); w.string(r.value) }
        if let r = rec.notes { stamp(r.stamp); StateCodec.optionalString(r.value, &w) }
        if let r = rec.done { stamp(r.stamp); w.u8(r.value ? 1 : 0) }
        if let r = rec.priority { stamp(r.stamp); w.u8(r.value.map { $0 + 1 } ?? 0) }
        if let r = rec.due {
            stamp(r.stamp)
            switch r.value {
            case nil: w.u8(0)
            case .date(let d)?: w.u8(1); w.svarint(d)
            case .instant(let ms)?: w.u8(2); w.svarint(ms)
            }
        }
        if let r = rec.list { stamp(r.stamp); StateCodec.optionalString(r.value, &w) }
    }
}
