@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore

extension Context {
    /// The logs to read: `--from DIR` (any folder of logs), else the store's own.
    func logs() throws -> LogReplay {
        let replay = try LogReplay.load(from: try arguments.value(Options.from) ?? storePath)
        for w in replay.skipped { Output.warning(w.description) }
        return replay
    }

    func limit(in logs: LogReplay) throws(UsageError) -> LogReplay.Limit? {
        guard let text = try arguments.value(Options.until) else { return nil }
        if let colon = text.firstIndex(of: ":"), text[..<colon].allSatisfy(\.isHexDigit) {
            let who = text[..<colon].lowercased()
            guard let seq = UInt64(text[text.index(after: colon)...]), seq >= 1 else {
                throw UsageError(message: "--until REPLICA:SEQ needs a sequence number ≥ 1, got '\(text)'")
            }
            let matches = logs.commits.keys.filter { $0.hex.hasPrefix(who) }
            guard matches.count == 1, who.count >= 4 else {
                throw UsageError(message: "--until: '\(who)' must name exactly one replica of these logs by 4 or more leading hex digits (\(logs.commits.keys.map { String($0.hex.prefix(8)) }.sorted().joined(separator: ", ")))")
            }
            return .operation(matches[0], seq: seq)
        }
        let zone = LocalZone()
        guard let due = DateInput.parse(text) else {
            throw UsageError(message: "--until takes REPLICA:SEQ or a date such as \(DateInput.forms) (see Spec/cli.md), got '\(DateInput.shown(text))'")
        }
        let ms: Int64 = switch due {
        case .date(let d): zone.instant(days: d + 1, hour: 0, minute: 0) - 1  // a date means its last moment, locally
        case .instant(let ms): ms
        }
        return .time(Timestamp(physical: UInt64(max(0, ms)), logical: .max))
    }

    /// `replay --from DIR [--until …]`: the state that a folder of logs describes.
    func replayLogs() throws -> Int32 {
        let logs = try logs()
        let state = logs.state(until: try limit(in: logs))
        let tasks = TaskQuery(status: .all).apply(to: state.liveTasks)
        if json {
            var w = JSONWriter()
            w.taskArray(tasks)
            w.raw("\n")
            Output.bytes(w.bytes)
        } else {
            Output.line(Render.replayed(state, live: tasks.count))
            if !tasks.isEmpty { Output.line(Render.table(tasks)) }
        }
        return 0
    }

    /// `history ID`: every operation that touched a task, and which writes won.
    func history() throws -> Int32 {
        let text = try positionals(1...1, "task ID")[0]
        let logs = try logs()
        let state = logs.state()
        let candidates = state.allTasks.map(\.id).filter { $0.rawValue == text || (text.count >= 4 && $0.rawValue.hasPrefix(text)) }
        let id: TaskID
        if let exact = candidates.first(where: { $0.rawValue == text }) {
            id = exact
        } else if candidates.count == 1 {
            id = candidates[0]
        } else if candidates.isEmpty {
            throw StoreError.taskNotFound(text)
        } else {
            throw StoreError.ambiguousID(prefix: text, candidates: candidates.map(\.rawValue).sorted())
        }
        let record = state.records[id]
        var lines = ""
        for (stamp, op) in logs.history(of: id) {
            let wins = winning(op, stamp, record)
            if json {
                var line = Render.operation(op, replica: stamp.operation.replica, seq: stamp.operation.seq, time: stamp.time, json: true)
                line.removeLast()
                lines += line + (wins.map { ",\"wins\":\($0)" } ?? "") + "}\n"
            } else {
                lines += Render.operation(op, replica: stamp.operation.replica, seq: stamp.operation.seq, time: stamp.time, json: false)
                    + (wins.map { $0 ? "  (current value)" : "  (overridden by a later write)" } ?? "") + "\n"
            }
        }
        Output.out(lines)
        return 0
    }

    /// For a field write: whether it is the write that currently wins its register.
    func winning(_ op: TaskOperation, _ stamp: Stamp, _ r: TaskRecord?) -> Bool? {
        guard case .set(_, let write) = op, let r else { return nil }
        let current: Stamp?
        switch write {
        case .title: current = r.title?.stamp
        case .notes: current = r.notes?.stamp
        case .done: current = r.done?.stamp
        case .priority: current = r.priority?.stamp
        case .due: current = r.due?.stamp
        case .list: current = r.list?.stamp
        case .meta(let key, _): current = r.meta[key]?.stamp
        case .unknown: return nil
        }
        return current == stamp
    }
}
