/// The faults a simulation may inject. Each is drawn from the run's seed.
package struct FaultSet: OptionSet, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// A replica crashes: the commit in flight is torn (and not acknowledged), a seal or a
    /// merge is interrupted, temporary files are left behind; the replica then reopens.
    package static let crashes = FaultSet(rawValue: 1 << 0)
    /// Folder copies arrive late, in any order.
    package static let folderDelays = FaultSet(rawValue: 1 << 1)
    /// Files arrive twice, and files their writer removed come back for a while.
    package static let folderDuplicates = FaultSet(rawValue: 1 << 2)
    /// Files appear half-copied under their final name and are completed later.
    package static let halfCopies = FaultSet(rawValue: 1 << 3)
    /// Sync clients leave conflict copies (`name (conflicted copy).tlog`) and other junk.
    package static let conflictCopies = FaultSet(rawValue: 1 << 4)
    /// iCloud placeholders (`.name.icloud`) stand in for files not downloaded yet, and sync
    /// clients' temporaries (`.syncthing.name.tmp`) appear beside them.
    package static let placeholders = FaultSet(rawValue: 1 << 5)
    /// HTTP requests are lost before or after the peer handled them.
    package static let linkDrops = FaultSet(rawValue: 1 << 6)
    /// HTTP request or response bodies are cut short.
    package static let linkCuts = FaultSet(rawValue: 1 << 7)
    /// HTTP requests are delivered twice.
    package static let linkResends = FaultSet(rawValue: 1 << 8)
    /// Clocks drift apart and jump backwards.
    package static let clockSkew = FaultSet(rawValue: 1 << 9)
    /// A clock jumps years into the future (and is later corrected).
    package static let futureClock = FaultSet(rawValue: 1 << 10)
    /// A replica's store is replaced by an old backup of it, which syncs before writing again.
    package static let backups = FaultSet(rawValue: 1 << 11)
    /// A replica's machine loses power: every file of its store goes back to what was last
    /// fsynced (a write acknowledged before its fsync is lost).
    package static let powerLoss = FaultSet(rawValue: 1 << 12)

    package static let none: FaultSet = []
    package static let folders: FaultSet = [.folderDelays, .folderDuplicates, .halfCopies, .conflictCopies, .placeholders]
    package static let links: FaultSet = [.linkDrops, .linkCuts, .linkResends]
    package static let clocks: FaultSet = [.clockSkew, .futureClock]
    package static let all: FaultSet = [.crashes, .powerLoss, .backups, .folders, .links, .clocks]

    static let names: [(FaultSet, String)] = [
        (.crashes, "crashes"), (.folderDelays, "folderDelays"), (.folderDuplicates, "folderDuplicates"),
        (.halfCopies, "halfCopies"), (.conflictCopies, "conflictCopies"), (.placeholders, "placeholders"),
        (.linkDrops, "linkDrops"), (.linkCuts, "linkCuts"), (.linkResends, "linkResends"),
        (.clockSkew, "clockSkew"), (.futureClock, "futureClock"), (.backups, "backups"),
        (.powerLoss, "powerLoss"),
    ]

    package var description: String {
        if self == .all { return "all" }
        if isEmpty { return "none" }
        return FaultSet.names.filter { contains($0.0) }.map(\.1).joined(separator: ",")
    }

    /// Parses what ``description`` prints (names separated by commas, or `all` / `none`).
    package init?(names text: String) {
        self = []
        for part in text.split(separator: ",").map({ String($0) }) {
            switch part {
            case "all": formUnion(.all)
            case "none": break
            default:
                guard let f = FaultSet.names.first(where: { $0.1 == part }) else { return nil }
                formUnion(f.0)
            }
        }
    }
}
