#!/usr/bin/env python3
"""Writes the TaskLog encrypted-folder golden vectors into the folder of this script.

An independent implementation of Spec/encryption.md with PyNaCl (libsodium), not a
wrapper of the Swift code. From fixed inputs it derives the epoch keys and subkeys,
writes two epoch files (epoch 2 chained to epoch 1 through `previous` and `endorsement`)
and seals the segment ../sealed.tlog in an envelope under epoch 2, the newest. It checks its own
output by opening it again: signature, ciphertext, padding, `previous` and `endorsement`.

Outputs, beside this script:
  vectors.json   the inputs, keys and subkeys, and where each file is
  folder/        an encrypted shared folder: two epoch files and one sealed envelope

Needs: apt-get install python3-nacl   (then run with /usr/bin/python3)
"""

import ctypes
import ctypes.util
import json
import os
import shutil

import nacl.bindings
import nacl.encoding
import nacl.hash
import nacl.pwhash.argon2id
import nacl.signing

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDER = os.path.join(HERE, "folder")
SEGMENT_PATH = os.path.join(HERE, "..", "sealed.tlog")

# ---------------------------------------------------------------------------
# Fixed inputs

PASSPHRASES = ["correct horse battery staple", "a new passphrase for epoch two"]
FOLDER_ID = bytes(range(0x00, 0x10))
SALTS = [bytes(range(0x10, 0x20)), bytes(range(0x20, 0x30))]
CHAIN_NONCE_2 = bytes(range(0x30, 0x48))
DEVICE_SEED = bytes(range(0x50, 0x70))
WRITER = bytes([0xC3] * 16)
ENVELOPE_NONCE = bytes(range(0x80, 0x98))
ENVELOPE_EPOCH = 2
SEGMENT_FIRST = 0x01
SEGMENT_LAST = 0x98

# libsodium's interactive cost: crypto_pwhash_OPSLIMIT_INTERACTIVE, MEMLIMIT_INTERACTIVE.
OPSLIMIT = 2
MEMLIMIT = 67108864

KDF_CONTEXT = b"tasklog1"
SUBKEY_IDS = {"segments": 1, "check": 2, "chain": 3, "endorsement": 4}
CHECK_LABEL = b"tasklog folder key check"
MAGIC = b"TLSE"
ENVELOPE_VERSION = 1
HEADER_SIZE = 84

# ---------------------------------------------------------------------------
# Primitives


def u32le(v):
    return v.to_bytes(4, "little")


def u64le(v):
    return v.to_bytes(8, "little")


def blake2b_256(message, key, salt=b"", person=b""):
    return nacl.hash.blake2b(message, digest_size=32, key=key, salt=salt,
                             person=person, encoder=nacl.encoding.RawEncoder)


def epoch_key(passphrase, salt):
    """crypto_pwhash with Argon2id 1.3 of the passphrase's UTF-8 bytes."""
    return nacl.pwhash.argon2id.kdf(32, passphrase.encode("utf-8"), salt,
                                    opslimit=OPSLIMIT, memlimit=MEMLIMIT,
                                    encoder=nacl.encoding.RawEncoder)


def kdf_derive(key, subkey_id, context=KDF_CONTEXT):
    """crypto_kdf_derive_from_key(32, id, context, key), as libsodium defines it:
    BLAKE2b-256 keyed with the master key, of the empty message, with salt = id (8 bytes,
    little-endian) then 8 zero bytes, and personal = the 8-byte context then 8 zero bytes."""
    assert len(context) == 8 and len(key) == 32
    return blake2b_256(b"", key, salt=u64le(subkey_id) + bytes(8),
                       person=context + bytes(8))


def libsodium_kdf():
    """A real crypto_kdf_derive_from_key, if one can be reached: PyNaCl's binding if it
    has one, else libsodium through ctypes. None when neither is there."""
    derive = getattr(nacl.bindings, "crypto_kdf_derive_from_key", None)
    if derive is not None:
        return lambda key, i: derive(32, i, KDF_CONTEXT, key)
    name = ctypes.util.find_library("sodium")
    if name is None:
        return None
    try:
        lib = ctypes.CDLL(name)
        fn = lib.crypto_kdf_derive_from_key
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64,
                   ctypes.c_char_p, ctypes.c_char_p]
    fn.restype = ctypes.c_int

    def derive_c(key, i):
        out = ctypes.create_string_buffer(32)
        assert fn(out, 32, i, KDF_CONTEXT, key) == 0
        return out.raw
    return derive_c


def subkeys(key):
    return {name: kdf_derive(key, i) for name, i in SUBKEY_IDS.items()}


