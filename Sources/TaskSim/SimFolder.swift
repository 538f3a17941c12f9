/// A shared folder (Dropbox, iCloud Drive, Syncthing, a network drive) as a sync client shows
/// it on each member device, with the client's faults.
///
/// Each member replica syncs (`FolderSync`) with its own view, a real folder. The simulator
/// plays the sync client: ``upload(from:)`` takes what a member wrote in its namespace into
/// the folder's truth (the "cloud"), and ``deliver(to:_:)`` copies the truth into a member's
/// view, late, in any order, half-copied, as placeholders, with conflict copies and junk, and
/// with removed files coming back for a while. A file is never lost for good: ``heal(_:)``
/// delivers everything exactly, as a sync client eventually does.
final class SimFolder {
    let name: String
    let root: String
    /// Member replica index → its namespaces (`tasklog-<replica hex>`): one, and another for
    /// each replica id it moved to after losing a fork.
    private(set) var members: [(replica: Int, namespace: String)]
    /// The truth: each file the members published, by path relative to the folder.
    private(set) var cloud: [String: [UInt8]] = [:]
    /// Every file ever published (its content when last seen), for resurrections.
    private(set) var history: [String: [UInt8]] = [:]

    init(name: String, root: String, members: [(replica: Int, namespace: String)]) {
        self.name = name
        self.root = root
        self.members = members
        for m in members { SimFiles.makeDirectories(view(of: m.replica)) }
    }

    func view(of replica: Int) -> String { SimFiles.join(root, "view-\(replica)") }

    func contains(_ replica: Int) -> Bool { members.contains { $0.replica == replica } }

    private func namespaces(of replica: Int) -> Set<String> { Set(members.filter { $0.replica == replica }.map(\.namespace)) }

    /// The member now also writes `namespace` (its store moved to a new replica id).
    func adopt(_ namespace: String, for replica: Int) {
        if !namespaces(of: replica).contains(namespace) { members.append((replica, namespace)) }
    }

    /// The namespace part of a path relative to the folder.
    private static func namespace(ofPath path: String) -> String { String(path.prefix { $0 != "/" }) }

    /// The greatest sequence number of `originHex`'s operations ever published here.
    func highestPublished(of originHex: String) -> UInt64 {
        var best: UInt64 = 0
        for path in history.keys {
            let file = path.split(separator: "/").last.map(String.init) ?? path
            let parts = file.split(separator: "-")
            guard parts.count == 3, parts[0] == originHex, file.hasSuffix(".tlog"),
                let last = UInt64(parts[2].dropLast(5), radix: 16)
            else { continue }
            best = max(best, last)
        }
        return best
    }

    /// Takes what `replica` holds in its own namespace of its view into the truth: new files
    /// appear, removed ones disappear.
    /// - Returns: whether the truth changed.
    @discardableResult
    func upload(from replica: Int) -> Bool {
        var changed = false
        for ns in namespaces(of: replica).sorted() where upload(ns, from: replica) { changed = true }
        return changed
    }

    private func upload(_ ns: String, from replica: Int) -> Bool {
        let dir = SimFiles.join(view(of: replica), ns)
        var changed = false
        var present = Set<String>()
        for file in SimFiles.list(dir) {
            let path = ns + "/" + file
            guard let bytes = SimFiles.read(SimFiles.join(dir, file)) else { continue }
            present.insert(path)
            if cloud[path] != bytes {
                cloud[path] = bytes
                history[path] = bytes
                changed = true
            }
        }
        for path in cloud.keys.sorted() where path.hasPrefix(ns + "/") && !present.contains(path) {
            cloud[path] = nil
            changed = true
        }
        return changed
    }

    /// One pass of the sync client on `replica`'s view, with `faults`.
    func deliver(to replica: Int, _ faults: FaultSet, _ rng: inout SimRandom, _ stats: inout SimStats) {
        let viewDir = view(of: replica)
        let own = namespaces(of: replica)
        var order = othersPaths(in: viewDir, own: own).sorted()
        if faults.contains(.folderDelays) { order.shuffle(using: &rng) }
        for path in order {
            deliver(path, in: viewDir, faults, &rng, &stats)
        }
        if faults.contains(.folderDuplicates) && rng.chance(0.15) {
            resurrectRemovedFile(in: viewDir, own: own, &rng, &stats)
        }
        if faults.contains(.conflictCopies) && rng.chance(0.05) {
            let junk = rng.pick([".DS_Store", "desktop.ini", "Icon\r", "notes.txt", "tasklog-notes"])
            SimFiles.write(SimFiles.join(viewDir, junk), rng.bytes(rng.int(0...40)))
            stats.note("folder: junk file")
        }
    }

    /// The paths of other members' files: in the truth, or segment-like in the view.
    private func othersPaths(in viewDir: String, own: Set<String>) -> Set<String> {
        var paths = Set(cloud.keys.filter { !own.contains(Self.namespace(ofPath: $0)) })
        for ns in SimFiles.list(viewDir) where !own.contains(ns) && SimFiles.isDirectory(SimFiles.join(viewDir, ns)) {
            for file in SimFiles.list(SimFiles.join(viewDir, ns)) where Self.isSegmentLike(file) {
                paths.insert(ns + "/" + file)
            }
        }
        return paths
    }

