@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Compares a store with a shared folder, device by device: what the folder holds of each, how
/// far each side is behind, and why what the folder holds is not in the store (Spec/sync-folder.md,
/// "Surveying a folder"). It lists and reads the folder as a sync does, with the same checks,
/// and writes nothing in the folder and no operation in the store (like a sync, it pins the
/// signing key of a writer it first meets in an encrypted folder).
///
/// It reads only the files a sync would read: those holding operations the store lacks, and
/// per namespace and device the furthest file within what the store holds (to find forks).
public struct FolderSurvey: Sendable {
    public let store: TaskStore
    @_spi(Engine) public let storage: any FolderStorage
    /// Where the folder is: its path, or its storage's location.
    public var folder: String { storage.location }

    public init(store: TaskStore, folder: String) {
        self.init(store: store, storage: LocalFolderStorage(folder: folder))
    }

    /// A survey of the folder in `storage`.
    @_spi(Engine) public init(store: TaskStore, storage: any FolderStorage) {
        self.store = store
        self.storage = storage
    }

    /// The survey of the folder as it is now.
    /// - Throws: ``SyncError/folderMissing(_:)``, or why the store or the folder's key files
    ///   cannot be read.
    public func survey() throws(SyncError) -> FolderReport {
        var report = FolderReport()
        let engine: FolderSync
        do {
            let keyring = try keyring(&report)
            engine = try FolderSync(store: store, storage: storage, keyring: keyring)
            report.epoch = keyring?.epoch
        } catch let e as EncryptionError {
            throw .encryption(e)
        } catch {
            throw .store(.invalidArgument("\(error)"))
        }
        do { try compare(with: engine, sealedWithoutKey: report.epoch == nil && !report.problems.isEmpty, &report) } catch let e as StoreError {
            throw .store(e)
        } catch {
            throw .store(.invalidArgument("\(error)"))
        }
        return report
    }

    /// The folder's keyring from the keys the store remembers (no passphrase): nil for a
    /// plaintext folder, or with the problem noted when the store lacks a key.
    private func keyring(_ report: inout FolderReport) throws(EncryptionError) -> FolderKeyring? {
        let epochs = try EpochFiles.read(storage)
        guard let first = epochs.first else {
            if FolderSync.record(of: folder, in: store)?.isEncrypted == true { report.problems.append(.encryption(.keyFilesMissing(folder: folder))) }
            return nil
        }
        do {
            return try FolderKeyring.unlock(storage: storage, store: store)
        } catch .rekeyed(_, let known) {
            report.problems.append(.keyEpochMissing(epoch: epochs.map(\.epoch).max()!, known: known))
            // The files sealed under the epochs it knows can still be read.
            let keys = try FolderKeyring.remembered(store: store.path, folderID: first.folderID)
            return FolderKeyring(folderID: first.folderID, epoch: known, keys: keys)
        } catch {
            report.problems.append(.encryption(error))
            return nil
        }
    }

    /// The listing, then each device's files compared with what the store holds.
    private func compare(with engine: FolderSync, sealedWithoutKey: Bool, _ report: inout FolderReport) throws {
        var pass = FolderSync.Pass()
        pass.entries = try listing(engine, &pass.report)
        if engine.seal != nil { engine.setAsideStale(&pass) }
        let version = try store.version
        var devices = Dictionary(uniqueKeysWithValues: try store.devices().map { ($0.replica, SurveyedDevice(status: $0)) })
        for writer in Set(pass.entries.map(\.writer)) where devices[writer] == nil {
            devices[writer] = SurveyedDevice(status: DeviceStatus(replica: writer, name: nil, isThisDevice: false, held: 0, lastSeen: nil))
        }
        for origin in Set(pass.entries.map(\.name.origin)) {
            let files = pass.entries.filter { $0.name.origin == origin }
            var device = devices[origin] ?? SurveyedDevice(
                status: DeviceStatus(replica: origin, name: nil, isThisDevice: false, held: 0, lastSeen: nil))
            if sealedWithoutKey {
                for f in files where f.name.last > version[origin] {
                    pass.failed.insert(f.path)
                    pass.report.skipped.append((f.path, "it is sealed, and this store does not know the folder's key"))
                }
            } else {
                try read(files, of: &device, engine: engine, &pass)
            }
            devices[origin] = device
        }
        for (path, reason) in pass.report.skipped {
            let note = SurveyProblem.skippedFile(path: path, first: segmentName(path)?.first, last: segmentName(path)?.last, reason: reason)
            if let who = device(of: path), devices[who] != nil { devices[who]!.problems.append(note) } else { report.problems.append(note) }
        }
        for origin in devices.keys {
            measure(&devices[origin]!, files: pass.entries.filter { $0.name.origin == origin && !pass.failed.contains($0.path) })
        }
        report.devices = devices.values.sorted { TaskStore.deviceOrder($0.status, $1.status) }
    }

