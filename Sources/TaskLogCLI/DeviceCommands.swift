@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync

/// `tasklog rename` and `tasklog devices` (Spec/cli.md, "Devices"): the devices a store knows,
/// and, beside a shared folder, what the folder holds of each and why it has not arrived.
extension Context {
    /// Names this device with `--name` when given (for `init`).
    func nameDevice(_ store: TaskStore) throws {
        guard let name = try arguments.value(Options.name) else { return }
        try store.setDeviceName(name)
    }

    func rename() throws -> Int32 {
        let name = try positionals(1...Int.max, "NAME").joined(separator: " ")
        let store = try writableStore()
        try store.setDeviceName(name)
        Output.line("this device is now named \(TerminalText.escaped(name))")
        return 0
    }

    func devices() throws -> Int32 {
        let target = try positionals(0...1, "").first
        let storage = try target.map { target throws -> (any FolderStorage)? in
            guard !target.contains("://") || Self.remoteFolderSchemes.contains(where: target.hasPrefix) else {
                throw UsageError(message: "devices compares with a shared folder (a path, s3:// or webdav://); '\(target)' is not one")
            }
            return try folderStorage(target)
        }
        if let storage, storage == nil { return try HTTPTool.handOver() }
        guard let store = try readableStore() else { throw StoreError.storeNotFound(path: storePath) }
        if let target, let storage = storage ?? nil {
            let report = try FolderSurvey(store: store, storage: storage).survey()
            if json { Output.line(Self.devicesJSON(report.devices.map(\.status), report, folder: target)) } else {
                Output.out(Self.devicesTable(report.devices, report))
            }
        } else {
            let devices = try store.devices()
            if json { Output.line(Self.devicesJSON(devices, nil, folder: nil)) } else {
                Output.out(Self.devicesTable(devices.map { SurveyedDevice(status: $0) }, nil))
            }
        }
        report(store)
        return 0
    }

    /// The table: a row per device, then a line of "why" per problem under it.
    static func devicesTable(_ devices: [SurveyedDevice], _ report: FolderReport?) -> String {
        let clock = DueClock()
        var rows = [report == nil ? ["DEVICE", "ID", "HELD", "LAST SEEN"] : ["DEVICE", "ID", "HELD", "IN FOLDER", "TO GET", "TO SEND", "LAST SEEN"]]
        var notes: [[String]] = [[]]
        for d in devices {
            let s = d.status
            var row = [TerminalText.escaped(s.name ?? "-") + (s.isThisDevice ? " (this)" : ""), String(s.replica.hex.prefix(8)), String(s.held)]
            if report != nil {
                let ranges = d.inFolder.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
                row += [ranges.isEmpty ? "-" : ranges.joined(separator: ","), String(d.storeLacks), String(d.folderLacks)]
            }
            rows.append(row + [s.lastSeen.map(clock.local) ?? "-"])
            notes.append(d.problems.map { "  why: " + TerminalText.escaped($0.description) })
        }
        let widths = rows[0].indices.map { c in rows.map { Render.displayWidth($0[c]) }.max()! }
        var out = ""
        for (row, why) in zip(rows, notes) {
            let cells = row.enumerated().map { c, cell in
                c == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[c] - Render.displayWidth(cell) + 2)
            }
            out += cells.joined() + "\n" + why.map { $0 + "\n" }.joined()
        }
        for p in report?.problems ?? [] { out += "folder: " + TerminalText.escaped(p.description) + "\n" }
        return out
    }

    /// The JSON form (Spec/cli.md, "Devices"): one object, keys in a fixed order.
    static func devicesJSON(_ devices: [DeviceStatus], _ report: FolderReport?, folder: String?) -> String {
        var w = JSONWriter()
        w.raw("{\"devices\":[")
        for (i, s) in devices.enumerated() {
            w.raw(i == 0 ? "{\"replica\":" : ",{\"replica\":")
            w.string(s.replica.hex)
            w.raw(",\"name\":")
            w.optionalString(s.name)
            w.raw(",\"thisDevice\":")
            w.bool(s.isThisDevice)
            w.raw(",\"held\":")
            w.number(s.held)
            w.raw(",\"lastSeen\":")
            if let t = s.lastSeen { w.time(t) } else { w.raw("null") }
            w.raw(",\"folder\":")
            if let d = report?.devices[i] { folderJSON(d, &w) } else { w.raw("null") }
            w.raw("}")
        }
        w.raw("],\"folder\":")
        if let report, let folder {
            w.raw("{\"path\":")
            w.string(folder)
            w.raw(",\"epoch\":")
            if let e = report.epoch { w.number(Int64(e)) } else { w.raw("null") }
            w.raw(",\"problems\":")
            problemsJSON(report.problems, &w)
            w.raw("}")
        } else {
            w.raw("null")
        }
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private static func folderJSON(_ d: SurveyedDevice, _ w: inout JSONWriter) {
        w.raw("{\"ranges\":[")
        for (i, r) in d.inFolder.enumerated() {
            w.raw(i == 0 ? "[" : ",[")
            w.number(r.lowerBound)
            w.raw(",")
            w.number(r.upperBound)
            w.raw("]")
        }
        w.raw("],\"storeLacks\":")
        w.number(d.storeLacks)
        w.raw(",\"nextSyncBrings\":")
        w.number(d.nextSyncBrings)
        w.raw(",\"folderLacks\":")
        w.number(d.folderLacks)
        w.raw(",\"problems\":")
        problemsJSON(d.problems, &w)
        w.raw("}")
    }

    /// Each problem as `{"kind":…, its fields…, "message":…}`.
    private static func problemsJSON(_ problems: [SurveyProblem], _ w: inout JSONWriter) {
        w.raw("[")
        for (i, p) in problems.enumerated() {
            w.raw(i == 0 ? "{\"kind\":" : ",{\"kind\":")
            switch p {
            case .skippedFile(let path, let first, let last, _):
                w.raw("\"skippedFile\",\"path\":")
                w.string(path)
                w.raw(",\"first\":")
                if let first { w.number(first) } else { w.raw("null") }
                w.raw(",\"last\":")
                if let last { w.number(last) } else { w.raw("null") }
            case .missingOperations(let first, let last):
                w.raw("\"missingOperations\",\"first\":")
                w.number(first)
                w.raw(",\"last\":")
                w.number(last)
            case .keyEpochMissing(let epoch, let known):
                w.raw("\"keyEpochMissing\",\"epoch\":")
                w.number(Int64(epoch))
                w.raw(",\"known\":")
                w.number(Int64(known))
            case .fork(let namespace, let seq):
                w.raw("\"fork\",\"namespace\":")
                w.string(namespace)
                w.raw(",\"seq\":")
                w.number(seq)
            case .encryption:
                w.raw("\"encryption\"")
            }
            w.raw(",\"message\":")
            w.string(p.description)
            w.raw("}")
        }
        w.raw("]")
    }
}
