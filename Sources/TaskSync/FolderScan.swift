@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

extension FolderSync {
    /// A segment file found in the folder.
    struct Entry {
        /// Where it is, for messages: the storage's location and the key.
        var path: String
        /// The key: the namespace and the file name.
        var relative: String
        var name: SharedFolder.SegmentName
        var size: Int
        var writer: ReplicaID
        /// The storage's identity of the object (``StoredObject/identity``).
        var identity: String
    }

    /// Where `key` is, for messages.
    func path(of key: String) -> String { Posix.join(storage.location, key) }

    /// Lists the folder and scans the listing.
    func scan(_ report: inout SyncReport) throws(SyncError) -> [Entry] { scan(try storage.list(), &report) }

    /// The usable segment files of a listing, and notes on everything else (Spec/sync-folder.md,
    /// "Reader rules"). Nothing is followed through a link: a linked namespace or file is
    /// noted and skipped. Objects deeper than a namespace's files are skipped like folders.
    func scan(_ objects: [StoredObject], _ report: inout SyncReport) -> [Entry] {
        var tops: [String: StoredObject.Kind] = [:]
        var inside: [String: [String: StoredObject]] = [:]
        for object in objects {
            let parts = object.key.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count > 1 else {
                tops[object.key] = object.kind
                continue
            }
            // An object store has no folders: a key with a slash makes its first part one.
            if tops[parts[0]] == nil { tops[parts[0]] = .folder }
            var file = object
            if parts.count > 2 { file.kind = .folder }
            inside[parts[0], default: [:]][parts[1]] = inside[parts[0]]?[parts[1]] ?? file
        }
        var entries: [Entry] = []
        for (top, kind) in tops.sorted(by: { $0.key < $1.key }) {
            guard let writer = namespaceToRead(top, kind, &report) else { continue }
            for (name, object) in (inside[top] ?? [:]).sorted(by: { $0.key < $1.key }) {
                if name.hasPrefix(SharedFolder.temporaryPrefix) { continue }
                guard let seg = SharedFolder.SegmentName(fileName: name) else {
                    report.skipped.append((path(of: top + "/" + name), SharedFolder.reasonToSkip(name)))
                    continue
                }
                switch object.kind {
                case .file:
                    let key = top + "/" + name
                    entries.append(Entry(path: path(of: key), relative: key, name: seg, size: object.size, writer: writer, identity: object.identity))
                case .link: report.skipped.append((path(of: top + "/" + name), FolderFiles.linkNote))
                default: continue
                }
            }
        }
        return entries
    }

    /// The writer of the top-level entry `top` when it is a namespace to read; nil (noted when
    /// the reader rules say so) for anything else.
    private func namespaceToRead(_ top: String, _ kind: StoredObject.Kind, _ report: inout SyncReport) -> ReplicaID? {
        if top.hasPrefix(SharedFolder.temporaryPrefix) || EpochFile.epoch(ofName: top) != nil { return nil }
        switch kind {
        case .folder: break
        case .link:
            if SharedFolder.writer(ofNamespace: top) != nil { report.skipped.append((path(of: top), FolderFiles.linkNote)) }
            return nil
        default:
            report.skipped.append((path(of: top), SharedFolder.reasonToSkip(top)))
            return nil
        }
        guard let writer = SharedFolder.writer(ofNamespace: top) else {
            if !top.hasPrefix(".") { report.skipped.append((path(of: top), "not a TaskLog replica folder")) }
            return nil
        }
        return writer
    }
}
