@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

// Finding the ids of saved tasks without reading the tasks: what a command that names tasks
// by prefix, or looks for a series, needs before it reads those few tasks through the index.

extension StateCodec {
    /// The ids of the tasks an encoded state stores at `offsets` (offsets a snapshot's task
    /// index lists, where tasks start), in the order given.
    /// - Throws: when an offset lies outside the bytes or holds no task id.
    public static func taskIDs(at offsets: [Int], in bytes: SharedBytes) throws(DecodeError) -> [TaskID] {
        try bytes.withDecoding { (buf) throws(DecodeError) -> [TaskID] in
            var ids: [TaskID] = []
            for offset in offsets {
                guard offset >= 0, offset < buf.count else {
                    throw DecodeError(offset: offset, reason: "the task index points outside the tasks")
                }
                var r = ByteReader(buf, offset: offset)
                ids.append(try taskID(&r))
            }
            return ids
        }
    }
}

extension TaskState {
    /// The ids of the records of `saved` and of this state whose text starts with `prefix`,
    /// live, deleted or never added, in no particular order (what resolving a prefix among
    /// deleted tasks starts from); every saved task is stepped over.
    @_spi(Engine) public func taskIDs(withPrefix prefix: String, mergingSaved saved: SharedBytes) throws(DecodeError) -> Set<TaskID> {
        let wanted = Array(prefix.utf8)
        var found = Set<TaskID>()
        try StateCodec.forEachTask(in: saved, inCreationOrder: true) { id, _ in
            if id.textStarts(with: wanted) { found.insert(id) }
            return .skip
        } record: { _, _, _ in true } item: { _ in true }
        for p in records.indices where records.id(at: p).textStarts(with: wanted) { found.insert(records.id(at: p)) }
        return found
    }
}
