@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// How a state's body reads and writes its parts: the reader through the replica table, and
/// the times, ids and optional strings every part uses.
extension StateCodec {
    /// Reads a body's parts through its replica table (Spec/log-format.md, "Snapshot file").
    struct BodyReader {
        let replicas: [ReplicaID]
        let tombstones: Set<OperationID>

        /// Reads everything before the tasks.
        static func start(_ r: inout ByteReader, byteCount: Int) throws(DecodeError) -> (BodyReader, Head) {
            var (body, vv, latest) = try versionPart(&r, byteCount: byteCount)
            // Tombstones first, so the adds that follow can go straight into the set.
            let tombstones = Set(try body.dots(&r))
            body = BodyReader(replicas: body.replicas, tombstones: tombstones)
            let names = try body.deviceNames(&r)
            let nTasks = try r.count(limit: r.remaining / 4)
            return (
                body,
                Head(version: vv, latestTime: latest, membershipTombstones: tombstones, deviceNames: names, taskCount: nTasks)
            )
        }

        /// Reads the replica table, the version vector and the latest time: a reader with no
        /// tombstones, and the version and time.
        static func versionPart(
            _ r: inout ByteReader, byteCount: Int
        ) throws(DecodeError) -> (BodyReader, VersionVector, Timestamp) {
            let nReplicas = try r.count(limit: byteCount / 16)
            var replicas: [ReplicaID] = []
            replicas.reserveCapacity(nReplicas)
            for _ in 0..<nReplicas { replicas.append(ReplicaID(bytes: try r.bytes(16))) }
            let body = BodyReader(replicas: replicas, tombstones: [])
            var vv = VersionVector()
            for _ in 0..<(try r.count(limit: nReplicas)) {
                let rep = try body.replica(&r)
                vv[rep] = try r.uvarint()
            }
            return (body, vv, try time(&r))
        }

        /// The device names: each register keyed by the replica that wrote it, at most one each.
        func deviceNames(_ r: inout ByteReader) throws(DecodeError) -> [ReplicaID: LWWRegister<String>] {
            var names: [ReplicaID: LWWRegister<String>] = [:]
            for _ in 0..<(try r.count(limit: r.remaining / 4)) {
                let s = try stamp(&r)
                let name = DeviceName.normalised(try r.string())
                guard names.updateValue(LWWRegister(value: name, stamp: s), forKey: s.operation.replica) == nil else {
                    throw r.error("two device names of replica \(s.operation.replica.hex)")
                }
            }
            return names
        }

        @inline(__always)
        func replica(_ r: inout ByteReader) throws(DecodeError) -> ReplicaID {
            guard !replicas.isEmpty else { throw r.error("reference into an empty replica table") }
            return replicas[try r.count(limit: replicas.count - 1)]
        }

        func dots(_ r: inout ByteReader) throws(DecodeError) -> [OperationID] {
            let n = try r.count(limit: r.remaining / 2)
            if n == 0 { return [] }
            var out: [OperationID] = []
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(OperationID(replica: try replica(&r), seq: try r.uvarint())) }
            return out
        }

        @inline(__always)
        func stamp(_ r: inout ByteReader) throws(DecodeError) -> Stamp {
            let t = try time(&r)
            return Stamp(time: t, operation: OperationID(replica: try replica(&r), seq: try r.uvarint()))
        }

        /// A task's id and its live dots (those no tombstone names).
        func taskHead(_ r: inout ByteReader) throws(DecodeError) -> (TaskID, LiveDots?) {
            let id = try taskID(&r)
            var live: LiveDots?
            for _ in 0..<(try r.count(limit: r.remaining / 2)) {
                let dot = OperationID(replica: try replica(&r), seq: try r.uvarint())
                guard tombstones.isEmpty || !tombstones.contains(dot) else { continue }
                if live == nil { live = LiveDots(dot) } else { live!.insert(dot) }
            }
            return (id, live)
        }

