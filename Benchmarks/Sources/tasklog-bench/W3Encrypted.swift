import Foundation
@_spi(Engine) import TaskStore
import TaskLog

/// W3 through an encrypted folder beside the same through a plaintext one, in each repetition
/// (plaintext first on even repetitions, encrypted first on odd ones), plus the first sync of
/// a joining device, whose passphrase costs one Argon2id derivation.
func runW3Encrypted(_ a: Arguments) throws -> [String: Any] {
    let passphrase = Array("correct horse battery staple".utf8)
    return try repeated(a, "w3-encrypted") { rep in
        var out: [String: Any] = [:]
        for sealed in rep % 2 == 0 ? [false, true] : [true, false] {
            let base = temporaryBase(a, "w3-encrypted")
            defer { try? FileManager.default.removeItem(atPath: base) }
            let (storeA, storeB, d) = try divergedPair(a, base: base, passphrase: sealed ? passphrase : nil)
            let folder = base + "/seed-folder"
            let keyringA = sealed ? try FolderKeyring.unlock(folder: folder, store: storeA) : nil
            let keyringB = sealed ? try FolderKeyring.unlock(folder: folder, store: storeB) : nil
            let before = directorySize(folder).bytes
            let clock = ContinuousClock()
            let took = try clock.measure {
                _ = try FolderSync(store: storeA, folder: folder, keyring: keyringA).sync()
                _ = try FolderSync(store: storeB, folder: folder, keyring: keyringB).sync()
                _ = try FolderSync(store: storeA, folder: folder, keyring: keyringA).sync()
            }
            let kind = sealed ? "encrypted" : "plaintext"
            out["\(kind)_converge_ms"] = milliseconds(took)
            out["\(kind)_bytes_per_op_in_folder"] = Double(directorySize(folder).bytes - before) / Double(2 * d)
            out["\(kind)_converged"] = try storeA.tasks(TaskQuery(status: .all)) == storeB.tasks(TaskQuery(status: .all))
            out["diverging_ops_per_side"] = d
            let joiner = try TaskStore.open(at: base + "/c")
            var unlocked: FolderKeyring?
            let unlock = try clock.measure {
                if sealed { unlocked = try FolderKeyring.unlock(folder: folder, store: joiner, passphrase: passphrase) }
            }
            let join = try clock.measure { _ = try FolderSync(store: joiner, folder: folder, keyring: unlocked).sync() }
            out["\(kind)_join_ms"] = milliseconds(unlock + join)
            if sealed { out["unlock_ms"] = milliseconds(unlock) }
        }
        let cost = KeyCost.interactive
        out["argon2id_cost"] = "\(cost.opsLimit) passes over \(cost.memLimit >> 20) MiB"
        return out
    }
}
