@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

/// A failing run's files, kept so that a test can replay them: the case folder
/// `seed-<seed>/` holds
///
/// - `case.txt`: the seed, the configuration, the failed checks;
/// - `trace.txt`: every step of the run;
/// - `replica-<i>/`: each replica's store folder as it was when the run failed, and
///   `replica-<i>.state.txt`, its live state in words;
/// - `folders/<name>/cloud/` and `folders/<name>/view-<i>/`: each shared folder's truth and
///   each member's view of it;
/// - `acknowledged/`: every acknowledged commit, one sealed segment per commit (named
///   `.ack`, so that `LogReplay.load` on the case folder reads only the logs).
///
/// `LogReplay.load(from:)` on the case folder (or on one `replica-<i>` folder) rebuilds the
/// state the logs describe, so a lost write shows as a commit no log holds.
package enum SimCase {
    static func write(_ run: SimRun, to path: String) {
        SimFiles.removeTree(path)
        SimFiles.makeDirectories(path)
        let c = run.config
        var text = """
            TaskLog simulation case
            seed: \(c.seed)
            replicas: \(c.replicas)
            steps: \(c.steps)
            faults: \(c.faults)
            replica ids: \(run.replicas.map { "\($0.name)=\($0.id.hex)" }.joined(separator: " "))
            rerun: scripts/simulate.sh 1 \(c.seed)   (or Simulation(seed: \(c.seed), replicas: \(c.replicas), steps: \(c.steps)).run())
            replay: SimCase.replay(at: <this folder>, workDirectory: …) re-syncs these stores and re-checks.
            Commit this folder under Tests/SimCases/ with the fix: SimulationTests replays it and expects every check to pass.
            failures:

            """
        text += run.failures.map { "  - \($0)\n" }.joined()
        SimFiles.write(SimFiles.join(path, "case.txt"), Array(text.utf8))
        SimFiles.write(SimFiles.join(path, "trace.txt"), Array((run.trace.joined(separator: "\n") + "\n").utf8))
        for r in run.replicas {
            SimFiles.copyTree(r.path, to: SimFiles.join(path, r.name))
            if let s = try? r.store?.state() {
                SimFiles.write(SimFiles.join(path, r.name + ".state.txt"), Array(SimChecks.dump(s).utf8))
            }
        }
        for f in run.folders {
            let dest = SimFiles.join(path, "folders/" + f.name)
            f.writeCloud(to: SimFiles.join(dest, "cloud"))
            for m in f.members { SimFiles.copyTree(f.view(of: m.replica), to: SimFiles.join(dest, "view-\(m.replica)")) }
        }
        for a in run.acknowledged {
            let name = "\(a.replica.hex)-\(hex16(a.commit.firstSeq))-\(hex16(a.commit.endSeq - 1)).ack"
            SimFiles.write(SimFiles.join(path, "acknowledged/" + name), SegmentFile.encode(replica: a.replica, commits: [a.commit]))
        }
        SimFiles.append(SimFiles.join(path, "case.txt"), Array(evidence(at: path).utf8))
    }

    /// What `LogReplay` makes of the case folder's logs alone: acknowledged commits that no
    /// log holds (a loss), and whether the replicas' logs describe different states.
    package static func evidence(at path: String) -> String {
        var out = "\nLogReplay of this folder's logs:\n"
        guard let all = try? LogReplay.load(from: path) else { return out + "  (unreadable)\n" }
        let union = all.state()
        let acks = acknowledged(at: path)
        let missing = acks.compactMap { SimChecks.missing($0, in: union, forks: SimChecks.possibleForks(of: $0, among: acks)) }
        out += missing.isEmpty ? "  every acknowledged commit is in some log\n"
            : missing.map { "  - the logs replayed together lack an acknowledged write: \($0)\n" }.joined()
        var states: [(String, TaskState)] = []
        for name in SimFiles.list(path) where name.hasPrefix("replica-") && SimFiles.isDirectory(SimFiles.join(path, name)) {
            if let logs = try? LogReplay.load(from: SimFiles.join(path, name)) { states.append((name, logs.state())) }
        }
        for (name, s) in states.dropFirst() where s != states[0].1 {
            out += "  - \(name)'s logs differ from \(states[0].0)'s: \(SimChecks.difference(states[0].1, s))\n"
        }
        return out
    }

    /// The acknowledged commits a case folder lists.
    package static func acknowledged(at path: String) -> [SimChecks.Acknowledged] {
        let dir = SimFiles.join(path, "acknowledged")
        var out: [SimChecks.Acknowledged] = []
        for name in SimFiles.list(dir) {
            guard let bytes = SimFiles.read(SimFiles.join(dir, name)), let (replica, commits) = try? SegmentFile.decode(bytes) else { continue }
            out += commits.map { SimChecks.Acknowledged(replica: replica, commit: $0) }
        }
        return out
    }

    /// Replays a case folder: copies its stores under `workDirectory`, lets them exchange
    /// everything through one clean shared folder until nothing moves, and runs the checks.
    /// - Returns: the failed checks (empty: the case passes).
    package static func replay(at path: String, workDirectory: String) -> [String] {
        let work = SimFiles.join(workDirectory, "replay-" + (path.split(separator: "/").last.map(String.init) ?? "case"))
        SimFiles.removeTree(work)
        defer { SimFiles.removeTree(work) }
        let shared = SimFiles.join(work, "shared")
        SimFiles.makeDirectories(shared)
        var stores: [(name: String, store: TaskStore)] = []
        for name in SimFiles.list(path) where name.hasPrefix("replica-") && SimFiles.isDirectory(SimFiles.join(path, name)) {
            SimFiles.copyTree(SimFiles.join(path, name), to: SimFiles.join(work, name))
            do {
                var options = TaskStore.Options()
                options.sealsInBackground = false
                options.lockLease = .zero
                stores.append((name, try TaskStore.open(at: SimFiles.join(work, name), create: false, options: options)))
            } catch {
                return ["\(name): the store does not open: \(error)"]
            }
        }
        guard !stores.isEmpty else { return ["\(path) holds no replica-<i> store folders"] }
        var quiet = false
        for _ in 0..<(6 + 2 * stores.count) where !quiet {
            var moved: UInt64 = 0
            for (name, store) in stores {
                do {
                    let report = try FolderSync(store: store, folder: shared).sync()
                    moved += report.operationsIn + report.operationsOut
                } catch {
                    return ["\(name): syncing failed: \(error)"]
                }
            }
            quiet = moved == 0
        }
        guard quiet else { return ["the stores still exchanged operations after every round"] }
        return SimChecks.run(stores, acknowledged: acknowledged(at: path))
    }
}
