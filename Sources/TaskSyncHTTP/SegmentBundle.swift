@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// Several sealed segments in one HTTP body (Spec/sync-http.md, "Segment bundles"):
/// `TLSB`, a version byte (1), then for each segment a u32 little-endian length and the
/// segment's bytes.
@_spi(Engine) public enum SegmentBundle {
    public static let contentType = "application/x-tasklog-segments"
    static let magic: [UInt8] = Array("TLSB".utf8)
    static let version: UInt8 = 1

    public static func encode(_ segments: [[UInt8]]) -> [UInt8] {
        var w = ByteWriter(capacity: segments.reduce(5) { $0 + $1.count + 4 })
        w.append(magic)
        w.u8(version)
        for s in segments {
            w.u32le(UInt32(s.count))
            w.append(s)
        }
        return w.bytes
    }

    /// The segments of a bundle, each still to be validated by ``SegmentFile/decode(_:)``.
    public static func decode(_ bytes: [UInt8]) throws(SegmentFile.Invalid) -> [[UInt8]] {
        guard bytes.count >= 5, Array(bytes[0..<4]) == magic else { throw .badBundle("not a segment bundle") }
        guard bytes[4] == version else { throw .badBundle("segment bundle version \(bytes[4]) is not supported") }
        var out: [[UInt8]] = []
        var i = 5
        while i < bytes.count {
            guard i + 4 <= bytes.count else { throw .badBundle("bundle truncated at byte \(i)") }
            let n = Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
            i += 4
            guard n <= bytes.count - i else { throw .badBundle("bundle truncated at byte \(i)") }
            out.append(Array(bytes[i..<(i + n)]))
            i += n
        }
        return out
    }

    /// Segments holding the commits of each replica past `version`, at most about `limit`
    /// bytes in all (at least one segment when anything is missing).
    /// - Parameter probes: also send, for each replica the peer holds as much of or more, the
    ///   last commit held here, for the peer to compare (Spec/sync-http.md, "Forks").
    /// - Returns: the segments, their operation count, and whether more remain.
    static func missing(
        from store: TaskStore, after version: VersionVector, limit: Int, probes: Bool = false
    ) throws(StoreError) -> (segments: [[UInt8]], operations: UInt64, more: Bool) {
        var segments: [[UInt8]] = []
        var size = 0
        var ops: UInt64 = 0
        let held = try store.version.sortedEntries
        if probes {
            for (replica, seq) in held where seq > 0 && seq <= version[replica] {
                if let last = try store.lastCommit(of: replica) {
                    segments.append(SegmentFile.encode(replica: replica, commits: [last], effort: .balanced))
                    size += segments.last!.count
                }
            }
        }
        for (replica, held) in held where held > version[replica] {
            // Sealed files go as they are; what is not sealed comes encoded, cut to about
            // 1 MiB pieces (halving until one fits) so a dropped transfer loses little.
            for segment in try store.segmentsToSend(of: replica, after: version[replica]) {
                for piece in try pieces(of: segment) {
                    // Only a piece with new operations fills the batch: one that merely overlaps
                    // what the peer holds must not crowd out a large piece after it.
                    if ops > 0 && size + piece.bytes.count > limit { return (segments, ops, true) }
                    segments.append(piece.bytes)
                    size += piece.bytes.count
                    ops += piece.operationsAfter(version[replica])
                }
            }
            if replica == store.replica { store.notePeersHold(through: held) }
        }
        return (segments, ops, false)
    }

    /// The size encoded segments are cut to when sent.
    static let segmentTarget = 1 << 20

    /// A segment as sent, with the sequence numbers it holds.
    struct Piece {
        var bytes: [UInt8]
        var first: UInt64
        var last: UInt64
        func operationsAfter(_ seq: UInt64) -> UInt64 { last > seq ? last - max(seq, first - 1) : 0 }
    }

    /// `segment` as it is when it is no larger than 4 × ``segmentTarget`` (a sealed file of
    /// the store), else decoded and cut into pieces of about ``segmentTarget``.
    static func pieces(of segment: [UInt8]) throws(StoreError) -> [Piece] {
        if segment.count <= 4 * segmentTarget,
            let scan = try? segment.withUnsafeBytes({ buf in try SegmentScanner.scan(buf) }), let first = scan.records.first
        {
            return [Piece(bytes: segment, first: first.firstSeq, last: scan.nextSeq - 1)]
        }
        let decoded: (replica: ReplicaID, commits: [Commit])
        do {
            decoded = try SegmentFile.decode(segment)
        } catch {
            throw .invalidArgument("a segment to send does not decode: \(error)")
        }
        var out: [Piece] = []
        var commits = decoded.commits[...]
        while !commits.isEmpty {
            var chunk = commits.prefix(4096)
            var bytes = SegmentFile.encode(replica: decoded.replica, commits: Array(chunk), effort: .balanced)
            while bytes.count > segmentTarget && chunk.count > 1 {
                chunk = chunk.prefix(chunk.count / 2)
                bytes = SegmentFile.encode(replica: decoded.replica, commits: Array(chunk), effort: .balanced)
            }
            out.append(Piece(bytes: bytes, first: chunk.first!.firstSeq, last: chunk.last!.endSeq - 1))
            commits = commits[chunk.endIndex...]
        }
        return out
    }