    /// The folder's segment files, with notes on every name skipped. The one place the survey
    /// lists the folder, so that another storage's listing replaces it alone.
    private func listing(_ engine: FolderSync, _ notes: inout SyncReport) throws(SyncError) -> [FolderSync.Entry] { try engine.scan(&notes) }

    /// Reads, with a sync's checks, the device's files that hold operations the store lacks, and
    /// the furthest file of each namespace within what it holds (a fork shows there). Learns
    /// the device's name and last time from what it reads when the store has none.
    private func read(_ files: [FolderSync.Entry], of device: inout SurveyedDevice, engine: FolderSync, _ pass: inout FolderSync.Pass) throws {
        let origin = device.status.replica
        let held = device.status.held
        let probes = Dictionary(grouping: files.filter { $0.name.last <= held }, by: \.writer).values
            .compactMap { $0.max { $0.name.last < $1.name.last } }
        for entry in files.filter({ $0.name.last > held }) + probes {
            guard let bytes = engine.readChecked(entry, failed: &pass.failed, report: &pass.report) else { continue }
            let commits: [Commit]
            do { commits = try SegmentFile.decode(bytes).commits } catch {
                pass.failed.insert(entry.path)
                pass.report.skipped.append((entry.path, "\(error); it will be tried again on the next sync"))
                continue
            }
            if entry.name.first <= held, let seq = try firstDifference(commits, of: origin, through: held) {
                device.problems.append(.fork(namespace: SharedFolder.namespace(of: entry.writer), seq: seq))
                pass.failed.insert(entry.path)
            }
            learn(from: commits, into: &device.status)
        }
    }

    /// Where `commits` (of `origin`) first differ from the store's, up to `held`; nil if they agree.
    private func firstDifference(_ commits: [Commit], of origin: ReplicaID, through held: UInt64) throws -> UInt64? {
        guard let start = commits.first?.firstSeq else { return nil }
        let theirs = commits.filter { $0.endSeq - 1 <= held }
        let mine = try store.commits(of: origin, after: start - 1).prefix { $0.endSeq - 1 <= (theirs.last?.endSeq ?? start) - 1 }
        for (a, b) in zip(theirs, mine) where a != b { return min(a.firstSeq, b.firstSeq) }
        return theirs.count == mine.count ? nil : (theirs.count < mine.count ? mine[theirs.count].firstSeq : theirs[mine.count].firstSeq)
    }

    /// The newest name and time in `commits`, for a device the store holds nothing newer of.
    private func learn(from commits: [Commit], into status: inout DeviceStatus) {
        guard let last = commits.last, last.endSeq - 1 > status.held else { return }
        if status.lastSeen.map({ last.time > $0 }) ?? true { status.lastSeen = last.time }
        for commit in commits.reversed() where commit.endSeq - 1 > status.held {
            for op in commit.operations.reversed() {
                guard case .deviceName(let name) = op else { continue }
                let bounded = DeviceName.normalised(name)
                status.name = bounded.isEmpty ? nil : bounded
                return
            }
        }
    }

    /// What the usable `files` hold of the device, and how far each side is behind.
    private func measure(_ device: inout SurveyedDevice, files: [FolderSync.Entry]) {
        let held = device.status.held
        var ranges: [ClosedRange<UInt64>] = []
        for f in files.sorted(by: { $0.name.first < $1.name.first }) {
            if let last = ranges.last, f.name.first <= last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...max(last.upperBound, f.name.last)
            } else {
                ranges.append(f.name.first...f.name.last)
            }
        }
        device.inFolder = ranges
        let coverage = ranges.first.map { $0.lowerBound == 1 ? $0.upperBound : 0 } ?? 0
        device.folderLacks = held > coverage ? held - coverage : 0
        var reach = held
        for r in ranges where r.upperBound > held {
            device.storeLacks += r.upperBound - max(r.lowerBound - 1, held)
            if r.lowerBound <= reach + 1 {
                reach = r.upperBound
            } else {
                device.problems.append(.missingOperations(first: reach + 1, last: r.lowerBound - 1))
                reach = r.upperBound
            }
        }
        device.nextSyncBrings = ranges.first { $0.contains(held + 1) }.map { $0.upperBound - held } ?? 0
    }

    /// The device a skipped path concerns: a segment file's origin, else its namespace's writer.
    private func device(of path: String) -> ReplicaID? {
        if let name = segmentName(path) { return name.origin }
        let parts = relative(path).split(separator: "/")
        return parts.count > 1 ? SharedFolder.writer(ofNamespace: String(parts[0])) : nil
    }

    private func segmentName(_ path: String) -> SharedFolder.SegmentName? {
        relative(path).split(separator: "/").last.flatMap { SharedFolder.SegmentName(fileName: String($0)) }
    }

    private func relative(_ path: String) -> Substring {
        path.hasPrefix(folder) ? path.dropFirst(folder.count).drop { $0 == "/" } : Substring(path)
    }
}