def pad(data, block):
    """ISO/IEC 7816-4 padding as sodium_pad does it: 0x80, then zeros to the next
    multiple of block; a full block when data is already a multiple."""
    padded = data + b"\x80"
    return padded + bytes(-len(padded) % block)


def unpad(data, block):
    assert len(data) % block == 0 and len(data) > 0
    stripped = data.rstrip(b"\x00")
    assert stripped.endswith(b"\x80") and len(data) - len(stripped) < block
    return stripped[:-1]


def padding_shift(size):
    """s = max(6, floor(log2(size)) - 5)."""
    return max(6, size.bit_length() - 1 - 5)

# ---------------------------------------------------------------------------
# Epoch files


def epoch_file_name(epoch):
    return "tasklog-epoch-%08x" % epoch


def check_message(folder_id, epoch):
    return CHECK_LABEL + folder_id + u32le(epoch)


def key_check(key, folder_id, epoch):
    return blake2b_256(check_message(folder_id, epoch), subkeys(key)["check"])


def chain_previous(new_key, previous_key, folder_id, epoch, nonce):
    """`previous`: nonce, then the previous epoch key sealed under the new chain key."""
    sealed = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_encrypt(
        previous_key, check_message(folder_id, epoch), nonce, subkeys(new_key)["chain"])
    return nonce + sealed


def open_previous(key, previous, folder_id, epoch):
    return nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(
        previous[24:], check_message(folder_id, epoch), previous[:24],
        subkeys(key)["chain"])


def endorse(previous_key, text):
    return blake2b_256(text.encode("utf-8"), subkeys(previous_key)["endorsement"])


def epoch_file_text(epoch, folder_id, salt, key, previous_key=None, chain_nonce=None):
    lines = [
        "tasklog-folder-epoch 1",
        "folder " + folder_id.hex(),
        "epoch %d" % epoch,
        "argon2id %d %d" % (OPSLIMIT, MEMLIMIT),
        "salt " + salt.hex(),
        "check " + key_check(key, folder_id, epoch).hex(),
    ]
    if epoch == 1:
        return "".join(line + "\n" for line in lines)
    previous = chain_previous(key, previous_key, folder_id, epoch, chain_nonce)
    lines.append("previous " + previous.hex())
    text = "".join(line + "\n" for line in lines)
    return text + "endorsement " + endorse(previous_key, text).hex() + "\n"


def parse_epoch_file(text):
    fields = {}
    for line in text.split("\n")[:-1]:
        name, value = line.split(" ", 1)
        fields[name] = value
    return fields

# ---------------------------------------------------------------------------
# Envelope


def envelope_header(shift, epoch, writer, signer, nonce):
    header = (MAGIC + bytes([ENVELOPE_VERSION, shift, 0, 0]) + u32le(epoch)
              + writer + signer + nonce)
    assert len(header) == HEADER_SIZE
    return header


def seal(segment, epoch, key, writer, seed, nonce):
    signing = nacl.signing.SigningKey(seed)
    shift = padding_shift(len(segment))
    padded = pad(segment, 1 << shift)
    assert padded == nacl.bindings.sodium_pad(segment, 1 << shift)
    header = envelope_header(shift, epoch, writer, bytes(signing.verify_key), nonce)
    ciphertext = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_encrypt(
        padded, header, nonce, subkeys(key)["segments"])
    body = header + ciphertext
    return body + signing.sign(body).signature


def open_envelope(data, key):
    """Reader rules 1, 2, 5 and 6 of encryption.md; returns (header fields, segment)."""
    assert data[:4] == MAGIC and data[4] == ENVELOPE_VERSION and data[6:8] == b"\0\0"
    shift = data[5]
    assert 6 <= shift <= 30
    header, body, signature = data[:HEADER_SIZE], data[:-64], data[-64:]
    signer = header[28:60]
    nacl.signing.VerifyKey(signer).verify(body, signature)
    padded = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(
        body[HEADER_SIZE:], header, header[60:84], subkeys(key)["segments"])
    segment = unpad(padded, 1 << shift)
    assert segment == nacl.bindings.sodium_unpad(padded, 1 << shift)
    fields = {"shift": shift, "epoch": int.from_bytes(header[8:12], "little"),
              "writer": header[12:28], "signer": signer, "nonce": header[60:84]}
    return fields, segment


def segment_file_name(writer, first, last):
    return "%s-%016x-%016x.tlog" % (writer.hex(), first, last)

# ---------------------------------------------------------------------------
# Self-checks


