#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore

/// This device's undo stack, `<store>/undo` (Spec/log-format.md, "Undo stack"): which of this
/// replica's operations each recorded change wrote, as sequence ranges, newest last. The
/// values before and after a change are read back from the logs, so an entry is a few bytes.
///
/// The file is not synced and never fsynced: losing it loses only the ability to undo. A file
/// of another replica id or of an earlier version is replaced by the next change recorded.
struct UndoStack {
    /// One recorded change: its name and the sequence numbers of the operations it wrote.
    struct Entry: Equatable {
        var name: String
        var ranges: [ClosedRange<UInt64>]
    }

    /// The most changes kept; older ones are dropped when the file is cut.
    static let kept = 50
    /// The file is cut to its newest ``kept`` entries once it passes this many bytes.
    static let trimAbove = 4 << 10

    let path: String

    static func header(_ replica: ReplicaID) -> [UInt8] { Array("tasklog-undo 1 \(replica.hex)\n".utf8) }

    /// Appends `entry`, written by `replica`. Failures are ignored: the change itself is
    /// committed, and a lost entry only means it cannot be undone.
    func push(_ entry: Entry, replica: ReplicaID) {
        let line = Self.line(entry)
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let header = Self.header(replica)
        var found = [UInt8](repeating: 0, count: header.count)
        let got = pread(fd, &found, header.count, 0)
        var st = stat()
        if got == header.count && found == header {
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if fstat(fd, &st) == 0 && Int(st.st_size) > Self.trimAbove, let stack = load() {
                rewrite(stack.replica, stack.entries.suffix(Self.kept))
            }
            close(fd)
            return
        }
        close(fd)
        // A new stack, or one of another replica id or an earlier version: start afresh.
        try? Posix.writeAtomically(path, header + line, sync: false)
    }

    /// The replica whose operations the entries name, and the entries, oldest first; nil when
    /// there is no stack in this format.
    func load() -> (replica: ReplicaID, entries: [Entry])? {
        guard let bytes = try? Posix.readFile(path) else { return nil }
        let lines = bytes.split(separator: 10, omittingEmptySubsequences: true)
        guard let first = lines.first, first.starts(with: Array("tasklog-undo 1 ".utf8)),
            let replica = ReplicaID(hex: String(decoding: first.dropFirst(15), as: UTF8.self))
        else { return nil }
        return (replica, lines.dropFirst().compactMap { Self.entry(String(decoding: $0, as: UTF8.self)) })
    }

    /// Takes `entry` off the stack: its newest copy, as the file holds it now (another process
    /// may have pushed one meanwhile).
    /// - Throws: when the file cannot be written.
    func drop(_ entry: Entry) throws(StoreError) {
        guard let (replica, entries) = load(), let i = entries.lastIndex(of: entry) else { return }
        var kept = entries
        kept.remove(at: i)
        try Posix.writeAtomically(path, Self.bytes(replica, kept[...]), sync: false)
    }

    private func rewrite(_ replica: ReplicaID, _ entries: ArraySlice<Entry>) {
        try? Posix.writeAtomically(path, Self.bytes(replica, entries), sync: false)
    }

    private static func bytes(_ replica: ReplicaID, _ entries: ArraySlice<Entry>) -> [UInt8] {
        entries.reduce(header(replica)) { $0 + line($1) }
    }

    /// `<first>-<last>[,<first>-<last>…] <name>\n`; control characters in the name become spaces.
    static func line(_ entry: Entry) -> [UInt8] {
        let ranges = entry.ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
        return Array((ranges + " ").utf8) + entry.name.utf8.map { $0 < 0x20 || $0 == 0x7F ? 0x20 : $0 } + [10]
    }

    static func entry(_ line: String) -> Entry? {
        guard let space = line.firstIndex(of: " ") else { return nil }
        var ranges: [ClosedRange<UInt64>] = []
        for part in line[..<space].split(separator: ",") {
            let ends = part.split(separator: "-")
            guard ends.count == 2, let a = UInt64(ends[0]), let b = UInt64(ends[1]), a >= 1, a <= b, b < .max else { return nil }
            ranges.append(a...b)
        }
        guard !ranges.isEmpty else { return nil }
        return Entry(name: String(line[line.index(after: space)...]), ranges: ranges)
    }
}
