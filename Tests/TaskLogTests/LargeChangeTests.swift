@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) @testable import TaskStore
@_spi(Engine) import TaskModel
import TestSupport
import Testing

/// Changes larger than one record: how they are cut into commits, and how they are written.
@Suite struct LargeChangeTests {
    let dir = TemporaryDirectory()

    @Test("A change is cut into consecutive runs, each a commit whose payload fits the limit unless it is one operation")
    func splitRunsFitTheLimit() {
        forEachSeed(300) { seed, rng in
            let operations = (0..<rng.int(1...200)).map { _ in Gen.anyOperation(&rng) }
            let limit = rng.int(40...4_000)
            let runs = CommitCodec.split(operations, payloadLimit: limit)
            #expect(runs.first?.lowerBound == 0 && runs.last?.upperBound == operations.count, "seed \(seed)")
            #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && !$1.isEmpty }, "seed \(seed)")
            for run in runs where run.count > 1 {
                // The widest time step: a commit far from the start of its payload.
                let commit = Commit(
                    firstSeq: 1, time: Timestamp(physical: Timestamp.maxPhysical, logical: 7), operations: operations[run])
                #expect(CommitCodec.payloadSize(of: [commit]) <= limit, "seed \(seed), run \(run)")
                #expect(CommitCodec.payloadSize(of: [commit]) == CommitCodec.encode([commit]).count, "seed \(seed)")
            }
        }
    }

    /// A change of `count` tasks, each with notes of `noteBytes`.
    static func change(tasks count: Int, noteBytes: Int, tag: String) -> (ids: [TaskID], operations: [TaskOperation]) {
        let ids = (0..<count).map { TaskID("\(tag)-\($0)")! }
        let notes = String(repeating: "n", count: noteBytes)
        return (ids, ids.flatMap { [.add($0), .set($0, .title("task \($0)")), .set($0, .notes(notes))] as [TaskOperation] })
    }

    @Test("A change past one record is several commits in one sealed segment, and later commits follow it")
    func aLargeChangeIsOneSealedSegment() throws {
        let path = dir.sub("store")
        let store = try TaskStore.open(at: path)
        try store.add(title: "before")
        let (ids, operations) = Self.change(tasks: 5, noteBytes: 3 << 20, tag: "big")
        let commits = try store.commitWhole(operations)
        #expect(commits.count > 1)
        #expect(commits.reduce(0) { $0 + $1.operations.count } == operations.count)
        let sealed = try Posix.list(StoreLayout(root: path).logDirectory(store.replica)).compactMap(SealedName.init(fileName:))
        #expect(sealed.contains { $0.first == commits[0].firstSeq && $0.last == commits.last!.endSeq - 1 })
        try store.add(title: "after")
        let reopened = try TaskStore.open(at: path, create: false)
        #expect(Set(ids).isSubset(of: Set(try reopened.tasks(TaskQuery(status: .all)).map(\.id))))
        #expect(try reopened.verify().operations == (try reopened.state()).version.operationCount)
    }

    @Test("A large change stopped between any two of its file steps is found whole or not at all, and the log goes on")
    func aLargeChangeStoppedMidwayIsWholeOrAbsent() throws {
        var step = 0
        var stoppedSomewhere = true
        while stoppedSomewhere {
            let files = StoppingFileSystem(failAt: step)
            var options = TaskStore.Options()
            options.sealsInBackground = false
            options.fileSystem = files
            let path = dir.sub("store-\(step)")
            let (ids, operations) = Self.change(tasks: 3, noteBytes: 3 << 20, tag: "s\(step)")
            var acknowledged = false
            do {
                let store = try TaskStore.open(at: path, options: options)
                try store.add(title: "before")
                _ = try store.commitWhole(operations)
                acknowledged = true
            } catch {}
            stoppedSomewhere = files.stopped
            let reopened = try TaskStore.open(at: path, create: false)
            let held = Set(try reopened.tasks(TaskQuery(status: .all)).map(\.id))
            let found = ids.filter(held.contains)
            #expect(found.isEmpty || found == ids, "stopped at change \(step): \(found.count) of \(ids.count) tasks")
            #expect(!acknowledged || found == ids, "stopped at change \(step): an acknowledged change is missing")
            let later = try reopened.add(title: "after")
            #expect(try reopened.task(later.id) != nil)
            #expect(try reopened.verify().operations == (try reopened.state()).version.operationCount, "step \(step)")
            step += 1
        }
        #expect(step > 3, "the run made only \(step) file changes")
    }
}
