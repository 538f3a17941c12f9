@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Reading the folder's segment files through the storage, each checked against its name.
extension FolderSync {
    /// The bytes of a listed segment file, checked by their framing and checksums to be an
    /// undamaged sealed segment holding what its name says, or nil (noted, and marked failed)
    /// when it is gone, unreadable or not what its name says.
    func readChecked(_ entry: Entry, failed: inout Set<String>, report: inout SyncReport) -> [UInt8]? {
        guard case .bytes(let bytes) = fetch(entry, failed: &failed, report: &report) else { return nil }
        return bytes
    }

    /// What reading a listed segment file gave.
    enum Fetched {
        case bytes([UInt8])
        /// It is no longer there.
        case gone
        /// It is not usable (noted).
        case unusable
    }

    /// Reads and checks a listed segment file as ``readChecked(_:failed:report:)`` does, and
    /// tells a file that is gone from one that is not usable. Either is marked failed.
    func fetch(_ entry: Entry, failed: inout Set<String>, report: inout SyncReport) -> Fetched {
        do {
            guard let file = try readFile(entry) else {
                failed.insert(entry.path)
                return .gone
            }
            guard file.replica == entry.name.origin, file.first == entry.name.first, file.last == entry.name.last
            else { throw SegmentFile.Invalid.notWhatItsNameSays }
            return .bytes(file.bytes)
        } catch {
            failed.insert(entry.path)
            report.skipped.append((entry.path, "\(error); it will be tried again on the next sync"))
            return .unusable
        }
    }

    /// The commits of a listed segment file, or nil (noted, and marked failed) when it is
    /// gone, unreadable or not what its name says.
    func readSegment(_ entry: Entry, failed: inout Set<String>, report: inout SyncReport) -> [Commit]? {
        guard let bytes = readChecked(entry, failed: &failed, report: &report) else { return nil }
        do {
            return try SegmentFile.decode(bytes).commits
        } catch {
            failed.insert(entry.path)
            report.skipped.append((entry.path, "\(error); it will be tried again on the next sync"))
            return nil
        }
    }
}
