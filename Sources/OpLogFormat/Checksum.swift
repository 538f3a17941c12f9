import CXXHash

/// The record and header checksum: XXH32 with seed 0 (Spec/log-format.md, "Records").
public enum Checksum {
    public static func xxh32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        XXH32(bytes.baseAddress, bytes.count, FormatConstants.checksumSeed)
    }

    public static func xxh32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { xxh32($0) }
    }
}
