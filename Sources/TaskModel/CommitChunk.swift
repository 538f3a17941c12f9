@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat

/// The commits of a payload being decoded, gathered a chunk at a time (the fast path of
/// ``CommitCodec/decode(_:firstSeq:opCount:chunkOperations:emit:)``).
///
/// The operations of every commit of a chunk go into one array, which the commits then share:
/// one allocation per chunk instead of one per commit. Invariants: `spans` start at
/// increasing offsets within `ops`, and `seq` is `firstSeq` plus the operations decoded so far.
struct CommitChunk {
    /// Where each commit of the chunk starts in ``ops``, with its first sequence number and time.
    private var spans: [(firstSeq: UInt64, time: Timestamp, start: Int)] = []
    var ops: [TaskOperation] = []
    /// The sequence number of the next operation.
    var seq: UInt64
    /// The sequence number after the payload's last operation.
    let end: UInt64
    private let chunkOperations: Int
    /// The operation arrays of the last chunks handed over: once their commits are freed, the
    /// oldest is emptied and filled again, rather than a fresh array taken (and the large
    /// block freed) for every chunk.
    private var handedOver: [[TaskOperation]] = []

    init(firstSeq: UInt64, opCount: UInt64, chunkOperations: Int) {
        seq = firstSeq
        end = firstSeq + opCount
        self.chunkOperations = chunkOperations
    }

    var isEmpty: Bool { spans.isEmpty }

    /// Starts a commit at the next operation.
    @inline(__always)
    mutating func beginCommit(at time: Timestamp) { spans.append((seq, time, ops.count)) }

    /// Makes room for the next chunk: a commit holds at least one operation and takes at
    /// least four bytes; past 65,536 commits the arrays grow as usual (a damaged count cannot
    /// reserve much).
    mutating func reserve(remaining: Int) {
        spans.reserveCapacity(Int(min(end - seq, UInt64(remaining / 4), 1 << 16, UInt64(chunkOperations))))
        let expected = Int(min(end - seq, UInt64(remaining / 2), 1 << 20, UInt64(chunkOperations)))
        ops.reserveCapacity(expected)
        ops.withUnsafeMutableBufferPointer { b in
            if let base = b.baseAddress { MemoryHint.mapIn(base, bytes: expected * MemoryLayout<TaskOperation>.stride) }
        }
    }

    /// The chunk's commits, sharing its operations array.
    func commits() -> [Commit] {
        var commits: [Commit] = []
        commits.reserveCapacity(spans.count)
        commits.withUnsafeMutableBufferPointer { b in
            if let base = b.baseAddress { MemoryHint.mapIn(base, bytes: spans.count * MemoryLayout<Commit>.stride) }
        }
        for i in spans.indices {
            let end = i + 1 < spans.count ? spans[i + 1].start : ops.count
            commits.append(Commit(firstSeq: spans[i].firstSeq, time: spans[i].time, operations: ops[spans[i].start..<end]))
        }
        return commits
    }

    /// Empties the chunk after its commits were handed over, and makes room for the next.
    mutating func startNext(remaining: Int) {
        spans.removeAll(keepingCapacity: true)
        handedOver.append(ops)
        ops = []
        if handedOver.count > 4 {
            ops = handedOver.removeFirst()
            ops.removeAll(keepingCapacity: true)  // in place once nothing else holds it
        }
        reserve(remaining: remaining)
    }

    /// The invariants this chunk breaks.
    func violations() -> [String] {
        var found: [String] = []
        var last = -1
        for s in spans {
            if s.start <= last || s.start > ops.count { found.append("a commit starts at \(s.start), after \(last) of \(ops.count)") }
            last = s.start
        }
        if let first = spans.first, seq != first.firstSeq + UInt64(ops.count - first.start) {
            found.append("next sequence number \(seq) does not follow the chunk's operations")
        }
        return found
    }
}
