#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore

/// The names used in a shared folder (Spec/sync-folder.md, "Folder layout").
///
/// Each replica writes only inside its own folder `tasklog-<writer>/`; each file there is a
/// sealed segment `<origin>-<first>-<last>.tlog` of the origin replica's operations
/// first...last (the writer's own, or relayed from another replica). Files never change
/// once they appear.
enum SharedFolder {
    static let namespacePrefix = "tasklog-"
    static let temporaryPrefix = ".tmp-"

    static func namespace(of writer: ReplicaID) -> String { namespacePrefix + writer.hex }

    static func writer(ofNamespace name: String) -> ReplicaID? {
        guard name.hasPrefix(namespacePrefix) else { return nil }
        let hex = name.dropFirst(namespacePrefix.count)
        guard let r = ReplicaID(hex: hex), r.hex == hex else { return nil }
        return r
    }

    struct SegmentName: Hashable {
        var origin: ReplicaID
        var first: UInt64
        var last: UInt64

        /// How many operations the name says the file holds.
        var operations: UInt64 { last - first + 1 }

        var fileName: String { "\(origin.hex)-\(hex16(first))-\(hex16(last)).tlog" }

        init(origin: ReplicaID, first: UInt64, last: UInt64) {
            self.origin = origin
            self.first = first
            self.last = last
        }

        init?(fileName: String) {
            let parts = fileName.split(separator: "-", omittingEmptySubsequences: false)
            guard fileName.hasSuffix(".tlog"), parts.count == 3, parts[0].count == 32, parts[1].count == 16,
                parts[2].count == 21, let origin = ReplicaID(hex: parts[0]), origin.hex == parts[0],
                let first = UInt64(parts[1], radix: 16), let last = UInt64(parts[2].dropLast(5), radix: 16),
                hex16(first) == parts[1], hex16(last) == parts[2].dropLast(5), first >= 1, last >= first
            else { return nil }
            self.origin = origin
            self.first = first
            self.last = last
        }
    }

    /// Why a file that is not ours to read was skipped.
    static func reasonToSkip(_ name: String) -> String {
        let lower = name.lowercased()
        if lower.hasSuffix(".icloud") { return "an iCloud Drive placeholder (not downloaded yet)" }
        if lower.contains("conflicted copy") || lower.contains(".sync-conflict-") || lower.contains("conflict") {
            return "a conflict copy made by a sync client; TaskLog files never conflict, so it is not read"
        }
        if lower.hasPrefix(".syncthing.") || lower.hasPrefix("~") || lower.hasPrefix(".~") || lower.hasSuffix(".tmp")
            || lower.hasSuffix(".partial") || lower.hasSuffix(".crdownload") || lower.hasSuffix(".part")
        {
            return "a sync client's temporary file"
        }
        return "not a TaskLog segment file"
    }
}
