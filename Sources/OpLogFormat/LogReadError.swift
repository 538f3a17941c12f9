/// A reason a segment file could not be read (past some point).
public enum LogReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file does not start with the segment magic: not a TaskLog segment.
    case notASegment
    /// The file is shorter than a segment header.
    case truncatedHeader(size: Int)
    /// The header's checksum does not match its bytes.
    case headerChecksumMismatch
    /// The header names a format version this build does not know.
    case unsupportedVersion(found: UInt8, newestKnown: UInt8)
    /// The header names a segment kind this build does not know.
    case unknownSegmentKind(UInt8)
    /// The header sets flags (signatures, encryption) this build does not support.
    case unsupportedFlags(UInt16)
    /// A record is damaged: its checksum, framing or payload is invalid.
    case corruptRecord(offset: Int, reason: String)

    public var description: String {
        switch self {
        case .notASegment: "not a TaskLog segment (bad magic)"
        case .truncatedHeader(let size): "segment header truncated (\(size) bytes)"
        case .headerChecksumMismatch: "segment header checksum mismatch"
        case .unsupportedVersion(let found, let known):
            "segment format version \(found) is newer than this build supports (\(known)); upgrade tasklog"
        case .unknownSegmentKind(let k): "unknown segment kind \(k); upgrade tasklog"
        case .unsupportedFlags(let f): "segment uses features (flags 0x\(String(f, radix: 16))) this build does not support; upgrade tasklog"
        case .corruptRecord(let offset, let reason): "damaged record at byte \(offset): \(reason)"
        }
    }
}
