#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// The commands that need the HTTP libraries (`serve`, `sync http(s)://…`), provided by the
/// `tasklog-http` executable so that `tasklog` itself starts without loading them.
package protocol HTTPCommands: Sendable {
    func serve(_ context: Context) throws -> Int32
    func sync(_ context: Context, peer: String, every: Double) throws -> Int32
    /// The storage of a folder in an object store or on a WebDAV server (`s3://…`,
    /// `webdav://…`), with the credentials the context gives.
    func folderStorage(_ target: String, _ context: Context) throws -> any FolderStorage
    /// What to add to the text of `error`, an error of the HTTP libraries, to name the
    /// options that fix it; nil for an error this does not know.
    func hint(for error: any Error) -> String?
}

/// Hands an HTTP command over to `tasklog-http`, installed next to `tasklog`.
enum HTTPTool {
    static func handOver() throws -> Int32 {
        var path = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &path, path.count - 1)
        let me = n > 0 ? String(decoding: path[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        let dir = me.lastIndex(of: "/").map { String(me[..<$0]) } ?? "."
        let helper = dir + "/tasklog-http"
        var argv: [UnsafeMutablePointer<CChar>?] = ([helper] + CommandLine.arguments.dropFirst()).map { strdup($0) }
        argv.append(nil)
        execv(helper, &argv)
        throw CommandFailure(message: "serve and sync http:// need the tasklog-http executable next to tasklog (\(helper): \(systemErrorText(errno))); build it with 'swift build -c release --product tasklog-http'")
    }
}

/// The store folder: --store, else $TASKLOG_STORE, else $XDG_DATA_HOME/tasklog, else ~/.local/share/tasklog.
func defaultStorePath() -> String {
    func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
    if let s = env("TASKLOG_STORE") { return s }
    #if canImport(Darwin)
    if let home = env("HOME") { return home + "/Library/Application Support/tasklog" }
    #endif
    if let xdg = env("XDG_DATA_HOME") { return xdg + "/tasklog" }
    return (env("HOME") ?? ".") + "/.local/share/tasklog"
}

/// The `tasklog` command line: parses, runs one command, prints errors, returns the exit status.
package enum CommandLineTool {
    /// The command called `name`, or a usage error that suggests the nearest one.
    static func command(_ name: String) throws(UsageError) -> Command {
        guard let command = Commands.named(name) else {
            var msg = "unknown command '\(name)'"
            if let near = ArgumentParser.nearest(name, in: Commands.all.map(\.name)) { msg += "; did you mean '\(near)'?" }
            throw UsageError(message: msg + " (run 'tasklog --help' for the list)")
        }
        return command
    }

    /// The options that fix `error`, to follow its text: library errors say what to check,
    /// and only the command line knows its flags.
    static func hint(for error: any Error) -> String? {
        switch error {
        case StoreError.notAStore(_, _), SyncError.store(.notAStore(_, _)): " with --store DIR or TASKLOG_STORE"
        case StoreError.taskNotFound(_): " ('tasklog list --all' shows them)"
        default: nil
        }
    }

    package static func main(_ arguments: [String], http: (any HTTPCommands)?) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        do {
            let (store, rest) = try ArgumentParser.extractStore(Array(arguments.dropFirst()))
            guard let name = rest.first, name != "--" else {
                Output.out(Commands.help + "\n")
                return rest.isEmpty ? 2 : 0
            }
            if name == "help" || name == "--help" || name == "-h" {
                guard rest.count > 1 else {
                    Output.out(Commands.help + "\n")
                    return 0
                }
                Output.out(try command(rest[1]).help)
                return 0
            }
            if name == "__complete" {
                let store = try? TaskStore.open(at: store ?? defaultStorePath(), create: false, options: Context.storeOptions)
                Output.out(try Completion.candidates(Array(rest.dropFirst()), store: store).map { $0 + "\n" }.joined())
                return 0
            }
            if name == "__manpage" {
                Output.out(ManPage.text)
                return 0
            }
            if name == "--version" {
                Output.line("tasklog 0.1.0")
                return 0
            }
            let command = try command(name)
            let args = Array(rest.dropFirst())
            if args.contains("--help") || args.contains("-h") {
                Output.out(command.help)
                return 0
            }
            let parsed = try ArgumentParser.parse(args, spec: command)
            return try command.run(Context(storePath: store ?? defaultStorePath(), arguments: parsed, http: http))
        } catch let e as UsageError {
            Output.error(e.message)
            return 2
        } catch StoreError.invalidArgument(let m) {
            Output.error(m)
            return 2
        } catch let e as CommandFailure {
            Output.error(e.message)
            return 1
        } catch {
            Output.error(message(for: error, http: http))
            return 1
        }
    }

    /// The library's words for `error`, with the options that fix it (``hint(for:)``), and
    /// this tool's ways to give a passphrase where one is needed.
    static func message(for error: any Error, http: (any HTTPCommands)?) -> String {
        let encryption = (error as? EncryptionError) ?? { if case .encryption(let e)? = error as? SyncError { e } else { nil } }()
        switch encryption {
        case .passphraseNeeded(let folder)?:
            return "the folder \(folder) is encrypted; give its passphrase with --passphrase-file F or TASKLOG_PASSPHRASE (nothing was synced)"
        case .notEncrypted(let folder)?:
            return "the folder \(folder) is not encrypted; use sync --encrypt to encrypt it"
        default:
            return "\(error)" + (hint(for: error) ?? http?.hint(for: error) ?? "")
        }
    }
}
