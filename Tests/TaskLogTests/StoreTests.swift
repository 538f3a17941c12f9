@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
import Testing

/// The TaskStore library API on real files.
@Suite("TaskStore library")
struct StoreTests {
    let dir = TemporaryDirectory()

    func open(_ name: String = "store", configure: (inout TaskStore.Options) -> Void = { _ in }) throws -> TaskStore {
        var o = TaskStore.Options()
        configure(&o)
        return try TaskStore.open(at: dir.sub(name), options: o)
    }

    @Test("what lies past a peer's horizon travels in a segment of its own, which the peer keeps byte for byte")
    func operationsPastTheHorizonAreKeptAsTheyArrive() throws {
        let a = try open("a")
        let b = try open("b")
        func send(after seq: UInt64) throws -> [[UInt8]] {
            let segments = try a.segmentsToSend(of: a.replica, after: seq)
            for s in segments {
                let (replica, commits) = try SegmentFile.decode(s)
                try b.integrate(commits, from: replica, segment: s)
            }
            return segments
        }
        for i in 0..<5 { try a.add(title: "base \(i)") }
        try a.seal()
        _ = try send(after: 0)
        let horizon = try b.version[a.replica]
        for i in 0..<5 { try a.add(title: "later \(i)") }
        try a.seal()  // merged with the base: no sealed file of `a` starts right after the horizon
        let segments = try send(after: horizon)
        #expect(segments.count == 2)
        let (_, overlap) = try SegmentFile.decode(segments[0])
        #expect(overlap.map { $0.endSeq - 1 } == [horizon])
        let folder = b.path + "/logs/" + a.replica.hex
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != "tail.tlog" }
            .map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
        #expect(kept.contains(Data(segments[1])))
        #expect(try b.state() == a.state())
    }

    @Test("after a folder sync, merges keep what it published apart from later segments, which the next exchange sends as they are")
    func mergesKeepWhatPeersHoldApart() throws {
        let a = try open("a") { $0.sealThreshold = 4 << 10; $0.durable = false; $0.lockLease = .zero }
        for i in 0..<20 { try a.add(title: "base \(i)") }
        let folder = dir.sub("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try FolderSync(store: a, folder: folder).sync()  // seals, publishes, notes what peers hold
        let horizon = try a.version[a.replica]
        // Enough commits for several seals, each followed by a size-tiered merge attempt
        // that would take the small published segment in.
        for i in 0..<400 { try a.add(title: "a later task, number \(i)") }
        a.waitForMaintenance()
        let logs = dir.sub("a/logs/\(a.replica.hex)")
        let names = try FileManager.default.contentsOfDirectory(atPath: logs).filter { $0 != "tail.tlog" }
        #expect(names.contains { $0.hasSuffix(String(format: "-%016llx.tlog", horizon)) }, "\(names) \(horizon)")
        let files = try Set(names.map { try Data(contentsOf: URL(fileURLWithPath: logs + "/" + $0)) })
        let segments = try a.segmentsToSend(of: a.replica, after: horizon)
        // The commit at the horizon, then sealed files as they lie (the last may be the tail's part).
        #expect(segments.count >= 2)
        #expect(files.contains(Data(segments[1])), "the first segment after the horizon was encoded afresh")
        #expect(segments.dropFirst().dropLast().allSatisfy { files.contains(Data($0)) })
    }

    @Test("two TaskStore objects on one folder (two processes) see each other's commits on their next read")
    func twoOpenersSeeEachOther() throws {
        let app = try open()
        let widget = try open()
        #expect(app.replica == widget.replica)
        let a = try app.add(title: "from the app")
        #expect(try widget.tasks().map(\.id) == [a.id])
        let w = try widget.add(title: "from the widget")
        try widget.complete([a.id])
        let seen = try app.tasks(TaskQuery(status: .all))
        #expect(Set(seen.map(\.id)) == [a.id, w.id])
        #expect(seen.first { $0.id == a.id }?.isDone == true)
        #expect(try app.version == widget.version)
    }

    @Test("two long-lived writers on one folder keep alternating writes (the tail is re-read from its start)")
    func alternatingWriters() throws {
        let app = try open()
        let widget = try open()
        var ids: [TaskID] = []
        for i in 0..<20 {
            ids.append(try (i % 2 == 0 ? app : widget).add(title: "task \(i)").id)
            if i % 3 == 0 { try (i % 2 == 0 ? widget : app).edit(ids[i], [.priority(UInt8(i % 4))]) }
        }
        #expect(Set(try app.tasks().map(\.id)) == Set(ids))
        #expect(try app.state() == widget.state())
    }

    @Test("the clock never goes backwards across restarts, even when the wall clock does")
    func clockMonotonicAcrossRestarts() throws {
        let late = try open { $0.wallClock = { 2_000_000_000_000 } }
        let first = try late.commit([.add(TaskID("t1")!)])
        let early = try open { $0.wallClock = { 1_000_000_000_000 } }  // a new process, clock set back
        let second = try early.commit([.set(TaskID("t1")!, .title("later write"))])
        #expect(second.time > first.time)
        #expect(try early.task(TaskID("t1")!)?.title == "later write")
    }

    @Test("changes() yields each commit made through the store, in order")
    func changesStreamYieldsCommits() async throws {
        let store = try open()
        let stream = store.changes()
        let t = try store.add(title: "watch me")
        try store.edit(t.id, [.priority(3)])
        var it = stream.makeAsyncIterator()
        let c1 = await it.next()
        let c2 = await it.next()
        #expect(c1?.taskIDs == [t.id] && c1?.isLocal == true)
        #expect(c2?.commit.operations == [.set(t.id, .priority(3))])
    }

    @Test("observed changes include other processes' commits, noticed on the next read")
    func changesStreamSeesOtherWriters() async throws {
        let app = try open()
        _ = try app.catchUp()
        let stream = app.observeChanges()
        let widget = try open()
        let t = try widget.add(title: "from the widget")
        _ = try app.tasks()
        var it = stream.makeAsyncIterator()
        let c = await it.next()
        #expect(c?.taskIDs == [t.id] && c?.isLocal == false)
    }

    @Test("a long history is sealed into segments and merged; every operation replays and verifies")
    func sealAndMergeKeepEveryOperation() throws {
        // Seals in the commit: how many segments a burst leaves with background seals depends
        // on how fast the commits outrun them.
        let store = try open { $0.sealThreshold = 8 << 10; $0.mergeTarget = 32 << 10; $0.durable = false; $0.sealsInBackground = false }
        var rng = SystemRandomNumberGenerator()
        var ids: [TaskID] = []
        for i in 0..<3000 {
            if i % 10 == 0 || ids.isEmpty {
                ids.append(try store.add(title: "task \(i)").id)
            } else {
                let id = ids.randomElement(using: &rng)!
                try store.edit(id, [.notes("note \(i) " + String(repeating: "x", count: i % 50))])
            }
        }
        store.waitForMaintenance()
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.sub("store/logs/\(store.replica.hex)"))
        #expect(files.count >= 3, "expected sealed segments, got \(files)")
        let live = try store.state()
        let (replayed, warnings) = try store.replay()
        #expect(warnings.isEmpty)
        #expect(replayed == live)
        try store.compact()
        #expect(try store.verify().operations == live.version.operationCount)
        let reopened = try TaskStore.open(at: dir.sub("store"), create: false)
        #expect(try reopened.state() == live)
    }

    @Test("a lease is carried on by a commit past its end while nobody waits, never past 10 ms from taking the lock, and given up to a writer that says it waits")
    func leaseIsCarriedOnOnlyWhileNobodyWaits() throws {
        let path = dir.sub("lock")
        let clock = ManualLeaseClock()
        var holder = StoreLock.Handle()
        defer { holder.release() }
        func commit() throws -> Bool {
            try StoreLock.holding(path, handle: &holder, leaseNanoseconds: 1_000_000, clock: clock) { true }.result
        }
        func sleep(_ ms: UInt32) { usleep(ms * 1000) }
        let longest = StoreLock.longestLeaseNanoseconds
        // Nobody waits: each commit after the lease's end carries it on, until 10 ms from
        // taking it, and not a commit longer.
        _ = try commit()
        let taken = holder.takenAt
        var carried = 0
        while holder.isLeased {
            clock.advance(byMilliseconds: 2)
            _ = try commit()
            if holder.isLeased {
                carried += 1
                #expect(try #require(holder.leaseEnds) <= taken + longest)
            } else {
                #expect(clock.now() >= taken + longest, "the lease ended early, with nobody waiting")
            }
        }
        #expect(carried == 4, "carried on \(carried) times")
        // Another writer says it waits (a shared lock on `lock-wait`): the next commit past
        // the end gives the lock up.
        _ = try commit()
        #expect(holder.isLeased)
        let waiting = Glibc.open(path + "-wait", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        defer { close(waiting) }
        #expect(flock(waiting, LOCK_SH) == 0)
        clock.advance(byMilliseconds: 2)
        _ = try commit()
        #expect(!holder.isLeased, "the lease went on while another writer waited")
        // And a writer that finds the lock taken says so while it waits, and only then.
        flock(waiting, LOCK_UN)
        _ = try commit()
        let other = Glibc.open(path, O_RDWR | O_CLOEXEC)
        defer { close(other) }
        #expect(flock(other, LOCK_EX | LOCK_NB) != 0)
        let waiter = Thread {
            var h = StoreLock.Handle()
            _ = try? StoreLock.holding(path, handle: &h, leaseNanoseconds: nil) { true }
            h.release()
        }
        waiter.start()
        var announced = false
        for _ in 0..<2000 where !announced {
            sleep(1)
            if flock(waiting, LOCK_EX | LOCK_NB) == 0 { flock(waiting, LOCK_UN) } else { announced = true }
        }
        #expect(announced, "the waiting writer never said so")
        clock.advance(byMilliseconds: 2)
        _ = try commit()
        #expect(!holder.isLeased)
    }

    @Test("background seals lose nothing while two store objects on one folder commit at full speed")
    func backgroundSealsKeepEveryCommitOfConcurrentWriters() async throws {
        func small(_ o: inout TaskStore.Options) {
            o.sealThreshold = 4 << 10
            o.mergeTarget = 64 << 10
            o.durable = false
            o.sealsInBackground = true
        }
        let app = try open(configure: small)
        let widget = try open(configure: small)
        let perWriter = 1500
        async let fromApp = Task.detached {
            try (0..<perWriter).map { try app.add(title: "app \($0)").id }
        }.value
        async let fromWidget = Task.detached {
            try (0..<perWriter).map { try widget.add(title: "widget \($0)").id }
        }.value
        let ids = try await fromApp + fromWidget
        app.waitForMaintenance()
        widget.waitForMaintenance()
        #expect(app.warnings.isEmpty && widget.warnings.isEmpty, "\(app.warnings) \(widget.warnings)")
        let logs = try FileManager.default.contentsOfDirectory(atPath: dir.sub("store/logs/\(app.replica.hex)"))
        #expect(logs.count > 1, "expected sealed segments, got \(logs)")
        let reopened = try TaskStore.open(at: dir.sub("store"), create: false)
        let titles = Set(try reopened.tasks(TaskQuery(status: .all)).map(\.title))
        #expect(titles.count == 2 * perWriter)
        #expect(Set(ids).count == 2 * perWriter)
        let (replayed, warnings) = try reopened.replay()
        #expect(warnings.isEmpty)
        #expect(replayed == (try reopened.state()))
        #expect(try reopened.verify().operations == replayed.version.operationCount)
        #expect(try app.state() == replayed && widget.state() == replayed)
    }

    @Test("a burst of commits that ends leaves at most 64 KiB in its tail once the lock lease runs out, sealed unasked")
    func idleTailIsSealedAfterABurst() throws {
        let clock = ManualLeaseClock()
        let store = try open { $0.durable = false; $0.leaseClock = clock }
        let tail = dir.sub("store/logs/\(store.replica.hex)/tail.tlog")
        func tailSize() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: tail)[.size] as? Int) }
        // A short burst stays in the tail when its lease runs out.
        for i in 0..<20 { try store.add(NewTask(title: "short burst \(i)")) }
        clock.advance(byMilliseconds: 10)
        #expect(try tailSize() > 1000)
        // 2,000 more commits write about 150 KiB, under the 1 MiB seal threshold: only the
        // seal queued when the lease runs out brings the tail under 64 KiB.
        for i in 0..<2000 { try store.add(NewTask(title: "long burst, task number \(i)")) }
        #expect(try tailSize() > 64 << 10)
        clock.advance(byMilliseconds: 10)
        // The lease has ended, so this only waits for the seal the lease's end queued.
        store.waitForMaintenance()
        #expect(try tailSize() <= 64 << 10, "the tail was not sealed after the burst")
        let reopened = try TaskStore.open(at: dir.sub("store"), create: false)
        #expect(try reopened.tasks(TaskQuery(status: .all)).count == 2020)
        #expect(try reopened.verify().operations == (try reopened.state()).version.operationCount)
    }

    @Test("a cold rebuild of a large log, decoded on a second thread while it is applied, gives the state the store holds")
    func coldRebuildOfALargeLogEqualsTheStoresState() throws {
        let store = try open { $0.durable = false }
        var ids: [TaskID] = []
        var batch: [[TaskOperation]] = []
        for i in 0..<6_000 {
            let id = TaskID.random()
            ids.append(id)
            batch.append([.add(id), .set(id, .title("task \(i) \(id)")), .addTag(id, "t\(i % 7)")])
        }
        for i in 0..<20_000 {
            let id = ids[(i * 7_919) % ids.count]
            switch i % 5 {
            case 0: batch.append([.set(id, .title("renamed \(i)"))])
            case 1: batch.append([.set(id, .done(i % 2 == 0))])
            case 2: batch.append([.removeTag(id, "t\(i % 7)", observed: [])])
            case 3: batch.append([.set(id, .notes("note \(i)"))])
            default: batch.append([.remove(id, observed: try store.state().observedDots(of: id).sorted())])
            }
            if batch.count >= 2_000 {
                try store.commit(batch: batch)
                batch = []
            }
        }
        try store.commit(batch: batch)
        try store.compact()
        store.waitForMaintenance()
        let log = dir.sub("store/logs/\(store.replica.hex)")
        let segments = try FileManager.default.contentsOfDirectory(atPath: log).filter { $0.hasSuffix(".tlog") }
        let largest = try segments.map { try #require(FileManager.default.attributesOfItem(atPath: log + "/" + $0)[.size] as? Int) }.max() ?? 0
        #expect(largest >= 64 << 10, "the log must be large enough to be decoded ahead")
        let (rebuilt, warnings) = try store.replay()
        #expect(warnings.isEmpty)
        #expect(rebuilt == (try store.state()))
        #expect(try TaskStore.open(at: dir.sub("store"), create: false).verify().saved ?? 0 > 0)
        // Opened with no snapshot, a store rebuilds the same way.
        try FileManager.default.removeItem(atPath: dir.sub("store/snapshot"))
        let reopened = try TaskStore.open(at: dir.sub("store"), create: false)
        #expect(try reopened.state() == rebuilt)
        #expect(reopened.warnings.isEmpty)
    }

    @Test("a record found damaged after part of it was decoded ahead and applied contributes nothing to a cold rebuild")
    func coldRebuildDropsARecordDamagedPastItsFirstChunk() throws {
        let store = try open()
        try store.add(title: "mine")
        // Another replica's sealed segment: one record of 6,001 operations whose last commit
        // holds an operation of kind 0 (damage), with a valid checksum.
        let other = ReplicaID.random()
        var commits: [Commit] = []
        for i in 0..<3_000 {
            let id = TaskID.random()
            commits.append(Commit(
                firstSeq: UInt64(2 * i + 1), time: Timestamp(physical: 1_767_225_600_000 + UInt64(i), logical: 0),
                operations: [.add(id), .set(id, .title("theirs \(i) \(id) \(UUID().uuidString)"))]))
        }
        var w = ByteWriter()
        CommitCodec.encode(commits, into: &w)
        let last = commits.last!
        w.uvarint(2)  // one millisecond later, implicit logical
        w.uvarint(1)  // one operation
        w.u8(0x00)  // kind 0: damage
        var file = SegmentHeader(kind: .sealed, replica: other.bytes, firstSeq: 1).encoded()
        file += RecordFraming.encode(type: .commits, firstSeq: 1, opCount: last.endSeq, payload: w.bytes)
        #expect(file.count >= 64 << 10, "the segment must be large enough to be decoded ahead")
        let folder = dir.sub("store/logs/\(other.hex)")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = String(format: "%016llx-%016llx.tlog", 1, last.endSeq)
        try Data(file).write(to: URL(fileURLWithPath: folder + "/" + name))
        let (rebuilt, warnings) = try store.replay()
        #expect(rebuilt.version[other] == 0)
        #expect(rebuilt.liveCount == 1)
        #expect(warnings.contains { $0.path.hasSuffix(name) && $0.message.contains("damaged record") })
    }

    @Test("waitForMaintenance brings a store to rest: the tail a burst left holds at most 64 KiB when it returns")
    func waitForMaintenanceSealsTheIdleTail() throws {
        let store = try open { $0.durable = false; $0.lockLease = .milliseconds(10) }
        for i in 0..<2000 { try store.add(title: "task number \(i)") }
        store.waitForMaintenance()
        let tail = dir.sub("store/logs/\(store.replica.hex)/tail.tlog")
        #expect(try #require(FileManager.default.attributesOfItem(atPath: tail)[.size] as? Int) <= 64 << 10)
        #expect(try TaskStore.open(at: dir.sub("store"), create: false).tasks(TaskQuery(status: .all)).count == 2000)
    }

    @Test("opening a missing store without create throws storeNotFound with advice")
    func missingStore() throws {
        #expect(throws: StoreError.storeNotFound(path: dir.sub("nope"))) {
            try TaskStore.open(at: dir.sub("nope"), create: false)
        }
        #expect(StoreError.storeNotFound(path: "x").description.contains("tasklog init"))
    }

    @Test("a field edit never touches other fields")
    func editIsolation() throws {
        let store = try open()
        let t = try store.add(NewTask(title: "A", notes: "n", priority: 1, due: .date(days: 20000), list: "l", tags: ["x"], meta: ["k": "v"]))
        try store.edit(t.id, [.title("B")])
        let u = try #require(try store.task(t.id))
        #expect(u.title == "B" && u.notes == "n" && u.priority == 1 && u.due == .date(days: 20000) && u.list == "l" && u.tags == ["x"] && u.meta == ["k": "v"])
    }

    @Test("apply(patches) creates, updates only differing fields, restores deleted tasks, and refuses bad entries whole")
    func patches() throws {
        let store = try open()
        var p = TaskPatch(id: TaskID("task3")!)
        p.title = "Task three"
        p.tags = ["a", "b"]
        #expect(try store.apply([p]).created == 1)
        try store.remove([TaskID("task3")!])
        var q = TaskPatch(id: TaskID("task3")!)
        q.tags = ["b"]
        try store.apply([q])
        let t = try #require(try store.task(TaskID("task3")!))
        #expect(!t.isDeleted && t.tags == ["b"] && t.title == "Task three")
        let before = try store.version
        #expect(throws: StoreError.self) { try store.apply([TaskPatch(id: TaskID("new-one")!)]) }
        #expect(try store.version == before)
    }
}
