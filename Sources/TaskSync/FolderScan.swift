#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskStore

extension FolderSync {
    /// A segment file found in the folder.
    struct Entry {
        var path: String
        /// The namespace and the file name, as found in the folder.
        var relative: String
        var name: SharedFolder.SegmentName
        var size: Int
        var writer: ReplicaID
    }

    /// Lists the folder: usable segment files, and notes on everything else. Nothing is
    /// followed through a symbolic link: a linked namespace or file is noted and skipped.
    func scan(_ report: inout SyncReport) -> [Entry] {
        var entries: [Entry] = []
        for top in names(in: folder) {
            let topPath = Posix.join(folder, top)
            if top.hasPrefix(SharedFolder.temporaryPrefix) || EpochFile.epoch(ofName: top) != nil { continue }
            switch FolderFiles.kind(topPath) {
            case .directory: break
            case .symbolicLink:
                if SharedFolder.writer(ofNamespace: top) != nil { report.skipped.append((topPath, FolderFiles.linkNote)) }
                continue
            case .missing: continue
            default:
                report.skipped.append((topPath, SharedFolder.reasonToSkip(top)))
                continue
            }
            guard let writer = SharedFolder.writer(ofNamespace: top) else {
                if !top.hasPrefix(".") { report.skipped.append((topPath, "not a TaskLog replica folder")) }
                continue
            }
            for name in names(in: topPath) {
                let path = Posix.join(topPath, name)
                if name.hasPrefix(SharedFolder.temporaryPrefix) { continue }
                guard let seg = SharedFolder.SegmentName(fileName: name) else {
                    report.skipped.append((path, SharedFolder.reasonToSkip(name)))
                    continue
                }
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFREG: entries.append(Entry(path: path, relative: top + "/" + name, name: seg, size: Int(st.st_size), writer: writer))
                case S_IFLNK: report.skipped.append((path, FolderFiles.linkNote))
                default: continue
                }
            }
        }
        return entries
    }

    /// The names in a folder, sorted; none if it cannot be listed.
    private func names(in dir: String) -> [String] { ((try? Posix.list(dir)) ?? []).sorted() }
}
