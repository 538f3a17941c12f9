@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import TestSupport
import Testing

/// Listing straight from the snapshot merged with the log after it (`TaskStore.scanTasks`,
/// `tasklog list`) gives exactly what listing the loaded state gives.
@Suite("Listing from the snapshot")
struct ListingFromSnapshotTests {
    let dir = TemporaryDirectory()

    static func queries(_ rng: inout SplitMix64) -> [TaskQuery] {
        (0..<4).map { _ in
            TaskQuery(
                status: rng.pick([.open, .done, .all] as [TaskQuery.Status]),
                tag: rng.chance(0.3) ? rng.pick(Gen.tags) : nil,
                list: rng.chance(0.2) ? rng.pick(Gen.lists.compactMap { $0 }) : nil,
                limit: rng.chance(0.3) ? rng.int(0...3) : nil)
        }
    }

    /// A store of `tasks` tasks, compacted: its path, its snapshot file's path and bytes, and
    /// the snapshot's body (which this build stores as is).
    func compactedStore(
        tasks: Int, title: (Int) -> String
    ) throws -> (path: String, snapshot: String, file: [UInt8], body: [UInt8]) {
        let path = dir.sub("store")
        let store = try TaskStore.open(at: path)
        for i in 0..<tasks { try store.add(title: title(i)) }
        _ = try store.compact()
        let snapshot = path + "/snapshot"
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: snapshot)))
        return (path, snapshot, file, SnapshotParts(file).bodyBytes)
    }

    @Test("a saved state merged with the operations after it lists the tasks of the whole state, in order and limit")
    func savedStateMergedWithLaterOperationsListsTheWholeState() throws {
        var streamed = 0
        try forEachSeed(400) { seed, rng in
            let history = Gen.history(&rng)
            let all = Gen.interleaving(history, &rng)
            // Saved: every commit up to a time (so what follows was all written later), or a
            // random prefix of each log (then a later add may be older than the saved state).
            var saved: [ReplicaID: Int] = [:]
            if rng.chance(0.7), let cut = all.map(\.commit.time).randomElement(using: &rng) {
                for r in history.replicas { saved[r] = history.logs[r]!.filter { $0.time <= cut }.count }
            } else {
                saved = Gen.prefixes(history, &rng)
            }
            let savedState = Gen.state(history, prefixes: saved)
            let bytes = StateCodec.encode(savedState)
            let head = try StateCodec.head(of: SharedBytes(bytes))
            var after = TaskState(continuing: head.version, latestTime: head.latestTime)
            for (r, c) in all { after.apply(c, from: r) }  // what the saved state holds is skipped
            let whole = Gen.state(applying: all)
            guard after.followsInCreationOrder(savedLatest: head.latestTime) else { return }
            streamed += 1
            for query in Self.queries(&rng) {
                var listed: [TaskItem] = []
                try after.forEachTask(query, mergingSaved: SharedBytes(bytes), head: head) { listed.append($0) }
                #expect(listed == whole.tasks(query), "seed \(seed), \(query)")
                // As `tasklog list --json` writes them: saved tasks straight from their bytes.
                var json = JSONLines()
                try after.forEachTask(query, mergingSaved: SharedBytes(bytes), head: head, into: &json)
                #expect(json.text == JSONLines(whole.tasks(query)).text, "seed \(seed), \(query)")
            }
            // Looking up a few ids (live, deleted, never seen) finds exactly the live ones.
            let known = whole.allTasks.map(\.id)
            var ids = Set((0..<3).compactMap { _ in known.randomElement(using: &rng) })
            ids.insert(TaskID(uuidHigh: rng.next(), low: rng.next()))
            let found = try after.liveTasks(ids, mergingSaved: SharedBytes(bytes), head: head)
            let expected = Dictionary(uniqueKeysWithValues: ids.compactMap { id in
                whole.isLive(id) ? whole.task(id).map { (id, $0) } : nil
            })
            #expect(found == expected, "seed \(seed), \(ids)")
            // The same through a task index: each id read at the offset where it starts, the
            // body's tombstones read only when asked for.
            var starts: [TaskID: Int] = [:]
            _ = StateCodec.encode(savedState) { id, offset, _ in starts[id] = offset }
            let lookup = try StateCodec.lookupHead(of: SharedBytes(bytes))
            #expect(try StateCodec.tombstones(of: SharedBytes(bytes), lookup).tombstones == head.membershipTombstones, "seed \(seed)")
            var savedTasks: [TaskID: (record: TaskRecord, live: LiveDots?)] = [:]
            for id in ids {
                guard let offset = starts[id] else { continue }
                let read = try StateCodec.task(at: offset, in: SharedBytes(bytes), lookup)
                #expect(read.id == id && read.end > offset, "seed \(seed), \(id)")
                savedTasks[id] = (read.record, read.live)
            }
            let tombstones = head.membershipTombstones
            let indexed = after.tasks(ids, saved: savedTasks, savedTombstones: tombstones, includingDeleted: false)
            #expect(indexed.mapValues(\.task) == expected, "seed \(seed), \(ids), through the index")
            for (id, found) in indexed { #expect(Set(found.dots.map(Array.init) ?? []) == whole.observedDots(of: id), "seed \(seed), dots of \(id)") }
            let withDeleted = after.tasks(ids, saved: savedTasks, savedTombstones: tombstones, includingDeleted: true)
            #expect(withDeleted.mapValues(\.task) == Dictionary(uniqueKeysWithValues: ids.compactMap { id in whole.task(id).map { (id, $0) } }),
                    "seed \(seed), \(ids), deleted ones included")
        }
        #expect(streamed > 200)  // most seeds list from the saved state rather than fall back
    }

    @Test("a snapshot's task index lists every task in its id's text order, under the id's first 8 bytes")
    func snapshotIndexListsEveryTask() throws {
        let (path, _, file, body) = try compactedStore(tasks: 300) { "task \($0)" }
        let tasks = try TaskStore.open(at: path).tasks(TaskQuery(status: .all))
        // The index as Spec/log-format.md lays it out, right after the body.
        let parts = SnapshotParts(file)
        let entries = parts.taskIndexEntries
        #expect(Array(file[parts.taskIndex.prefix(4)]) == Array("TSIX".utf8) && entries.count == 300)
        var ids: [TaskID] = []
        for e in entries {
            let read = try StateCodec.task(at: e.offset, in: SharedBytes(body), StateCodec.lookupHead(of: SharedBytes(body)))
            var text: [UInt8] = []
            read.id.appendText(to: &text)
            #expect(e.key == (text + [UInt8](repeating: 0, count: 8)).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }, "\(read.id)")
            ids.append(read.id)
        }
        #expect(ids == ids.sorted() && Set(ids) == Set(tasks.map(\.id)))
        #expect(Array(file[parts.childIndex]) == Array("TSCX".utf8) + [0, 0, 0, 0], "no task names a parent")
    }

    @Test("a store of thousands of tasks loads its snapshot in parts side by side, to the state its logs rebuild, even when the index's offsets are wrong")
    func largeSnapshotLoadsInParts() throws {
        let path = dir.sub("large")
        let store = try TaskStore.open(at: path)
        for first in stride(from: 0, to: 6_000, by: 500) {
            try store.commit((first..<(first + 500)).flatMap { i -> [TaskOperation] in
                let id = TaskID(uuidHigh: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, low: UInt64(i))
                return [.add(id), .set(id, .title("task \(i)")), .set(id, .priority(UInt8(i % 4)))]
            })
        }
        _ = try store.compact()
        let fromLogs = try store.replay().state.tasks(TaskQuery(status: .all))
        #expect(fromLogs.count == 6_000)
        #expect(try TaskStore.open(at: path).tasks(TaskQuery(status: .all)) == fromLogs)
        // An index whose checksum holds but whose offsets are off by one: the body is decoded
        // in one part instead.
        let snapshotPath = path + "/snapshot"
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: snapshotPath)))
        let entries = SnapshotParts(file).taskIndex.dropFirst(8)
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 12) { file[at + 8] &+= 1 }
        try Data(SnapshotParts.resealed(file)).write(to: URL(fileURLWithPath: snapshotPath))
        #expect(try TaskStore.open(at: path).tasks(TaskQuery(status: .all)) == fromLogs)
    }

    @Test("a saved state read as listed tasks, its deleted tasks skipped, gives what the state lists")
    func savedStateReadAsItemsGivesTheStatesListing() throws {
        try forEachSeed(300) { seed, rng in
            let state = Gen.state(applying: Gen.interleaving(Gen.history(&rng), &rng))
            var items: [TaskItem] = []
            var records: [TaskItem] = []
            for reading in [StateCodec.TaskReading.item, .record] {
                try StateCodec.forEachTask(in: SharedBytes(StateCodec.encode(state)), inCreationOrder: true) { _, live in
                    live == nil ? .skip : reading
                } record: { id, record, _ in
                    records += state.task(id).map { [$0] } ?? []
                    #expect(record == state.records[id], "seed \(seed)")
                    return true
                } item: { task in
                    items.append(task.item)
                    var inPlace = JSONLines()
                    inPlace.take(task)
                    #expect(inPlace.text == JSONLines([task.item]).text, "seed \(seed), \(task.id)")
                    return true
                }
            }
            #expect(items == state.tasks(TaskQuery(status: .all)), "seed \(seed)")
            #expect(records == items, "seed \(seed)")
        }
    }

    @Test("a store lists from its snapshot what it lists from its loaded state, whatever came after the snapshot")
    func storeListsFromTheSnapshotWhatItListsLoaded() throws {
        try forEachSeed(12) { seed, rng in
            let path = dir.sub("store-\(seed)")
            let store = try TaskStore.open(at: path)
            var ids: [TaskID] = []
            for i in 0..<40 {
                ids.append(try store.add(title: "task \(i)", priority: UInt8(i % 4)).id)
            }
            // Ids that are prefixes of one another, for resolving below.
            for text in ["job-1", "job-10", "job-11", "jobs"] {
                ids.append(try store.add(NewTask(title: text), id: TaskID(text)!).id)
            }
            _ = try store.compact()  // the snapshot
            for text in ["job-2", "late-1"] {  // only in the log after it
                ids.append(try store.add(NewTask(title: text), id: TaskID(text)!).id)
            }
            // The log after it: edits, completions, removals, tags and new tasks.
            for step in 0..<rng.int(0...30) {
                let id = rng.pick(ids)
                switch rng.int(0...5) {
                case 0: try store.complete([id])
                case 1: try store.remove([id])
                case 2: try store.tag(id, add: [rng.pick(Gen.tags)])
                case 3: try store.edit(id, [.title("edited \(step)")])
                case 4: try store.restore(id)
                default: ids.append(try store.add(title: "later \(step)").id)
                }
            }
            if rng.chance(0.5) {
                // Tasks written earlier elsewhere arrive: older than the snapshot, so the
                // listing loads the state instead.
                let other = try TaskStore.open(at: dir.sub("other-\(seed)"))
                try other.add(title: "from elsewhere")
                _ = try store.integrate(try other.commits(of: other.replica, after: 0), from: other.replica)
            }
            for query in Self.queries(&rng) + [TaskQuery(status: .all)] {
                let reader = try TaskStore.open(at: path, create: false)
                var listed: [TaskItem] = []
                try reader.scanTasks(query) { listed.append($0) }
                let loaded = try TaskStore.open(at: path, create: false).tasks(query)
                #expect(listed == loaded, "seed \(seed), \(query)")
            }
            // Looking up ids (saved, later, deleted, unknown) finds what the loaded state has live.
            var wanted = Set((0..<4).map { _ in rng.pick(ids) })
            wanted.insert(TaskID(uuidHigh: rng.next(), low: rng.next()))
            let live = Dictionary(uniqueKeysWithValues: try TaskStore.open(at: path, create: false)
                .tasks(TaskQuery(status: .all)).filter { wanted.contains($0.id) }.map { ($0.id, $0) })
            #expect(try TaskStore.open(at: path, create: false).liveTasks(wanted) == live, "seed \(seed)")
            // Resolving ids and prefixes from the snapshot gives what the loaded state gives,
            // errors included.
            func outcome(_ store: TaskStore, _ text: String) -> String {
                [false, true].map { deleted in
                    do { return try store.resolve(text, includeDeleted: deleted).rawValue } catch { return "\(error)" }
                }.joined(separator: " / ")
            }
            let loadedStore = try TaskStore.open(at: path, create: false)
            _ = try loadedStore.tasks()
            var texts = ["job-", "job-1", "job-10", "job-2", "jobs", "late", "zzzz", "job"]
            for _ in 0..<4 {
                let id = rng.pick(ids).rawValue
                texts += [id, String(id.prefix(4)), String(id.prefix(rng.int(5...12)))]
            }
            for text in texts {
                #expect(outcome(try TaskStore.open(at: path, create: false), text) == outcome(loadedStore, text), "seed \(seed), \(text)")
            }
            // Removing a live task (through the index when the snapshot allows) names every dot
            // it has: it is gone, and nothing else changed.
            let before = try TaskStore.open(at: path, create: false).tasks(TaskQuery(status: .all))
            if let victim = before.randomElement(using: &rng) {
                try TaskStore.open(at: path, create: false).remove([victim.id])
                let after = try TaskStore.open(at: path, create: false).tasks(TaskQuery(status: .all))
                #expect(after == before.filter { $0.id != victim.id }, "seed \(seed), removing \(victim.id)")
            }
        }
    }

    @Test("a snapshot found damaged part way through a listing is reported and removed, and the next listing reads the logs")
    func snapshotDamagedPartWayIsReportedAndRemoved() throws {
        let (path, snapshot, _, body) = try compactedStore(tasks: 50) { "task \($0)" }
        // The snapshot's body cut after its 20th task, stored as is under a valid checksum:
        // nothing shows the damage until the listing reaches it.
        var kept = 0
        var cut = 0
        let whole = try StateCodec.decode(body)
        let head = try StateCodec.head(of: SharedBytes(body))
        for end in stride(from: body.count - 1, to: 0, by: -1) {
            // The longest prefix that still holds the head and exactly 20 whole tasks.
            var n = 0
            try? StateCodec.forEachTask(in: SharedBytes(body[..<end]), inCreationOrder: true) { _, _ in
                .record
            } record: { _, _, _ in
                n += 1
                return true
            } item: { _ in false }
            if n == 20 { cut = end; kept = n; break }
        }
        #expect(head.taskCount == 50 && whole.liveCount == 50 && kept == 20)
        try Data(SnapshotParts.file(body: Array(body[..<cut]))).write(to: URL(fileURLWithPath: snapshot))

        let reader = try TaskStore.open(at: path, create: false)
        var listed = 0
        #expect {
            try reader.scanTasks(TaskQuery(status: .all)) { _ in listed += 1 }
        } throws: { error in
            guard case StoreError.damagedSnapshot(let p, _) = error else { return false }
            return p == snapshot
        }
        #expect(listed == 20)
        #expect(!FileManager.default.fileExists(atPath: snapshot))
        var again = 0
        try TaskStore.open(at: path, create: false).scanTasks(TaskQuery(status: .all)) { _ in again += 1 }
        #expect(again == 50)
    }

    @Test("a listing reads on from the snapshot it started with while another store object saves a new one over it")
    func listingReadsOnWhileTheSnapshotIsReplaced() throws {
        // Large enough that the snapshot is read through a mapping, not copied.
        let (path, snapshot, file, _) = try compactedStore(tasks: 2000) { "task \($0) with a title long enough to fill pages" }
        #expect(file.count > 1 << 16)
        let inode = { (try? FileManager.default.attributesOfItem(atPath: snapshot)[.systemFileNumber]) as? UInt64 }
        let before = inode()
        let reader = try TaskStore.open(at: path, create: false)
        var listed: [String] = []
        try reader.scanTasks(TaskQuery(status: .all)) { task in
            if listed.isEmpty {
                let writer = try! TaskStore.open(at: path, create: false)
                try! writer.add(title: "added while the listing reads")
                _ = try! writer.compact()
            }
            listed.append(task.title)
        }
        #expect(inode() != before, "the writer saved a new snapshot file")
        #expect(listed == (0..<2000).map { "task \($0) with a title long enough to fill pages" })
        #expect(try TaskStore.open(at: path, create: false).tasks(TaskQuery(status: .all)).count == 2001)
    }

    @Test("tasklog list prints the same with the snapshot and a log after it as when rebuilt from the logs alone")
    func cliListingFromTheSnapshotMatchesTheLogs() throws {
        let store = CLIStore(path: dir.sub("cli"))
        for i in 0..<30 { try store.ok("add", "task \(i)", "--priority", "\(i % 4)", "--tag", i % 3 == 0 ? "home" : "work") }
        _ = try store.ok("compact")
        let ids = try JSONSerialization.jsonObject(with: Data(try store.ok("list", "--json").utf8)) as! [[String: Any]]
        _ = try store.ok("done", ids[3]["id"] as! String)
        _ = try store.ok("rm", ids[5]["id"] as! String)
        _ = try store.ok("add", "after the snapshot")
        let listings = [["list", "--json"], ["list", "--all", "--json"], ["list", "--done", "--json"],
                        ["list", "--tag", "home", "--json"], ["list", "--limit", "4", "--json"]]
        func list(_ args: [String]) throws -> String {
            let r = try store.run(args)
            #expect(r.status == 0, "\(r)")
            return r.stdout
        }
        let fromSnapshot = try listings.map(list)
        try FileManager.default.removeItem(atPath: store.full("snapshot"))
        let fromLogs = try listings.map(list)
        #expect(fromSnapshot == fromLogs)
        #expect(fromSnapshot[1].contains("after the snapshot"))
    }

    @Test("tasklog done, reopen, show, edit and rm by whole id read the task from the snapshot, and still refuse deleted and unknown ids as before")
    func cliDoneByWholeIDFromTheSnapshot() throws {
        let store = CLIStore(path: dir.sub("cli"))
        for i in 0..<20 { try store.ok("add", "task \(i)") }
        _ = try store.ok("compact")
        let ids = (try JSONSerialization.jsonObject(with: Data(try store.ok("list", "--json").utf8)) as! [[String: Any]])
            .map { $0["id"] as! String }
        _ = try store.ok("add", "after the snapshot")
        let later = (try JSONSerialization.jsonObject(with: Data(try store.ok("list", "--json").utf8)) as! [[String: Any]])
            .map { $0["id"] as! String }.last!
        _ = try store.ok("rm", ids[7])
        _ = try store.ok("done", ids[2], later)
        func done() throws -> Set<String> {
            Set((try JSONSerialization.jsonObject(with: Data(try store.ok("list", "--done", "--json").utf8)) as! [[String: Any]])
                .map { $0["id"] as! String })
        }
        #expect(try done() == [ids[2], later])
        _ = try store.ok("reopen", later)
        #expect(try done() == [ids[2]])
        let deleted = try store.run("done", ids[3], ids[7])
        #expect(deleted.status == 1 && deleted.stderr.contains("restore"), "\(deleted)")
        #expect(try done() == [ids[2]], "nothing is marked when one id is refused")
        let unknown = try store.run("done", "00000000-0000-4000-8000-000000000000")
        #expect(unknown.status == 1, "\(unknown)")
        _ = try store.ok("done", String(ids[4].prefix(8)))
        #expect(try done() == [ids[2], ids[4]])
        // show by whole id reads the task the same way, and prints what resolving it prints.
        for id in [ids[2], ids[5], later] {
            #expect(try store.ok("show", id, "--json") == store.ok("show", String(id.prefix(8)), "--json"))
            #expect(try store.ok("show", id) == store.ok("show", String(id.prefix(8))))
        }
        // edit by whole id likewise: the same task as when editing by prefix.
        let edited = try store.ok("edit", ids[5], "--title", "edited by id", "--priority", "3", "--json")
        let byPrefix = try store.ok("edit", String(ids[6].prefix(8)), "--title", "edited by prefix", "--priority", "3", "--json")
        for (out, title) in [(edited, "edited by id"), (byPrefix, "edited by prefix")] {
            let task = try JSONSerialization.jsonObject(with: Data(out.utf8)) as! [String: Any]
            #expect(task["title"] as? String == title && task["priority"] as? Int == 3, "\(out)")
        }
        #expect(try store.ok("show", ids[5], "--json") == store.ok("show", String(ids[5].prefix(8)), "--json"))
        let editedDeleted = try store.run("edit", ids[7], "--title", "x")
        #expect(editedDeleted.status == 1 && editedDeleted.stderr.contains("was deleted; run 'tasklog restore"), "\(editedDeleted)")
        // rm by whole id: the task and one added after the snapshot go; a deleted one is refused as before.
        _ = try store.ok("rm", ids[11], later)
        let listed = Set((try JSONSerialization.jsonObject(with: Data(try store.ok("list", "--all", "--json").utf8)) as! [[String: Any]])
            .map { $0["id"] as! String })
        #expect(!listed.contains(ids[11]) && !listed.contains(later) && listed.contains(ids[12]))
        let removedTwice = try store.run("rm", ids[11])
        #expect(removedTwice.status == 1 && removedTwice.stderr.contains("was deleted; run 'tasklog restore"), "\(removedTwice)")
        _ = try store.ok("restore", ids[11])
        #expect(try store.ok("show", ids[11], "--json").contains("\"id\""))
        let shownDeleted = try store.run("show", ids[7])
        #expect(shownDeleted.status == 1 && shownDeleted.stderr.contains("was deleted; run 'tasklog restore"), "\(shownDeleted)")
    }
}

/// Tasks written as JSON, one per line, as a listing hands them over: a saved task from its
/// bytes in place, any other from its item.
struct JSONLines: TaskSink {
    var w = JSONWriter()
    var text: String { String(decoding: w.bytes, as: UTF8.self) }

    init(_ tasks: [TaskItem] = []) { tasks.forEach { take($0) } }

    mutating func take(_ task: TaskItem) {
        w.task(task)
        w.raw("\n")
    }

    mutating func take(_ task: borrowing SavedTask) {
        w.task(task)
        w.raw("\n")
    }
}
