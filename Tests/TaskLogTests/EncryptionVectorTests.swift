import Foundation
@_spi(Engine) import CRDTCore
import Testing

@testable import TaskSync

/// The encrypted-folder golden vectors of Spec/vectors/encryption, made by an independent
/// script with PyNaCl: keys, epoch files and an envelope, byte for byte, and the vector folder
/// joined through the real binary.
@Suite("encryption golden vectors")
struct EncryptionVectorTests {
    static let root: String = {
        var dir = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { dir.deleteLastPathComponent() }
        return dir.appendingPathComponent("Spec/vectors/encryption").path
    }()

    struct Vectors {
        let json: [String: Any]
        var passphrases: [String] { json["passphrases"] as! [String] }
        var folderID: [UInt8] { hex(json["folder"]) }
        var epochs: [[String: Any]] { json["epochs"] as! [[String: Any]] }
        var device: [String: String] { json["device"] as! [String: String] }
        var envelope: [String: Any] { json["envelope"] as! [String: Any] }

        func hex(_ value: Any?) -> [UInt8] { Sodium.bytes(hex: value as! String, count: (value as! String).count / 2)! }
        func epochText(_ i: Int) throws -> String {
            try String(contentsOfFile: "\(root)/folder/\(epochs[i]["file"] as! String)", encoding: .utf8)
        }
    }

    static func load() throws -> Vectors {
        Vectors(json: try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(root)/vectors.json"))) as! [String: Any])
    }

    @Test("Argon2id and the four subkeys give each epoch's keys")
    func keysMatchTheVectors() throws {
        let v = try Self.load()
        for (i, epoch) in v.epochs.enumerated() {
            let key = Sodium.argon2id(
                Array(v.passphrases[i].utf8), salt: v.hex(epoch["salt"]), opsLimit: UInt64(epoch["opslimit"] as! Int),
                memLimit: epoch["memlimit"] as! Int)
            #expect(key == v.hex(epoch["key"]))
            let subkeys = epoch["subkeys"] as! [String: String]
            for (name, id) in [("segments", 1), ("check", 2), ("chain", 3), ("endorsement", 4)] {
                #expect(Sodium.subkey(v.hex(epoch["key"]), id: UInt64(id)) == v.hex(subkeys[name]), "\(name)")
            }
        }
        #expect(DeviceKey(seed: v.hex(v.device["seed"])).publicKey == v.hex(v.device["public"]))
    }

    @Test("both epoch files are written byte for byte, read back, and chain epoch 2 to epoch 1")
    func epochFilesMatchTheVectors() throws {
        let v = try Self.load()
        let (one, two) = (v.epochs[0], v.epochs[1])
        let cost = KeyCost(opsLimit: 2, memLimit: 64 << 20)
        let first = EpochFile.make(folderID: v.folderID, epoch: 1, cost: cost, salt: v.hex(one["salt"]), key: v.hex(one["key"]), previousKey: nil)
        let second = EpochFile.make(
            folderID: v.folderID, epoch: 2, cost: cost, salt: v.hex(two["salt"]), key: v.hex(two["key"]),
            previousKey: v.hex(one["key"]), nonce: v.hex(two["chainNonce"]))
        let (text1, text2) = (try v.epochText(0), try v.epochText(1))
        #expect(first.text == text1 && second.text == text2)
        let read = try #require(EpochFile(text: try v.epochText(1)))
        #expect(read == second && read.isKey(v.hex(two["key"])) && !read.isKey(v.hex(one["key"])))
        #expect(read.previousKey(under: v.hex(two["key"])) == v.hex(one["key"]) && read.isEndorsed(by: v.hex(one["key"])))
    }

    @Test("the envelope is sealed byte for byte and opens to the segment")
    func envelopeMatchesTheVector() throws {
        let v = try Self.load()
        let e = v.envelope
        let segment = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.root)/\(e["segment"] as! String)")))
        let expected = Array(try Data(contentsOf: URL(fileURLWithPath: "\(Self.root)/\(e["file"] as! String)")))
        let writer = ReplicaID(bytes: v.hex(e["writer"]))
        let epoch = e["epoch"] as! Int
        let key = Sodium.subkey(v.hex(v.epochs[epoch - 1]["key"]), id: 1)
        let sealed = SealedEnvelope.seal(
            segment, epoch: UInt32(epoch), key: key, writer: writer, signing: DeviceKey(seed: v.hex(v.device["seed"])), nonce: v.hex(e["nonce"]))
        #expect(sealed == expected)
        let header = try SealedEnvelope.header(of: expected)
        #expect(header.paddingShift == UInt8(e["paddingShift"] as! Int) && header.writer == writer)
        #expect(try header.open(expected, key: key) == segment)
        let otherKey = Sodium.subkey(v.hex(v.epochs[2 - epoch]["key"]), id: 1)
        #expect(throws: SealError.doesNotAuthenticate) { try header.open(expected, key: otherKey) }
    }

    @Test("joining the vector folder with the epoch-2 passphrase imports the segment; the epoch-1 passphrase is refused as old")
    func vectorFolderJoinsThroughTheChain() throws {
        let v = try Self.load()
        let dir = TemporaryDirectory()
        let folder = dir.sub("folder")
        try FileManager.default.copyItem(atPath: "\(Self.root)/folder", toPath: folder)
        for (i, phrase) in v.passphrases.enumerated() {
            try (phrase + "\n").write(toFile: dir.sub("pass\(i + 1)"), atomically: true, encoding: .utf8)
        }
        let old = try CLI.run(["sync", folder, "--passphrase-file", dir.sub("pass1")], store: dir.sub("old"), stdin: "")
        #expect(old.status == 1 && old.stderr.contains("rekeyed"), "\(old)")
        let store = dir.sub("store")
        let joined = try CLI.run(["sync", folder, "--passphrase-file", dir.sub("pass2")], store: store, stdin: "")
        #expect(joined.status == 0 && joined.stdout.contains("received 152 operations"), "\(joined)")
        let expected = GoldenVectorTests.taskLines(try String(contentsOfFile: GoldenVectorTests.vectors + "/sealed.expected.json", encoding: .utf8))
        let listed = try CLI.run(["list", "--all", "--json"], store: store)
        #expect(GoldenVectorTests.taskLines(listed.stdout) == expected)
    }
}
