import CXXHash

/// The record and header checksum: XXH32 with seed 0 (Spec/log-format.md, "Records").
public enum Checksum {
    public static func xxh32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        XXH32(bytes.baseAddress, bytes.count, FormatConstants.checksumSeed)
    }

    public static func xxh32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { xxh32($0) }
    }

    /// The checksum of a snapshot's blocks and block table: XXH3-64 with seed 0
    /// (Spec/log-format.md, "Block checksums"). About three times as fast as XXH32.
    public static func xxh3(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        XXH3_64bits(bytes.baseAddress, bytes.count)
    }
}

/// Identifiers derived from content: XXH3-128 (Spec/sync-folder.md, "Forks").
public enum ContentHash {
    /// The 128-bit XXH3 hash of `bytes` (seed 0), as its high and low halves (the canonical
    /// big-endian form is `high` then `low`).
    public static func xxh3_128(_ bytes: [UInt8]) -> (high: UInt64, low: UInt64) {
        let h = bytes.withUnsafeBytes { XXH3_128bits($0.baseAddress, $0.count) }
        return (h.high64, h.low64)
    }
}
