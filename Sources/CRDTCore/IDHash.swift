/// A keyed hash of 64-bit words for the ids that key the state's hot dictionaries and sets
/// (task ids, operation ids, replica ids), used instead of SipHash through `Hasher`.
///
/// Ids are hashed on every operation applied and every entry of a snapshot decoded, and
/// SipHash was a fifth of rebuilding a state. Each word goes through a 64-bit finaliser
/// (MurmurHash3's `fmix64`) after the previous ones, starting from the table's seed and a
/// per-process random key, so ids that collide cannot be chosen without knowing both.
public enum IDHash {
    /// Random per process (deterministic when `SWIFT_DETERMINISTIC_HASHING` is set).
    @usableFromInline static let processKey: UInt64 = {
        var h = Hasher()
        h.combine(0x7461_736B_6C6F_67 as UInt64)
        return UInt64(bitPattern: Int64(h.finalize()))
    }()

    @inlinable @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var x = x
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }

    /// The hash of two words under a hash table's seed.
    @inlinable @inline(__always)
    public static func hash(_ a: UInt64, _ b: UInt64, seed: Int) -> Int {
        Int(truncatingIfNeeded: mix(mix(a ^ UInt64(bitPattern: Int64(seed)) ^ processKey) ^ b))
    }

    /// The hash of three words under a hash table's seed.
    @inlinable @inline(__always)
    public static func hash(_ a: UInt64, _ b: UInt64, _ c: UInt64, seed: Int) -> Int {
        Int(truncatingIfNeeded: mix(UInt64(bitPattern: Int64(hash(a, b, seed: seed))) ^ c))
    }
}