    /// What integrating a bundle did.
    struct Outcome {
        var operations: UInt64 = 0
        /// Segments that were not used, with why.
        var problems: [String] = []
        var forks: [ResolvedFork] = []
        /// Replicas whose operations disagreed from their first commit on: the sender must
        /// send their logs from the start to settle the fork.
        var needFromStart: [ReplicaID] = []
    }

    /// Consecutive segments of one replica in a bundle.
    struct Run {
        var replica: ReplicaID
        var pieces: [Piece]
        var segments: String

        /// The commits of every piece, decoded.
        func commits() throws(StoreError) -> [Commit] {
            var all: [Commit] = []
            for piece in pieces {
                do {
                    all += try SegmentFile.decode(piece.bytes).commits
                } catch {
                    throw .invalidArgument("a segment of \(replica) not imported: \(error)")
                }
            }
            return all
        }
    }

    /// A run, segment by segment, each as it arrived (``TaskStore/integrate(segment:)``:
    /// one new to the store is decoded while it is applied, and kept as it is); when the
    /// first shows a fork whose point is earlier, the whole run together.
    static func integrate(_ run: Run, into store: TaskStore) throws(StoreError) -> Integration {
        var total = Integration(operations: 0)
        do {
            for piece in run.pieces {
                let result = try store.integrate(segment: piece.bytes)
                total.operations += result.operations
                total.fork = total.fork ?? result.fork
            }
            return total
        } catch .forkNeedsEarlierOperations where run.pieces.count > 1 {
            let result = try store.integrate(try run.commits(), from: run.replica)
            return Integration(operations: total.operations + result.operations, fork: total.fork ?? result.fork)
        }
    }

    /// Integrates every valid segment of a bundle into `store`; consecutive segments of one
    /// replica are integrated together, so a log sent from its start in pieces still shows
    /// where two branches part.
    static func integrate(_ segments: [[UInt8]], into store: TaskStore) -> Outcome {
        var outcome = Outcome()
        var runs: [Run] = []
        for (i, bytes) in segments.enumerated() {
            do {
                let span = try SegmentFile.span(bytes)
                let piece = Piece(bytes: bytes, first: span.first, last: span.last)
                if let last = runs.last, last.replica == span.replica, last.pieces.last!.last + 1 == span.first {
                    runs[runs.count - 1].pieces.append(piece)
                    runs[runs.count - 1].segments = "segments \(last.segments.split(separator: " ").last!.split(separator: "-").first!)-\(i + 1)"
                } else {
                    runs.append(Run(replica: span.replica, pieces: [piece], segments: "segment \(i + 1)"))
                }
            } catch {
                outcome.problems.append("segment \(i + 1): \(error)")
            }
        }
        for run in runs {
            do {
                let result = try integrate(run, into: store)
                outcome.operations += result.operations
                if let fork = result.fork { outcome.forks.append(fork) }
            } catch StoreError.forkNeedsEarlierOperations(let replica, _) {
                outcome.needFromStart.append(replica)
            } catch {
                outcome.problems.append("\(run.segments): \(error)")
            }
        }
        return outcome
    }
}

/// Version vectors on the wire: JSON `{"<replica hex>": seq, …}` in bodies, and base64url of a
/// binary form in cursors.
package enum VersionCoding {
    static func json(_ v: VersionVector) -> String {
        "{" + v.sortedEntries.map { "\"\($0.replica.hex)\":\($0.seq)" }.joined(separator: ",") + "}"
    }

    static func parse(_ value: JSONValue?) -> VersionVector? {
        guard case .object(let members)? = value else { return nil }
        var v = VersionVector()
        for (key, seq) in members {
            guard let r = ReplicaID(hex: key), case .number(let n) = seq, n >= 0, n == n.rounded(), n <= 9_007_199_254_740_992 else { return nil }
            v[r] = UInt64(n)
        }
        return v
    }

    package static func cursor(_ v: VersionVector) -> String {
        var w = ByteWriter()
        w.uvarint(v.entries.count)
        for e in v.sortedEntries {
            w.append(e.replica.bytes)
            w.uvarint(e.seq)
        }
        return base64url(w.bytes)
    }

    package static func parseCursor(_ text: String) -> VersionVector? {
        guard let bytes = unbase64url(text) else { return nil }
        return try? bytes.withDecoding { (buf) throws(DecodeError) -> VersionVector in
            var r = ByteReader(buf)
            var v = VersionVector()
            for _ in 0..<(try r.count(limit: buf.count / 17)) {
                let replica = ReplicaID(bytes: try r.bytes(16))
                v[replica] = try r.uvarint()
            }
            guard r.isAtEnd else { throw r.error("trailing bytes") }
            return v
        }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func base64url(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var v = 0
            for k in 0..<3 { v = v << 8 | (k < n ? Int(bytes[i + k]) : 0) }
            for k in 0..<(n + 1) { out.append(alphabet[(v >> (18 - 6 * k)) & 63]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unbase64url(_ text: String) -> [UInt8]? {
        var values: [Int] = []
        for c in text.utf8 {
            guard let i = alphabet.firstIndex(of: c) else { return nil }
            values.append(i)
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let n = min(4, values.count - i)
            var v = 0
            for k in 0..<4 { v = v << 6 | (k < n ? values[i + k] : 0) }
            for k in 0..<(n - 1) { out.append(UInt8((v >> (16 - 8 * k)) & 255)) }
            i += 4
        }
        return out
    }
}
