@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

/// What a sync with an encrypted folder seals and checks with: the folder's keyring, this
/// device's signing key, and the store's signer pins (Spec/encryption.md, "Reader rules").
final class FolderSeal: Sendable {
    let keyring: FolderKeyring
    let device: DeviceKey
    let pins: SignerPins
    let writer: ReplicaID

    init(keyring: FolderKeyring, store: TaskStore) throws(EncryptionError) {
        self.keyring = keyring
        device = try DeviceKey.of(store)
        pins = try SignerPins(store: store.path)
        writer = store.replica
        guard try pins.admits(device.publicKey, for: writer) else { throw .damagedStoreFile(Posix.join(store.path, "signers")) }
    }

    /// A segment sealed for the folder under the newest epoch.
    func seal(_ segment: [UInt8]) -> [UInt8] {
        SealedEnvelope.seal(segment, epoch: keyring.epoch, key: keyring.segmentKey(keyring.epoch)!, writer: writer, signing: device)
    }

    /// The largest sealed file that can hold a segment of at most `largest` bytes.
    /// Never more than ``largestFile``: a sealed file is read whole, so its name must not make a
    /// reader allocate what a hostile folder asks.
    static func largestSealed(_ largest: Int) -> Int {
        min(largestFile, largest >= Int.max / 2 ? Int.max : largest + largest / 32 + 64 + SealedEnvelope.overhead)
    }

    /// The largest sealed file a reader takes: 256 MiB, about 20 million operations.
    static let largestFile = 256 << 20

    /// The segment inside the sealed file `relative` of `writer`'s namespace, checked like a
    /// plaintext one (framing, checksums); nil if the file is gone.
    /// - Throws: why it is not imported: a ``SealError`` or a ``SegmentFile/Invalid``.
    func readSegment(
        in storage: any FolderStorage, _ relative: String, writer namespace: ReplicaID, operations: UInt64
    ) throws -> CheckedSegment? {
        let largest = Self.largestSealed(FolderFiles.largestSegment(operations: operations))
        let whole: [UInt8]?
        do { whole = try storage.read(relative, largest: largest) } catch .tooLarge(let bytes, _) { throw SegmentFile.Invalid.tooLarge(bytes: bytes, operations: operations) }
        guard let bytes = whole else { return nil }
        let segment = try open(bytes, namespace: namespace)
        return try SegmentFile.read(size: segment.count) { (offset, count) throws(SegmentFile.Invalid) in
            guard offset >= 0, count >= 0, offset + count <= segment.count else { throw .shrank(at: segment.count) }
            return Array(segment[offset..<(offset + count)])
        }
    }

    /// The segment inside a sealed file found in `namespace`'s folder, after every check.
    func open(_ bytes: [UInt8], namespace: ReplicaID) throws -> [UInt8] {
        if !SealedEnvelope.looksSealed(bytes.prefix(4)), bytes.count >= 4 { throw SealError.plaintextInEncryptedFolder }
        let envelope = try SealedEnvelope.header(of: bytes)
        guard envelope.writer == namespace else { throw SealError.wrongWriter(claimed: envelope.writer, namespace: namespace) }
        guard envelope.epoch >= keyring.epoch else { throw SealError.staleEpoch(envelope.epoch, current: keyring.epoch) }
        guard let key = keyring.segmentKey(envelope.epoch) else { throw SealError.unknownEpoch(envelope.epoch) }
        let segment = try envelope.open(bytes, key: key)
        // Pinned only once the file proved it was sealed by a holder of the folder key.
        guard try pins.admits(envelope.signer, for: namespace) else { throw SealError.signerNotPinned(writer: namespace) }
        return segment
    }
}
