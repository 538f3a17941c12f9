import CRDTCore
import OpLogFormat
import TaskModel

/// The materialised state saved to disk, so opening a store replays only the log after it.
/// It is a cache: the logs stay the source of truth (Spec/log-format.md, "Snapshot file").
enum Snapshot {
    static let headerSize = 20

    /// The snapshot of `state`, its body stored uncompressed: decompressing it was a sixth of
    /// opening a store (the body shrinks by only a third under LZ4), and a snapshot is a local
    /// cache, never sent.
    static func encode(_ state: TaskState) -> [UInt8] {
        let body = StateCodec.encode(state)
        var w = ByteWriter(capacity: body.count + headerSize)
        w.append(FormatConstants.snapshotMagic)
        w.u8(FormatConstants.snapshotVersion)
        w.u8(tasksInCreationOrder)  // StateCodec lists them so
        w.u16le(0)
        w.u32le(UInt32(body.count))  // rawLength
        w.u32le(UInt32(body.count))  // storedLength: the same, the body as is
        w.u32le(Checksum.xxh32(body))
        w.append(body)
        return w.bytes
    }

    /// Header flags (Spec/log-format.md, "Snapshot file").
    static let tasksInCreationOrder: UInt8 = 1

    /// Decodes a snapshot; any problem is reported as a reason (the caller rebuilds from logs).
    static func decode(_ bytes: [UInt8]) -> Result<TaskState, DecodeError> {
        Result { () throws(DecodeError) -> TaskState in try StateCodec.decode(try body(of: bytes).body) }
    }

    /// The body of a snapshot, checked and decompressed, and whether its tasks are listed in
    /// creation order (then it can be read one task at a time in listing order).
    static func body(of bytes: [UInt8]) throws(DecodeError) -> (body: ArraySlice<UInt8>, inCreationOrder: Bool) {
        let (raw, storedRange, flags): (Int, Range<Int>, UInt8) = try bytes.withDecoding { (buf) throws(DecodeError) in
            var r = ByteReader(buf)
            guard buf.count >= headerSize, Array(bytes[0..<4]) == FormatConstants.snapshotMagic else {
                throw DecodeError(offset: 0, reason: "not a snapshot file")
            }
            _ = try r.bytes(4)
            let version = try r.u8()
            guard version == FormatConstants.snapshotVersion else {
                throw DecodeError(offset: 4, reason: "snapshot version \(version) is not supported")
            }
            let flags = try r.u8()
            _ = try r.u16le()
            let raw = Int(try r.u32le())
            let stored = Int(try r.u32le())
            let sum = try r.u32le()
            guard stored <= r.remaining, stored <= raw else { throw r.error("snapshot is truncated") }
            // LZ4 expands at most 255 times; anything claiming more is damage, not a reason
            // to allocate gigabytes.
            guard raw <= max(stored, 1) * 255 else { throw r.error("snapshot claims an impossible size") }
            let payload = try r.bytes(stored)
            guard Checksum.xxh32(payload) == sum else { throw DecodeError(offset: headerSize, reason: "snapshot checksum mismatch") }
            return (raw, headerSize..<(headerSize + stored), flags)
        }
        let inOrder = flags & tasksInCreationOrder != 0
        if storedRange.count == raw { return (bytes[storedRange], inOrder) }  // read where it lies
        guard let d = bytes.withUnsafeBytes({ LZ4Block.decompress(UnsafeRawBufferPointer(rebasing: $0[storedRange]), rawCount: raw) }) else {
            throw DecodeError(offset: headerSize, reason: "snapshot payload does not decompress")
        }
        return (d[...], inOrder)
    }
}
