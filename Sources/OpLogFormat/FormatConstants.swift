/// Constants of the on-disk format. Each cites its section of Spec/log-format.md.
public enum FormatConstants {
    /// "Segment header": the first four bytes of every segment file.
    public static let segmentMagic: [UInt8] = Array("TLOG".utf8)
    /// "Snapshot file": the first four bytes of a snapshot.
    public static let snapshotMagic: [UInt8] = Array("TSNP".utf8)
    /// "Versioning": the newest segment format version this build reads and writes.
    public static let segmentVersion: UInt8 = 1
    /// "Versioning": the newest snapshot format version this build reads and writes.
    public static let snapshotVersion: UInt8 = 3
    /// "Segment header": fixed size of the header including its checksum.
    public static let segmentHeaderSize = 36
    /// "Records": the largest payload (before compression) a reader accepts.
    public static let maxRawPayload = 64 << 20
    /// "Records": writers store payloads shorter than this raw without trying LZ4.
    public static let smallestCompressedPayload = 96
    /// "Records": seed of the XXH32 checksums.
    public static let checksumSeed: UInt32 = 0
}
