@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

/// A run of one replica's commits in the sealed segment format: what replicas exchange
/// (files in a shared folder, HTTP bodies). The bytes are the format of Spec/log-format.md.
@_spi(Engine) public enum SegmentFile {
    /// Why bytes, or a file, are not a usable segment.
    public enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        /// The framing, a checksum or a payload is wrong (as the reader says).
        case damaged(String)
        /// Damage or an early end at a byte: a copy still in progress reads so too.
        case incomplete(offset: Int, reason: String)
        case openTail
        case noOperations
        /// The file holds other operations than its name says.
        case notWhatItsNameSays
        case symbolicLink
        case notRegularFile
        case tooLarge(bytes: Int, operations: UInt64)
        case unreadable(errno: Int32)
        /// The file ended before its size said: it shrank while read.
        case shrank(at: Int)
        /// A bundle of segments is malformed (its framing, not a segment in it).
        case badBundle(String)
        /// The storage holding the file did not give it (a server error, a dropped
        /// connection): the reason, in words.
        case unavailable(String)

        public var description: String {
            switch self {
            case .damaged(let reason): reason
            case .incomplete(let offset, let reason):
                "damaged or incomplete at byte \(offset) (\(reason)); a copy still in progress is read on a later sync"
            case .openTail: "an open tail, not a sealed segment"
            case .noOperations: "holds no operations"
            case .notWhatItsNameSays: "its contents do not match its name; not imported"
            case .symbolicLink: "a symbolic link; links in a shared folder are never followed"
            case .notRegularFile: "not a regular file"
            case .tooLarge(let bytes, let operations):
                "\(bytes) bytes, more than a segment of \(operations == 1 ? "1 operation" : "\(operations) operations") can take"
            case .unreadable(let e): "cannot be read: \(systemErrorText(e))"
            case .shrank(let offset): "the file ended at byte \(offset), before its size said (it shrank while read)"
            case .badBundle(let reason): reason
            case .unavailable(let reason): "the storage did not give it: \(reason)"
            }
        }
    }

    /// A sealed segment holding `commits` (consecutive, non-empty) of `replica`.
    /// - Parameter effort: `.small` for a file that is kept (a shared folder's), `.balanced`
    ///   for one made while a peer waits.
    public static func encode(replica: ReplicaID, commits: [Commit], effort: LZ4Block.Effort = .small) -> [UInt8] {
        SegmentCodec.sealed(replica, commits, effort: effort)
    }

    /// The replica and the operations a sealed segment holds, checked by its framing and
    /// checksums alone (nothing decoded): what a transport compares with a file's name or a
    /// peer's claim before integrating it with ``TaskStore/integrate(segment:)``.
    /// - Throws: ``Invalid`` when the bytes are not an undamaged sealed segment.
    public static func span(_ bytes: [UInt8]) throws(Invalid) -> (replica: ReplicaID, first: UInt64, last: UInt64) {
        guard let scan = try? bytes.withUnsafeBytes({ buf in try SegmentScanner.scan(buf) }),
            case .clean = scan.ending, scan.header.kind == .sealed, let first = scan.records.first,
            first.firstSeq == scan.header.firstSeq, scan.nextSeq > first.firstSeq
        else {
            // Decoding says exactly what is wrong.
            _ = try decode(bytes)
            throw .damaged("not an undamaged sealed segment")
        }
        return (ReplicaID(bytes: scan.header.replica), first.firstSeq, scan.nextSeq - 1)
    }

    /// A sealed segment file of `size` bytes read in pieces that its own framing bounds
    /// (Spec/sync-folder.md, "Reader rules"), for files anyone may have written: its bytes
    /// and what ``span(_:)`` gives. `read` returns exactly `count` bytes from `offset`.
    /// - Throws: ``Invalid`` when the file is not an undamaged sealed segment holding
    ///   operations, or cannot be read.
    public static func read(
        size: Int, _ read: (_ offset: Int, _ count: Int) throws(Invalid) -> [UInt8]
    ) throws(Invalid) -> (bytes: [UInt8], replica: ReplicaID, first: UInt64, last: UInt64) {
        var failure: Invalid?
        let found: (bytes: [UInt8], header: SegmentHeader, nextSeq: UInt64)
        do {
            found = try SegmentScanner.readSealed(size: size) { (offset, count) throws(LogReadError) -> [UInt8] in
                do throws(Invalid) {
                    return try read(offset, count)
                } catch {
                    failure = error
                    throw .corruptRecord(offset: offset, reason: error.description)
                }
            }
        } catch {
            throw failure ?? .damaged("\(error)")
        }
        guard found.nextSeq > found.header.firstSeq else { throw .noOperations }
        return (found.bytes, ReplicaID(bytes: found.header.replica), found.header.firstSeq, found.nextSeq - 1)
    }

    /// Decodes a complete, undamaged sealed segment.
    public static func decode(_ bytes: [UInt8]) throws(Invalid) -> (replica: ReplicaID, commits: [Commit]) {
        let contents: SegmentCodec.Contents
        do {
            contents = try SegmentCodec.read(bytes)
        } catch {
            throw .damaged("\(error)")
        }
        if let d = contents.damage {
            throw .incomplete(offset: d.offset, reason: d.reason)
        }
        guard contents.header.kind == .sealed else { throw .openTail }
        guard let first = contents.commits.first, first.firstSeq == contents.header.firstSeq else {
            throw .noOperations
        }
        return (ReplicaID(bytes: contents.header.replica), contents.commits)
    }
}
