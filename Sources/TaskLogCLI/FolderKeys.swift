#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// The passphrase and key handling of `sync DIR` (Spec/encryption.md): `--encrypt`, `--rekey`,
/// `--passphrase-file`, `TASKLOG_PASSPHRASE` and the terminal prompt.
extension Context {
    /// The folder's keyring for this sync, or nil for a plaintext folder (or one not there yet).
    func folderKeyring(_ store: TaskStore, storage: any FolderStorage) throws -> FolderKeyring? {
        let folder = storage.location
        let encrypt = arguments.has(Flags.encrypt)
        let rekey = arguments.has(Flags.rekey)
        if encrypt && rekey { throw UsageError(message: "--encrypt and --rekey cannot be combined; encrypt first, rekey later") }
        if encrypt {
            guard let passphrase = try passphrase(prompt: "Passphrase for \(folder): ", confirming: true) else {
                throw UsageError(message: "--encrypt needs a passphrase: --passphrase-file F, TASKLOG_PASSPHRASE, or a terminal to type it on")
            }
            return try FolderKeyring.encrypt(storage: storage, store: store, passphrase: passphrase)
        }
        if rekey {
            guard let current = try FolderKeyring.unlock(storage: storage, store: store) else {
                throw EncryptionError.notEncrypted(folder: folder)
            }
            guard let passphrase = try passphrase(prompt: "New passphrase for \(folder): ", confirming: true) else {
                throw UsageError(message: "--rekey needs the new passphrase: --passphrase-file NEW, TASKLOG_PASSPHRASE, or a terminal")
            }
            let next = try current.rekey(storage: storage, store: store, passphrase: passphrase)
            Output.line("started key epoch \(next.epoch) in \(folder); devices that know only the old passphrase must sync with the new one")
            return next
        }
        let passphraseGiven = arguments.given(Options.passphraseFile) || getenv("TASKLOG_PASSPHRASE") != nil
        if !(storage is LocalFolderStorage) && !passphraseGiven {
            // Read from the store alone: a remote folder's key files cost requests, and the sync
            // checks them at every listing anyway. It refuses a folder it finds encrypted.
            return try FolderKeyring.remembered(for: storage, store: store)
        }
        if storage is LocalFolderStorage && !Posix.isDirectory(storage.location) { return nil }
        do {
            return try FolderKeyring.unlock(storage: storage, store: store, passphrase: try passphrase(prompt: nil))
        } catch let error as EncryptionError {
            // Asked for on the terminal only now, when the store does not know the (new) key.
            switch error {
            case .passphraseNeeded, .rekeyed: break
            default: throw error
            }
            guard !arguments.given(Options.passphraseFile), getenv("TASKLOG_PASSPHRASE") == nil,
                let typed = try passphrase(prompt: "Passphrase for the encrypted folder \(folder): ")
            else { throw error }
            return try FolderKeyring.unlock(storage: storage, store: store, passphrase: typed)
        }
    }

    /// The passphrase from `--passphrase-file` (its first line), else `TASKLOG_PASSPHRASE`,
    /// else typed on the terminal without echo when `prompt` is given (twice when `confirming` a
    /// new one, which must match). An empty one is none.
    private func passphrase(prompt: String?, confirming: Bool = false) throws -> [UInt8]? {
        if let file = try arguments.value(Options.passphraseFile) {
            let line = try readSecretLine(file, what: "passphrase file")
            return line.isEmpty ? nil : line
        }
        if let v = getenv("TASKLOG_PASSPHRASE"), v.pointee != 0 { return Array(String(cString: v).utf8) }
        guard let prompt else { return nil }
        let typed = Self.readFromTerminal(prompt: prompt)
        if confirming, typed != nil, Self.readFromTerminal(prompt: "The same again: ") != typed {
            throw CommandFailure(message: "the two passphrases typed differ; nothing was changed, try again")
        }
        return typed
    }

    /// A line typed on the controlling terminal with echo off; nil without a terminal.
    private static func readFromTerminal(prompt: String) -> [UInt8]? {
        guard isatty(0) == 1 else { return nil }
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(fd, TCSAFLUSH, &saved)
            _ = write(fd, "\n", 1)
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < secretFileLimit, read(fd, &byte, 1) == 1, byte != 10, byte != 13 { line.append(byte) }
        return line.isEmpty ? nil : line
    }
}