    /// Brings the view's copy of `path` toward the truth, or fails to in one of the ways
    /// `faults` allows.
    private func deliver(_ path: String, in viewDir: String, _ faults: FaultSet, _ rng: inout SimRandom, _ stats: inout SimStats) {
        let local = SimFiles.join(viewDir, path)
        guard let want = cloud[path] else {
            // Removed by its writer (merged into a bigger file), or resurrected earlier.
            if faults.contains(.folderDelays) && rng.chance(0.3) { stats.note("folder: removal delayed"); return }
            SimFiles.remove(local)
            return
        }
        if SimFiles.read(local) == want {
            removeStandIns(for: local)
            return
        }
        if faults.contains(.folderDelays) && rng.chance(0.3) {
            stats.note("folder: copy delayed")
            return
        }
        if faults.contains(.placeholders) && !SimFiles.exists(local) && rng.chance(0.15) {
            SimFiles.write(Self.placeholder(for: local), Array("bplist00 placeholder".utf8))
            stats.note("folder: iCloud placeholder")
            return
        }
        if faults.contains(.placeholders) && rng.chance(0.1) {
            SimFiles.write(Self.temporary(for: local), Array(want.prefix(rng.int(0...want.count))))
            stats.note("folder: sync-client temporary")
            return
        }
        if faults.contains(.halfCopies) && want.count > 1 && rng.chance(0.2) {
            SimFiles.write(local, Array(want.prefix(rng.int(1..<want.count))))
            stats.note("folder: half-copied file")
            return
        }
        SimFiles.writeAtomically(local, want)
        removeStandIns(for: local)
        addDuplicates(of: want, at: local, faults, &rng, &stats)
    }

    /// After a delivery, the client writes the file again in place, or leaves a conflict copy.
    private func addDuplicates(of want: [UInt8], at local: String, _ faults: FaultSet, _ rng: inout SimRandom, _ stats: inout SimStats) {
        if faults.contains(.folderDuplicates) && rng.chance(0.1) {
            SimFiles.write(local, want)  // delivered again, written in place
            stats.note("folder: duplicate delivery")
        }
        if faults.contains(.conflictCopies) && rng.chance(0.06) {
            let copy = String(local.dropLast(5)) + rng.pick([" (conflicted copy).tlog", " (1).tlog", ".sync-conflict-20260101-000000-ABCDEFG.tlog"])
            SimFiles.write(copy, rng.chance(0.5) ? want : Array(want.prefix(rng.int(0...want.count))))
            stats.note("folder: conflict copy")
        }
    }

    /// A removed file comes back (a client restoring what another device deleted).
    private func resurrectRemovedFile(in viewDir: String, own: Set<String>, _ rng: inout SimRandom, _ stats: inout SimStats) {
        let gone = history.keys.filter { cloud[$0] == nil && !own.contains(Self.namespace(ofPath: $0)) }.sorted()
        guard !gone.isEmpty else { return }
        let path = rng.pick(gone)
        SimFiles.writeAtomically(SimFiles.join(viewDir, path), history[path]!)
        stats.note("folder: removed file resurrected")
    }

    /// Delivers the truth exactly to `replica`'s view: every file complete, removed files
    /// gone, placeholders and temporaries replaced. Conflict copies and junk stay (clients
    /// leave them for people to tidy).
    func heal(_ replica: Int) {
        let viewDir = view(of: replica)
        let own = namespaces(of: replica)
        for (path, want) in cloud.sorted(by: { $0.key < $1.key }) where !own.contains(Self.namespace(ofPath: path)) {
            let local = SimFiles.join(viewDir, path)
            if SimFiles.read(local) != want { SimFiles.writeAtomically(local, want) }
            removeStandIns(for: local)
        }
        for ns in SimFiles.list(viewDir) where !own.contains(ns) && SimFiles.isDirectory(SimFiles.join(viewDir, ns)) {
            for file in SimFiles.list(SimFiles.join(viewDir, ns)) {
                let path = ns + "/" + file
                let local = SimFiles.join(viewDir, path)
                if Self.isSegmentLike(file) && cloud[path] == nil { SimFiles.remove(local) }
                if file.hasSuffix(".icloud") || file.hasPrefix(".syncthing.") { SimFiles.remove(local) }
            }
        }
    }

    /// A file a sync client manages as TaskLog's (not a conflict copy, placeholder or temporary).
    static func isSegmentLike(_ file: String) -> Bool {
        file.hasSuffix(".tlog") && !file.hasPrefix(".") && !file.contains(" ") && !file.contains("conflict")
    }

    static func placeholder(for path: String) -> String {
        let dir = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let file = path.split(separator: "/").last!
        return dir + "/." + file + ".icloud"
    }

    static func temporary(for path: String) -> String {
        let dir = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let file = path.split(separator: "/").last!
        return dir + "/.syncthing." + file + ".tmp"
    }

    private func removeStandIns(for local: String) {
        SimFiles.remove(Self.placeholder(for: local))
        SimFiles.remove(Self.temporary(for: local))
    }

    /// Writes the truth under `destination` (for a case folder).
    func writeCloud(to destination: String) {
        for (path, bytes) in cloud.sorted(by: { $0.key < $1.key }) { SimFiles.write(SimFiles.join(destination, path), bytes) }
    }
}
