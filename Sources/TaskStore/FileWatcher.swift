#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import OpLogFormat

/// Waits for changes under a few folders and their direct subfolders: change notifications
/// where the system has them, and in every case a poll at a fixed interval, for file systems
/// where notifications never arrive (network shares, some sync clients).
@_spi(Engine) public final class FileWatcher {
    private let roots: [String]
    private let pollInterval: Double
    private var fd: Int32 = -1
    private var lastPoll: Double

    /// - Parameters:
    ///   - roots: folders to watch, with their direct subfolders (watched as they appear).
    ///   - pollInterval: seconds between wake-ups when nothing is noticed.
    public init(roots: [String], pollInterval: Double) {
        self.roots = roots
        self.pollInterval = max(0.05, pollInterval)
        lastPoll = FileWatcher.now()
        fd = Platform.makeChangeNotifier()
        addWatches()
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Seconds on the monotonic clock.
    public static func now() -> Double { Double(Posix.monotonicNanoseconds()) / 1e9 }

    private func addWatches() {
        guard fd >= 0 else { return }
        for root in roots {
            Platform.watchFolder(fd, root, folderOnly: false)
            for name in (try? Posix.list(root)) ?? [] where !name.hasPrefix(".") {
                // Real folders only: a symbolic link among them is not followed.
                Platform.watchFolder(fd, Posix.join(root, name), folderOnly: true)
            }
        }
    }

    /// Blocks until something changed under the roots, the poll interval passed, or
    /// `shouldStop` returns true (checked several times a second).
    /// - Returns: false when stopped.
    public func wait(shouldStop: () -> Bool) -> Bool {
        while !shouldStop() {
            let remaining = lastPoll + pollInterval - FileWatcher.now()
            if remaining <= 0 {
                lastPoll = FileWatcher.now()
                return true
            }
            let slice = Int32(min(remaining, 0.2) * 1000) + 1
            if fd >= 0 {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, slice) > 0 {
                    drain()
                    settle()
                    addWatches()
                    return !shouldStop()
                }
            } else {
                usleep(UInt32(slice) * 1000)
            }
        }
        return false
    }

    /// Lets a burst of writes settle so that one wake-up covers it: returns once the roots
    /// have been quiet for ``quiet`` seconds, or ``longestSettle`` after the first event. A
    /// single commit (a write, an fsync, a close) wakes the watcher a few milliseconds after it,
    /// not a fixed 20 ms.
    private func settle() {
        let end = FileWatcher.now() + Self.longestSettle
        while FileWatcher.now() < end {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(Self.quiet * 1000)) > 0 else { return }
            drain()
        }
    }

    static let quiet = 0.003
    static let longestSettle = 0.02

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }
}
