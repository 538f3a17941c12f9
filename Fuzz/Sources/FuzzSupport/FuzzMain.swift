#if canImport(Glibc)
import Glibc
#endif
import CLibFuzzer

/// The entry point of every fuzz target: hands the inputs libFuzzer generates to one target of
/// ``FuzzHarness`` (in a scratch folder of its own, on tmpfs when there is one) and turns a
/// ``FuzzViolation`` into a crash that libFuzzer reports and saves.
public enum FuzzMain {
    nonisolated(unsafe) static var harness: FuzzHarness?
    nonisolated(unsafe) static var target: FuzzTarget = .json

    public static func run(_ target: FuzzTarget) -> Never {
        self.target = target
        removeStaleScratch()
        let h = FuzzHarness(root: scratchBase() + "/\(scratchPrefix)\(getpid())")
        harness = h
        atexit { FuzzMain.harness?.cleanUp() }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in FuzzMain.one(data, size) }
        h.cleanUp()
        exit(status)
    }

    static func one(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        do {
            try harness!.run(target, bytes)
        } catch {
            fatalError("\(target.rawValue): \(error)")
        }
        return 0
    }

    static let scratchPrefix = "tasklog-fuzz-"

    static func scratchBase() -> String {
        if access("/dev/shm", W_OK) == 0 { return "/dev/shm" }
        return getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    }

    /// Scratch folders left by fuzzers that crashed (their process is gone).
    static func removeStaleScratch() { FuzzFiles.removeStale(in: scratchBase(), prefix: scratchPrefix) }
}

/// SwiftPM links executables with `--defsym main=<module>_main`, which comes too late to keep the
/// linker from pulling libFuzzer's own `main` (and its reference to this symbol) out of the
/// runtime archive. That `main` is never called; ours (in each target's main.swift) calls
/// `LLVMFuzzerRunDriver`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard FuzzMain.harness != nil else { fatalError("run a fuzz target through its own main") }
    return FuzzMain.one(data, size)
}
