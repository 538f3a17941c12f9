import CRDTCore
import OpLogFormat
import TaskModel

/// The materialised state saved to disk, so opening a store replays only the log after it.
/// It is a cache: the logs stay the source of truth (Spec/log-format.md, "Snapshot file").
enum Snapshot {
    static let headerSize = 20

    static func encode(_ state: TaskState) -> [UInt8] {
        let raw = StateCodec.encode(state)
        let compressed = raw.withUnsafeBytes { LZ4Block.compressIfSmaller($0) }
        let stored = compressed ?? raw
        var w = ByteWriter(capacity: stored.count + headerSize)
        w.append(FormatConstants.snapshotMagic)
        w.u8(FormatConstants.snapshotVersion)
        w.u8(tasksInCreationOrder)  // StateCodec lists them so
        w.u16le(0)
        w.u32le(UInt32(raw.count))
        w.u32le(UInt32(stored.count))
        w.u32le(Checksum.xxh32(stored))
        w.append(stored)
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
    static func body(of bytes: [UInt8]) throws(DecodeError) -> (body: [UInt8], inCreationOrder: Bool) {
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
        if storedRange.count == raw { return (Array(bytes[storedRange]), inOrder) }
        guard let d = bytes.withUnsafeBytes({ LZ4Block.decompress(UnsafeRawBufferPointer(rebasing: $0[storedRange]), rawCount: raw) }) else {
            throw DecodeError(offset: headerSize, reason: "snapshot payload does not decompress")
        }
        return (d, inOrder)
    }
}
