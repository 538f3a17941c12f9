import CLZ4

/// LZ4 block compression (the raw block format, no frame).
public enum LZ4Block {
    /// How hard to look for matches; every effort makes the same block format.
    public enum Effort: Sendable {
        /// liblz4's fast search: for records written while a user waits.
        case fast
        /// The high-compression search at a low level (2): about 12% larger than `.small` in
        /// a third of the time, for segments encoded while a peer waits.
        case balanced
        /// The high-compression search at level 6: for segments written once and read and
        /// sent many times.
        case small
    }

    /// Compresses `input`; returns nil when the result would not be smaller than the input,
    /// in which case the writer stores the bytes raw (Spec/log-format.md, "Records").
    /// - Parameter effort: how hard to look for matches.
    public static func compressIfSmaller(_ input: UnsafeRawBufferPointer, effort: Effort = .fast) -> [UInt8]? {
        guard input.count > 0, input.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        let limit = min(bound, input.count - 1)
        guard limit > 0 else { return nil }
        var out = [UInt8](unsafeUninitializedCapacity: limit) { buf, count in
            let source = input.baseAddress!.assumingMemoryBound(to: CChar.self)
            let target = UnsafeMutableRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self)
            let n = switch effort {
            case .fast: LZ4_compress_default(source, target, Int32(input.count), Int32(limit))
            case .balanced: LZ4_compress_HC(source, target, Int32(input.count), Int32(limit), 2)
            case .small: LZ4_compress_HC(source, target, Int32(input.count), Int32(limit), 6)
            }
            count = Int(max(n, 0))
        }
        if out.isEmpty { return nil }
        out.reserveCapacity(0)
        return out
    }

    /// A fast-compression state kept for many small blocks: each block starts from a cheap
    /// reset of the state instead of clearing its 16 KiB hash table (which cost more than
    /// compressing a commit of a few operations). Every block is independent, exactly as
    /// ``compressIfSmaller(_:effort:)`` with `.fast` makes it. One thread at a time (a tail
    /// writer uses it under the store lock).
    public final class FastCompressor: @unchecked Sendable {
        private let stream: UnsafeMutablePointer<LZ4_stream_t>
        /// Where blocks are compressed to, kept between calls.
        private var scratch: UnsafeMutablePointer<CChar>
        private var scratchCapacity: Int

        public init() {
            stream = LZ4_createStream()
            scratchCapacity = 4096
            scratch = .allocate(capacity: scratchCapacity)
        }

        deinit {
            LZ4_freeStream(stream)
            scratch.deallocate()
        }

        /// Compresses `input` and hands the block to `body` (valid only during the call); nil
        /// when the block would not be smaller than the input, which is then stored raw.
        public func compressIfSmaller<R>(
            _ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R
        ) -> R {
            guard input.count > 1, input.count <= Int(LZ4_MAX_INPUT_SIZE) else { return body(nil) }
            let limit = min(Int(LZ4_compressBound(Int32(input.count))), input.count - 1)
            if limit > scratchCapacity {
                scratch.deallocate()
                scratchCapacity = max(limit, scratchCapacity * 2)
                scratch = .allocate(capacity: scratchCapacity)
            }
            LZ4_resetStream_fast(stream)
            let n = LZ4_compress_fast_continue(
                stream, input.baseAddress!.assumingMemoryBound(to: CChar.self), scratch, Int32(input.count), Int32(limit), 1)
            return body(n > 0 ? UnsafeRawBufferPointer(start: scratch, count: Int(n)) : nil)
        }
    }

    /// Decompresses a block that must expand to exactly `rawCount` bytes.
    public static func decompress(_ input: UnsafeRawBufferPointer, rawCount: Int) -> [UInt8]? {
        guard rawCount > 0, input.count > 0 else { return nil }
        var ok = false
        let out = [UInt8](unsafeUninitializedCapacity: rawCount) { buf, count in
            MemoryHint.mapIn(buf.baseAddress!, bytes: rawCount)
            let n = LZ4_decompress_safe(
                input.baseAddress!.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(rawCount))
            ok = n == Int32(rawCount)
            count = ok ? rawCount : 0
        }
        return ok ? out : nil
    }
}
