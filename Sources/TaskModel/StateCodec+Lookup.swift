@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

// Reading a few tasks of an encoded state at the offsets a snapshot's task index lists,
// touching only their bytes and the body's first few (Spec/log-format.md, "Snapshot file").

extension StateCodec {
    /// What a lookup of a few tasks needs of an encoded state's start: its replica table,
    /// version and latest time. The tombstones and device names after them, which grow with
    /// the store, are not read (``tombstones(of:_:)`` reads the tombstones when needed).
    public struct LookupHead: Sendable {
        public let version: VersionVector
        public let latestTime: Timestamp
        /// How many membership tombstones the body holds.
        public let tombstoneCount: Int
        /// Where the tombstones start (their count first).
        let tombstonesAt: Int
        /// Where the bytes read end: a caller that checks bytes before relying on them
        /// checks `0..<end`. No task starts before it.
        public let end: Int
        let replicas: [ReplicaID]

        /// A task's live adds never include a tombstone (the writer leaves those out), so
        /// tasks are read without the tombstones.
        var reader: BodyReader { BodyReader(replicas: replicas, tombstones: []) }
    }

    /// Reads the start of an encoded state up to its tombstones' count.
    public static func lookupHead(of bytes: SharedBytes) throws(DecodeError) -> LookupHead {
        try bytes.withDecoding { (buf) throws(DecodeError) -> LookupHead in
            var r = ByteReader(buf)
            let (body, version, latest) = try BodyReader.versionPart(&r, byteCount: buf.count)
            let at = r.offset
            let count = try r.count(limit: r.remaining / 2)
            return LookupHead(
                version: version, latestTime: latest, tombstoneCount: count, tombstonesAt: at, end: r.offset,
                replicas: body.replicas)
        }
    }

    /// The membership tombstones of an encoded state, and where they end (the caller checks
    /// the bytes up to there).
    public static func tombstones(
        of bytes: SharedBytes, _ head: LookupHead
    ) throws(DecodeError) -> (tombstones: Set<OperationID>, end: Int) {
        try bytes.withDecoding { (buf) throws(DecodeError) -> (tombstones: Set<OperationID>, end: Int) in
            var r = ByteReader(buf, offset: head.tombstonesAt)
            let dots = try head.reader.dots(&r)
            return (Set(dots), r.offset)
        }
    }

    /// The id of the task stored at `offset`, and where the id ends.
    /// - Throws: when `offset` lies before the tasks or past the body, or no id is there.
    public static func taskID(at offset: Int, in bytes: SharedBytes, _ head: LookupHead) throws(DecodeError) -> (id: TaskID, end: Int) {
        try bytes.withDecoding { (buf) throws(DecodeError) -> (id: TaskID, end: Int) in
            var r = try reader(at: offset, in: buf, head)
            return (try taskID(&r), r.offset)
        }
    }

    /// The task stored at `offset`, whole, with its live dots, and where it ends.
    /// - Throws: when `offset` lies before the tasks or past the body, or the task there does
    ///   not decode.
    public static func task(
        at offset: Int, in bytes: SharedBytes, _ head: LookupHead
    ) throws(DecodeError) -> (id: TaskID, record: TaskRecord, live: LiveDots?, end: Int) {
        try bytes.withDecoding { (buf) throws(DecodeError) -> (id: TaskID, record: TaskRecord, live: LiveDots?, end: Int) in
            var r = try reader(at: offset, in: buf, head)
            let body = head.reader
            let (id, live) = try body.taskHead(&r)
            var record = TaskRecord()
            try body.fields(&r, into: &record)
            return (id, record, live, r.offset)
        }
    }

    private static func reader(at offset: Int, in buf: UnsafeRawBufferPointer, _ head: LookupHead) throws(DecodeError) -> ByteReader {
        guard offset >= head.end, offset < buf.count else {
            throw DecodeError(offset: offset, reason: "the task index points outside the tasks")
        }
        return ByteReader(buf, offset: offset)
    }
}
