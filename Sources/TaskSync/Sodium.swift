import CSodium

/// The libsodium calls that encrypted folders use, with Swift arrays in and out
/// (Spec/encryption.md names each one).
enum Sodium {
    /// libsodium's own initialisation; every entry point below runs it first.
    private static let ready: Bool = sodium_init() >= 0

    static func random(_ count: Int) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    /// Argon2id (`crypto_pwhash`, ALG_ARGON2ID13): 32 bytes from a passphrase; nil when out of memory.
    static func argon2id(_ passphrase: [UInt8], salt: [UInt8], opsLimit: UInt64, memLimit: Int) -> [UInt8]? {
        precondition(ready && salt.count == Int(crypto_pwhash_saltbytes()))
        var out = [UInt8](repeating: 0, count: 32)
        let text = passphrase.map { CChar(bitPattern: $0) }
        let status = crypto_pwhash(&out, 32, text, UInt64(text.count), salt, opsLimit, memLimit, crypto_pwhash_alg_argon2id13())
        return status == 0 ? out : nil
    }

    /// `crypto_kdf_derive_from_key`: the 32-byte subkey `id` of `key` in the context "tasklog1".
    static func subkey(_ key: [UInt8], id: UInt64) -> [UInt8] {
        precondition(ready && key.count == 32)
        var out = [UInt8](repeating: 0, count: 32)
        _ = crypto_kdf_derive_from_key(&out, 32, id, "tasklog1", key)
        return out
    }

    /// BLAKE2b-256 of `message` keyed with `key` (`crypto_generichash`).
    static func mac(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(ready)
        var out = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&out, 32, message, UInt64(message.count), key, key.count)
        return out
    }

    /// XChaCha20-Poly1305 (IETF) encryption: ciphertext followed by its 16-byte tag.
    static func seal(_ plain: [UInt8], additional: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(ready && nonce.count == 24 && key.count == 32)
        var out = [UInt8](repeating: 0, count: plain.count + 16)
        var length: UInt64 = 0
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
            &out, &length, plain, UInt64(plain.count), additional, UInt64(additional.count), nil, nonce, key)
        return out
    }

    /// The plaintext of ``seal(_:additional:nonce:key:)``'s output, or nil if it does not authenticate.
    static func open(_ sealed: [UInt8], additional: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
        precondition(ready && nonce.count == 24 && key.count == 32)
        guard sealed.count >= 16 else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count - 16)
        var length: UInt64 = 0
        let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &length, nil, sealed, UInt64(sealed.count), additional, UInt64(additional.count), nonce, key)
        return status == 0 ? out : nil
    }

    /// The Ed25519 key pair of a 32-byte seed (`crypto_sign_seed_keypair`).
    static func signingKeys(seed: [UInt8]) -> (public: [UInt8], secret: [UInt8]) {
        precondition(ready && seed.count == 32)
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 64)
        _ = crypto_sign_seed_keypair(&pk, &sk, seed)
        return (pk, sk)
    }

    /// A detached Ed25519 signature (64 bytes) of `message`.
    static func sign(_ message: [UInt8], secret: [UInt8]) -> [UInt8] {
        precondition(ready && secret.count == 64)
        var out = [UInt8](repeating: 0, count: 64)
        _ = crypto_sign_detached(&out, nil, message, UInt64(message.count), secret)
        return out
    }

    static func verify(_ signature: ArraySlice<UInt8>, of message: ArraySlice<UInt8>, by publicKey: [UInt8]) -> Bool {
        precondition(ready && signature.count == 64 && publicKey.count == 32)
        return signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                crypto_sign_verify_detached(s.baseAddress!, m.baseAddress, UInt64(m.count), publicKey) == 0
            }
        }
    }

    /// ISO/IEC 7816-4 padding (`sodium_pad`) to a multiple of `block`.
    static func pad(_ bytes: [UInt8], block: Int) -> [UInt8] {
        precondition(ready)
        var out = bytes + [UInt8](repeating: 0, count: block)
        var length = 0
        _ = sodium_pad(&length, &out, bytes.count, block, out.count)
        out.removeLast(out.count - length)
        return out
    }

    /// The bytes before ``pad(_:block:)``'s padding, or nil if the padding is malformed.
    static func unpad(_ bytes: [UInt8], block: Int) -> [UInt8]? {
        precondition(ready)
        var length = 0
        guard !bytes.isEmpty, sodium_unpad(&length, bytes, bytes.count, block) == 0 else { return nil }
        return Array(bytes[..<length])
    }

    /// Compares in constant time.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && sodium_memcmp(a, b, a.count) == 0
    }

    /// Lowercase hex (`sodium_bin2hex`).
    static func hex(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        _ = sodium_bin2hex(&out, out.count, bytes, bytes.count)
        return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of exactly `count` hex digits pairs, or nil (`sodium_hex2bin`).
    static func bytes(hex: some StringProtocol, count: Int) -> [UInt8]? {
        let text = String(hex)
        guard text.utf8.count == count * 2 else { return nil }
        var out = [UInt8](repeating: 0, count: count)
        var length = 0
        let status = sodium_hex2bin(&out, count, text, text.utf8.count, nil, &length, nil)
        return status == 0 && length == count ? out : nil
    }
}