def check_kdf_emulation(keys):
    real = libsodium_kdf()
    if real is None:
        print("note: no crypto_kdf_derive_from_key reachable; emulation not cross-checked")
        return
    for key in keys:
        for i in SUBKEY_IDS.values():
            assert real(key, i) == kdf_derive(key, i), "crypto_kdf emulation differs"


def check_epochs(keys, texts):
    for epoch, (key, text) in enumerate(zip(keys, texts), start=1):
        fields = parse_epoch_file(text)
        assert fields["epoch"] == str(epoch) and fields["folder"] == FOLDER_ID.hex()
        assert fields["check"] == key_check(key, FOLDER_ID, epoch).hex()
        assert epoch_key(PASSPHRASES[epoch - 1], bytes.fromhex(fields["salt"])) == key
    fields = parse_epoch_file(texts[1])
    previous = bytes.fromhex(fields["previous"])
    assert len(fields["previous"]) == 144
    assert open_previous(keys[1], previous, FOLDER_ID, 2) == keys[0]
    endorsed = texts[1][:texts[1].index("endorsement ")]
    assert endorsed.endswith("previous " + fields["previous"] + "\n")
    assert fields["endorsement"] == endorse(keys[0], endorsed).hex()
    # A wrong passphrase must not open epoch 2.
    wrong = epoch_key(PASSPHRASES[0], SALTS[1])
    assert key_check(wrong, FOLDER_ID, 2).hex() != fields["check"]


def check_envelope(data, key, segment):
    fields, opened = open_envelope(data, key)
    assert opened == segment
    assert fields["epoch"] == ENVELOPE_EPOCH and fields["writer"] == WRITER
    assert fields["nonce"] == ENVELOPE_NONCE
    assert fields["signer"] == nacl.bindings.crypto_sign_seed_keypair(DEVICE_SEED)[0]
    padded_size = len(pad(segment, 1 << fields["shift"]))
    assert len(data) == HEADER_SIZE + padded_size + 16 + 64

# ---------------------------------------------------------------------------
# Output


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def epoch_entry(epoch, key, file_name, chain_nonce=None):
    entry = {"epoch": epoch, "salt": SALTS[epoch - 1].hex(), "opslimit": OPSLIMIT,
             "memlimit": MEMLIMIT, "key": key.hex(),
             "subkeys": {name: k.hex() for name, k in subkeys(key).items()}}
    if chain_nonce is not None:
        entry["chainNonce"] = chain_nonce.hex()
    entry["file"] = file_name
    return entry


def main():
    with open(SEGMENT_PATH, "rb") as f:
        segment = f.read()

    keys = [epoch_key(p, s) for p, s in zip(PASSPHRASES, SALTS)]
    check_kdf_emulation(keys)
    texts = [
        epoch_file_text(1, FOLDER_ID, SALTS[0], keys[0]),
        epoch_file_text(2, FOLDER_ID, SALTS[1], keys[1], keys[0], CHAIN_NONCE_2),
    ]
    check_epochs(keys, texts)

    envelope = seal(segment, ENVELOPE_EPOCH, keys[ENVELOPE_EPOCH - 1], WRITER,
                    DEVICE_SEED, ENVELOPE_NONCE)
    check_envelope(envelope, keys[ENVELOPE_EPOCH - 1], segment)

    shutil.rmtree(FOLDER, ignore_errors=True)
    names = [epoch_file_name(1), epoch_file_name(2)]
    for name, text in zip(names, texts):
        write_bytes(os.path.join(FOLDER, name), text.encode("utf-8"))
    envelope_rel = os.path.join("folder", "tasklog-" + WRITER.hex(),
                                segment_file_name(WRITER, SEGMENT_FIRST, SEGMENT_LAST))
    write_bytes(os.path.join(HERE, envelope_rel), envelope)

    public, _ = nacl.bindings.crypto_sign_seed_keypair(DEVICE_SEED)
    vectors = {
        "passphrases": PASSPHRASES,
        "folder": FOLDER_ID.hex(),
        "device": {"seed": DEVICE_SEED.hex(), "public": public.hex()},
        "epochs": [epoch_entry(1, keys[0], names[0]),
                   epoch_entry(2, keys[1], names[1], CHAIN_NONCE_2)],
        "envelope": {"segment": "../sealed.tlog", "epoch": ENVELOPE_EPOCH,
                     "writer": WRITER.hex(), "nonce": ENVELOPE_NONCE.hex(),
                     "paddingShift": padding_shift(len(segment)),
                     "file": envelope_rel.replace(os.sep, "/")},
    }
    with open(os.path.join(HERE, "vectors.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(vectors, indent=2) + "\n")


if __name__ == "__main__":
    main()
