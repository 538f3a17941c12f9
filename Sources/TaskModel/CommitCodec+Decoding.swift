@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

extension CommitCodec {
    /// Decodes a commits payload holding exactly `opCount` operations starting at `firstSeq`.
    public static func decode(
        _ payload: [UInt8], firstSeq: UInt64, opCount: UInt64
    ) throws(DecodeError) -> [Commit] {
        try payload.withDecoding { (buf) throws(DecodeError) -> [Commit] in
            try decode(buf, firstSeq: firstSeq, opCount: opCount)
        }
    }

    /// The same, reading the payload where it lies (a record stored raw inside a file: no copy).
    public static func decode(
        _ buf: UnsafeRawBufferPointer, firstSeq: UInt64, opCount: UInt64
    ) throws(DecodeError) -> [Commit] {
        var commits: [Commit] = []
        try decode(buf, firstSeq: firstSeq, opCount: opCount, chunkOperations: .max) { commits = $0 }
        return commits
    }

    /// Decodes a commits payload where it lies and hands its commits to `emit` in order, in
    /// arrays of about `chunkOperations` operations (whole commits; the last array may hold
    /// fewer), so that a reader can apply the first while the rest is decoded. Every array
    /// but the last is handed over before the payload has been read to its end: a payload
    /// found damaged afterwards has already given some of its commits.
    public static func decode(
        _ buf: UnsafeRawBufferPointer, firstSeq: UInt64, opCount: UInt64, chunkOperations: Int,
        emit: ([Commit]) -> Void
    ) throws(DecodeError) {
        var r = ByteReader(buf)
        let taskCount = try r.count(limit: buf.count)
        var tasks: [TaskID] = []
        tasks.reserveCapacity(taskCount)
        for _ in 0..<taskCount { tasks.append(try StateCodec.taskID(&r)) }
        guard firstSeq >= 1, opCount <= UInt64.max - firstSeq else {
            throw DecodeError(offset: 0, reason: "sequence numbers \(firstSeq) + \(opCount) are out of range")
        }
        var chunk = CommitChunk(firstSeq: firstSeq, opCount: opCount, chunkOperations: chunkOperations)
        chunk.reserve(remaining: r.remaining)
        var prev = Timestamp.zero
        var isFirst = true
        while !r.isAtEnd {
            let time = try decodeTime(&r, after: prev)
            guard isFirst || time > prev else { throw r.error("commit times do not increase") }
            isFirst = false
            prev = time
            // Every operation takes at least two bytes, which bounds the count.
            let n = try r.count(limit: Int(min(chunk.end - chunk.seq, UInt64(r.remaining / 2))))
            guard n > 0 else { throw r.error("empty commit") }
            chunk.beginCommit(at: time)
            for _ in 0..<n { chunk.ops.append(try decodeOp(&r, tasks: tasks)) }
            chunk.seq += UInt64(n)
            if chunk.ops.count >= chunkOperations && !r.isAtEnd {
                emit(chunk.commits())
                chunk.startNext(remaining: r.remaining)
            }
        }
        guard chunk.seq == chunk.end else {
            throw r.error("payload holds \(chunk.seq - firstSeq) operations, header says \(opCount)")
        }
        if !chunk.isEmpty { emit(chunk.commits()) }
    }

    /// A commit's time, delta-encoded from the previous commit's (``encodeTime(_:after:into:)``).
    @inline(__always)
    static func decodeTime(_ r: inout ByteReader, after prev: Timestamp) throws(DecodeError) -> Timestamp {
        let step = try r.uvarint()
        let delta = step >> 1
        guard delta <= UInt64.max - prev.physical else { throw r.error("clock overflows") }
        let physical = prev.physical + delta
        guard physical <= Timestamp.maxPhysical else { throw r.error("clock time \(physical) is beyond the largest allowed") }
        guard step & 1 == 1 else { return Timestamp(physical: physical, logical: delta == 0 ? prev.logical &+ 1 : 0) }
        let v = try r.uvarint()
        guard v <= UInt64(UInt32.max) else { throw r.error("logical clock overflows") }
        return Timestamp(physical: physical, logical: UInt32(v))
    }