        /// The rest of a task: its times, registers and tags, into `f`.
        func fields<F: TaskFields & ~Copyable>(_ r: inout ByteReader, into f: inout F) throws(DecodeError) {
            let created = try r.u8() == 1 ? try time(&r) : nil
            f.times(created: created, updated: try time(&r))
            let present = try r.u8()
            if present & 1 != 0 { let s = try stamp(&r, F.self); f.title(try text(&r, F.self), s) }
            if present & 2 != 0 { let s = try stamp(&r, F.self); f.notes(try optionalText(&r, F.self), s) }
            if present & 4 != 0 { let s = try stamp(&r, F.self, timeShown: true); f.done(try r.u8() == 1, s) }
            if present & 8 != 0 {
                let s = try stamp(&r, F.self)
                let p = try r.u8()
                guard p <= 4 else { throw r.error("invalid priority") }
                f.priority(p == 0 ? nil : p - 1, s)
            }
            if present & 16 != 0 {
                let s = try stamp(&r, F.self)
                let due: Due?
                switch try r.u8() {
                case 0: due = nil
                case 1: due = .date(days: try r.svarint())
                case 2: due = .instant(milliseconds: try r.svarint())
                default: throw r.error("invalid due form")
                }
                f.due(due, s)
            }
            if present & 32 != 0 { let s = try stamp(&r, F.self); f.list(try optionalText(&r, F.self), s) }
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let key = try text(&r, F.self)
                let s = try stamp(&r, F.self)
                f.meta(key, try optionalText(&r, F.self), s)
            }
            var tagAdds: [(F.Text, [OperationID])] = []
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let tag = try text(&r, F.self)
                tagAdds.append((tag, try dots(&r)))
            }
            let tagTombs = try dots(&r)
            if !tagAdds.isEmpty || !tagTombs.isEmpty { f.tags(tagAdds, removed: tagTombs) }
        }

        /// A write's stamp, or, when `F` keeps no stamps, a stand-in stepped over without
        /// being built (its time read only if `timeShown`).
        @inline(__always)
        func stamp<F: TaskFields & ~Copyable>(_ r: inout ByteReader, _: F.Type, timeShown: Bool = false) throws(DecodeError) -> Stamp {
            if F.keepsStamps { return try stamp(&r) }
            return Stamp(time: try skipStamp(&r, timeShown: timeShown), operation: Self.unread)
        }

        /// Steps over a stamp, checking only its replica reference; its time is read only if
        /// `timeShown` (.zero otherwise).
        @inline(__always)
        func skipStamp(_ r: inout ByteReader, timeShown: Bool) throws(DecodeError) -> Timestamp {
            let t: Timestamp
            if timeShown { t = try time(&r) } else {
                try r.skipUvarints(2)
                t = .zero
            }
            _ = try r.count(limit: replicas.count - 1)
            try r.skipUvarint()
            return t
        }

        /// The operation of a stamp that was not read.
        static let unread = OperationID(replica: ReplicaID(high: 0, low: 0), seq: 0)

        @inline(__always)
        func text<F: TaskFields & ~Copyable>(_ r: inout ByteReader, _: F.Type) throws(DecodeError) -> F.Text {
            try F.text(&r)
        }

        @inline(__always)
        func optionalText<F: TaskFields & ~Copyable>(_ r: inout ByteReader, _: F.Type) throws(DecodeError) -> F.Text? {
            switch try r.u8() {
            case 0: return nil
            case 1: return try F.text(&r)
            default: throw r.error("invalid optional string")
            }
        }
    }

    static func time(_ t: Timestamp, _ w: inout ByteWriter) {
        w.uvarint(t.physical)
        w.uvarint(UInt64(t.logical))
    }

    @inline(__always)
    static func time(_ r: inout ByteReader) throws(DecodeError) -> Timestamp {
        let p = try r.uvarint()
        let l = try r.uvarint()
        guard p <= Timestamp.maxPhysical, l <= UInt64(UInt32.max) else { throw r.error("clock time out of range") }
        return Timestamp(physical: p, logical: UInt32(l))
    }

    static func taskID(_ id: TaskID, _ w: inout some ByteSink) {
        if let (h, l) = id.uuid {
            w.u8(0)
            w.u64le(h.byteSwapped)
            w.u64le(l.byteSwapped)
        } else {
            w.u8(1)
            w.string(id.rawValue)
        }
    }

    static func taskID(_ r: inout ByteReader) throws(DecodeError) -> TaskID {
        switch try r.u8() {
        case 0:
            let b = try r.bytes(16)
            return TaskID(uuidHigh: UInt64(bigEndian: b.loadUnaligned(as: UInt64.self)),
                          low: UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        case 1:
            guard let t = TaskID(try r.string()) else { throw r.error("invalid task id") }
            return t
        default: throw r.error("unknown task id form")
        }
    }

    static func optionalString(_ s: String?, _ w: inout ByteWriter) {
        if let s {
            w.u8(1)
            w.string(s)
        } else {
            w.u8(0)
        }
    }

    static func optionalString(_ r: inout ByteReader) throws(DecodeError) -> String? {
        switch try r.u8() {
        case 0: return nil
        case 1: return try r.string()
        default: throw r.error("invalid optional string")
        }
    }
}
