@_spi(Engine) import CRDTCore

/// A segment file as an encrypted folder holds it (Spec/encryption.md, "Envelope"): a cleartext
/// header, the padded segment sealed with XChaCha20-Poly1305 under the epoch's segment key with
/// the header as associated data, and the writer's Ed25519 signature over everything before it.
///
/// ```
/// 0   4  magic "TLSE"      4   1  version (1)     5  1  padding shift
/// 6   2  zero              8   4  epoch (LE)      12 16 writer replica id
/// 28 32  signer key        60 24  nonce           84 .. ciphertext + tag, then 64 signature
/// ```
struct SealedEnvelope: Equatable {
    static let magic: [UInt8] = Array("TLSE".utf8)
    static let version: UInt8 = 1
    static let headerSize = 84
    static let signatureSize = 64
    /// Header, authentication tag and signature: what sealing adds besides padding.
    static let overhead = headerSize + 16 + signatureSize

    var epoch: UInt32
    var writer: ReplicaID
    var signer: [UInt8]
    var paddingShift: UInt8
    var nonce: [UInt8]

    /// Whether `bytes` starts like an envelope (and so is no plaintext segment).
    static func looksSealed(_ prefix: ArraySlice<UInt8>) -> Bool { prefix.starts(with: magic) }

    /// The padding block for a segment of `count` bytes: 1/32 of its size class, at least 64
    /// bytes, so padding costs at most about 3% and hides the exact size.
    static func paddingShift(for count: Int) -> UInt8 {
        let sizeClass = Int.bitWidth - 1 - max(count, 1).leadingZeroBitCount
        return UInt8(max(6, sizeClass - 5))
    }

    var header: [UInt8] {
        var out = Self.magic + [Self.version, paddingShift, 0, 0]
        withUnsafeBytes(of: epoch.littleEndian) { out += $0 }
        out += writer.bytes + signer + nonce
        return out
    }

    /// Seals `segment` for the folder (under a fresh random nonce unless one is given).
    static func seal(
        _ segment: [UInt8], epoch: UInt32, key: [UInt8], writer: ReplicaID, signing: DeviceKey, nonce: [UInt8] = Sodium.random(24)
    ) -> [UInt8] {
        let shift = paddingShift(for: segment.count)
        let envelope = SealedEnvelope(epoch: epoch, writer: writer, signer: signing.publicKey, paddingShift: shift, nonce: nonce)
        let header = envelope.header
        let padded = Sodium.pad(segment, block: 1 << Int(shift))
        let body = header + Sodium.seal(padded, additional: header, nonce: envelope.nonce, key: key)
        return body + Sodium.sign(body, secret: signing.secretKey)
    }

    /// The header of a sealed file, checked for shape only.
    static func header(of bytes: [UInt8]) throws(SealError) -> SealedEnvelope {
        guard bytes.count >= overhead, looksSealed(bytes[...]) else { throw .truncated }
        guard bytes[4] == version else { throw .unknownVersion(bytes[4]) }
        guard bytes[5] >= 6, bytes[5] <= 30, bytes[6] == 0, bytes[7] == 0 else { throw .malformedHeader }
        let epoch = bytes[8..<12].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return SealedEnvelope(
            epoch: epoch, writer: ReplicaID(bytes: Array(bytes[12..<28])), signer: Array(bytes[28..<60]),
            paddingShift: bytes[5], nonce: Array(bytes[60..<84]))
    }

    /// Checks the signature, then opens the ciphertext: the segment inside.
    /// - Throws: why the file cannot be trusted, in words for the sync report.
    func open(_ bytes: [UInt8], key: [UInt8]) throws(SealError) -> [UInt8] {
        let signed = bytes.count - Self.signatureSize
        guard Sodium.verify(bytes[signed...], of: bytes[..<signed], by: signer) else { throw .badSignature }
        let sealed = Array(bytes[Self.headerSize..<signed])
        guard let padded = Sodium.open(sealed, additional: Array(bytes[..<Self.headerSize]), nonce: nonce, key: key)
        else { throw .doesNotAuthenticate }
        guard let segment = Sodium.unpad(padded, block: 1 << Int(paddingShift)) else { throw .malformedHeader }
        return segment
    }
}

/// Why a file in an encrypted folder was not imported.
public enum SealError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case unknownVersion(UInt8)
    case malformedHeader
    case badSignature
    case doesNotAuthenticate
    case unknownEpoch(UInt32)
    /// Sealed under an epoch before the newest: written before a rekey, or by a device shut out by it.
    case staleEpoch(UInt32, current: UInt32)
    case wrongWriter(claimed: ReplicaID, namespace: ReplicaID)
    case signerNotPinned(writer: ReplicaID)
    case plaintextInEncryptedFolder

    public var description: String {
        switch self {
        case .truncated: "it is too short to be a sealed segment (truncated?)"
        case .unknownVersion(let v): "it is sealed in envelope version \(v), which this TaskLog does not read; upgrade TaskLog"
        case .malformedHeader: "its envelope header is malformed"
        case .badSignature: "its signature does not verify (damaged or forged)"
        case .doesNotAuthenticate: "it does not decrypt under the folder's key (damaged or forged)"
        case .unknownEpoch(let e): "it is sealed under key epoch \(e), which this folder does not have"
        case .staleEpoch(let e, let current):
            "it is sealed under key epoch \(e), before the folder was rekeyed (now \(current)); its owner must sync with the new passphrase"
        case .wrongWriter(let c, let n):
            "it claims to be written by replica \(c.hex) but lies in the folder of replica \(n.hex)"
        case .signerNotPinned(let w): "it is signed by a key other than the one pinned for replica \(w.hex)"
        case .plaintextInEncryptedFolder:
            "it is a plaintext segment in an encrypted folder; its owner must sync with the passphrase"
        }
    }
}
