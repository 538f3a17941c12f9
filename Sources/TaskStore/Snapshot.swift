import CRDTCore
import Dispatch
import OpLogFormat
import Synchronization
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
        w.u8(0)
        w.u16le(0)
        w.u32le(UInt32(raw.count))
        w.u32le(UInt32(stored.count))
        w.u32le(Checksum.xxh32(stored))
        w.append(stored)
        return w.bytes
    }

    /// Decodes a snapshot; any problem is reported as a reason (the caller rebuilds from logs).
    static func decode(_ bytes: [UInt8]) -> Result<TaskState, DecodeError> {
        Result { () throws(DecodeError) -> TaskState in
            var chunked = true
            let (raw, storedRange): (Int, Range<Int>) = try bytes.withDecoding { (buf) throws(DecodeError) in
                var r = ByteReader(buf)
                guard buf.count >= headerSize, Array(bytes[0..<4]) == FormatConstants.snapshotMagic else {
                    throw DecodeError(offset: 0, reason: "not a snapshot file")
                }
                _ = try r.bytes(4)
                let version = try r.u8()
                guard version == 1 || version == FormatConstants.snapshotVersion else {
                    throw DecodeError(offset: 4, reason: "snapshot version \(version) is not supported")
                }
                chunked = version >= 2
                _ = try r.u8()
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
                return (raw, headerSize..<(headerSize + stored))
            }
            let payload: [UInt8]
            if storedRange.count == raw {
                payload = Array(bytes[storedRange])
            } else {
                guard let d = bytes.withUnsafeBytes({ LZ4Block.decompress(UnsafeRawBufferPointer(rebasing: $0[storedRange]), rawCount: raw) }) else {
                    throw DecodeError(offset: headerSize, reason: "snapshot payload does not decompress")
                }
                payload = d
            }
            return try decodeBody(payload, chunked: chunked)
        }
    }

    /// Decodes the body, its task chunks split between this thread and one of its own.
    private static func decodeBody(_ body: [UInt8], chunked: Bool) throws(DecodeError) -> TaskState {
        let layout = try StateCodec.layout(of: body, chunked: chunked)
        let count = layout.chunks.count
        guard count > 1 else { return try StateCodec.decode(body, chunked: chunked) }
        let half = count / 2
        let theirs = ChunkResults()
        let started = Posix.detachThread {
            theirs.finish(Result { () throws(DecodeError) in
                var tasks = StateCodec.Tasks(reserving: layout.chunks[half...].reduce(0) { $0 + $1.taskCount })
                for k in half..<count { try StateCodec.decodeTasks(body, layout, chunk: k, into: &tasks) }
                return tasks
            })
        }
        var mine = StateCodec.Tasks(reserving: layout.taskCount)
        var failure: DecodeError?
        do {
            for k in 0..<(started ? half : count) { try StateCodec.decodeTasks(body, layout, chunk: k, into: &mine) }
        } catch {
            failure = error
        }
        var more: StateCodec.Tasks?
        if started {
            switch theirs.wait() {
            case .success(let tasks): more = tasks
            case .failure(let e): failure = failure ?? e
            }
        }
        if let failure { throw failure }
        return try StateCodec.assemble(layout, &mine, more)
    }
}

/// The chunks decoded on the second thread, handed back once.
private final class ChunkResults: Sendable {
    private let result = Mutex<Result<StateCodec.Tasks, DecodeError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ r: Result<StateCodec.Tasks, DecodeError>) {
        result.withLock { $0 = r }
        done.signal()
    }

    func wait() -> Result<StateCodec.Tasks, DecodeError> {
        done.wait()
        return result.withLock { $0! }
    }
}