    static func decodeOp(_ r: inout ByteReader, tasks: [TaskID]) throws(DecodeError) -> TaskOperation {
        let header = try r.u8()
        let kind = header >> 4
        if kind >= Kind.firstExtension {
            let n = try r.count(limit: r.remaining)
            let body = try r.bytes(n)
            if header == deviceNameHeader, let name = deviceName(in: body) { return .deviceName(name) }
            return .unknown(kind: header, body: Array(body))
        }
        guard !tasks.isEmpty else { throw r.error("operation refers to a task, but the task table is empty") }
        let index = try r.count(limit: tasks.count - 1)
        let task = tasks[index]
        switch kind {
        case Kind.add:
            return .add(task)
        case Kind.remove:
            return .remove(task, observed: try decodeDots(&r))
        case Kind.set:
            return .set(task, try decodeSet(&r, fieldNibble: header & 15))
        case Kind.addTag:
            return .addTag(task, try r.string())
        case Kind.removeTag:
            let tag = try r.string()
            return .removeTag(task, tag, observed: try decodeDots(&r))
        default:
            throw r.error("invalid operation kind \(kind)")
        }
    }

    /// The name a device name's body holds: exactly one string, its length in the shortest
    /// form (so that writing it again gives the same bytes); nil for any other body, which is
    /// then kept as an unknown extension.
    static func deviceName(in body: UnsafeRawBufferPointer) -> String? {
        var r = ByteReader(body)
        guard let name = try? r.string(), r.isAtEnd,
            ByteCounter.uvarintSize(UInt64(name.utf8.count)) + name.utf8.count == body.count
        else { return nil }
        return name
    }

    static func decodeDots(_ r: inout ByteReader) throws(DecodeError) -> [OperationID] {
        let n = try r.count(limit: r.remaining / 17)
        var dots: [OperationID] = []
        dots.reserveCapacity(n)
        for _ in 0..<n {
            let replica = ReplicaID(bytes: try r.bytes(16))
            dots.append(OperationID(replica: replica, seq: try r.uvarint()))
        }
        return dots
    }

    /// A decoded value of any type; known fields check the type they expect.
    enum Value {
        case none, bool(Bool), uint(UInt64), string(String), date(Int64), instant(Int64), opaque
    }

    static func decodeValue(_ r: inout ByteReader) throws(DecodeError) -> Value {
        let tag = try r.u8()
        switch tag {
        case ValueTag.none: return .none
        case ValueTag.falseValue: return .bool(false)
        case ValueTag.trueValue: return .bool(true)
        case ValueTag.uint: return .uint(try r.uvarint())
        case ValueTag.string: return .string(try r.string())
        case ValueTag.date: return .date(try r.svarint())
        case ValueTag.instant: return .instant(try r.svarint())
        case ValueTag.smallUInt..<ValueTag.firstOpaque: return .uint(UInt64(tag - ValueTag.smallUInt))
        case ValueTag.firstOpaque...:
            let n = try r.count(limit: r.remaining)
            _ = try r.bytes(n)
            return .opaque
        default: throw r.error("invalid value tag \(tag)")
        }
    }

    static func decodeSet(_ r: inout ByteReader, fieldNibble: UInt8) throws(DecodeError) -> FieldWrite {
        if fieldNibble == Field.extended {
            let field = try r.uvarint()
            guard field >= UInt64(Field.extended) else {
                throw r.error("field \(field) written in the extended form; numbers below 15 use the nibble")
            }
            let start = r.offset
            _ = try decodeValue(&r)
            return .unknown(field: field, value: Array(UnsafeRawBufferPointer(rebasing: r.base[start..<r.offset])))
        }
        let field = UInt64(fieldNibble)
        let key = field == Field.meta ? try r.string() : ""
        let start = r.offset
        let value = try decodeValue(&r)
        switch (field, value) {
        case (Field.title, .string(let s)): return .title(s)
        case (Field.notes, .string(let s)): return .notes(s)
        case (Field.notes, .none): return .notes(nil)
        case (Field.done, .bool(let b)): return .done(b)
        case (Field.priority, .uint(let p)) where p <= 3: return .priority(UInt8(p))
        case (Field.priority, .none): return .priority(nil)
        case (Field.due, .date(let d)): return .due(.date(days: d))
        case (Field.due, .instant(let ms)): return .due(.instant(milliseconds: ms))
        case (Field.due, .none): return .due(nil)
        case (Field.list, .string(let s)): return .list(s)
        case (Field.list, .none): return .list(nil)
        case (Field.meta, .string(let s)): return .meta(key: key, value: s)
        case (Field.meta, .none): return .meta(key: key, value: nil)
        case (0...Field.meta, _): throw DecodeError(offset: start, reason: "wrong value type for field \(field)")
        default:
            // A field number from a newer version: keep it whole, so it is relayed verbatim.
            return .unknown(field: field, value: Array(UnsafeRawBufferPointer(rebasing: r.base[start..<r.offset])))
        }
    }
}
