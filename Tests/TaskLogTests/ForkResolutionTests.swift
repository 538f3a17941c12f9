@_spi(Engine) import CRDTCore
import Foundation
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
import Testing

/// Forks settled inside the store (Spec/sync-folder.md, "Forks"), without a transport.
@Suite("fork resolution")
struct ForkResolutionTests {
    let dir = TemporaryDirectory()

    /// A store, a copy of its folder, and different writes on each after the copy.
    func forkedPair(extraOnCopy: Int = 1) throws -> (original: TaskStore, copy: TaskStore) {
        let original = try TaskStore.open(at: dir.sub("original"))
        try original.add(title: "before the copy")
        try FileManager.default.copyItem(atPath: original.path, toPath: dir.sub("copy"))
        let copy = try TaskStore.open(at: dir.sub("copy"))
        try original.add(title: "on the original")
        for i in 0..<extraOnCopy { try copy.add(title: "on the copy \(i)") }
        return (original, copy)
    }

    func allCommits(_ store: TaskStore, _ replica: ReplicaID) throws -> [Commit] {
        try store.commits(of: replica, after: 0)
    }

    @Test("both stores settle a fork the same way, whichever side meets which branch, and keep every task")
    func resolutionIsSymmetric() throws {
        let (original, copy) = try forkedPair(extraOnCopy: 2)
        let r = original.replica
        let (fromOriginal, fromCopy) = (try allCommits(original, r), try allCommits(copy, r))
        let a = try original.integrate(fromCopy, from: r)
        let b = try copy.integrate(fromOriginal, from: r)
        let (fa, fb) = (try #require(a.fork), try #require(b.fork))
        #expect(fa.seq == fb.seq && fa.movedTo == fb.movedTo && fa.keptHeld != fb.keptHeld)
        // The moved branch is what each side lacks: send it across too.
        let moved = fa.movedTo
        if fa.keptHeld {
            try copy.integrate(try allCommits(original, moved), from: moved)
        } else {
            try original.integrate(try allCommits(copy, moved), from: moved)
        }
        #expect(try original.state() == copy.state())
        #expect(try original.tasks().count == 4)
        // The store whose own branch lost now writes under the moved id; the other keeps its id.
        #expect(Set([original.replica, copy.replica]) == [r, moved])
        #expect(try original.verify().operations >= 0 && copy.replay().state == copy.state())
    }

    @Test("replaying a folder that holds both branches of a fork reports it and mixes nothing")
    func replayOfForkedLogsReportsTheFork() throws {
        let (original, copy) = try forkedPair()
        let r = original.replica
        try original.seal()
        try copy.seal()
        let folder = dir.sub("attached")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original.path + "/logs", toPath: folder + "/original")
        try FileManager.default.copyItem(atPath: copy.path + "/logs", toPath: folder + "/copy")
        let replay = try LogReplay.load(from: folder)
        #expect(replay.skipped.contains { $0.message.contains("a fork") }, "\(replay.skipped)")
        let shared = try original.commits(of: r, after: 0).prefix { try! copy.commits(of: r, after: 0).contains($0) }
        #expect(replay.commits[r] == Array(shared))
        #expect(replay.state().liveTasks.map(\.title) == ["before the copy"])
    }

    @Test("a moved branch's removals of its own additions follow them to the new id")
    func rehomedRemovalsFollowTheirAdditions() {
        let r = ReplicaID(high: 1, low: 2)
        let task = TaskID("t1")!
        let commits = [
            Commit(firstSeq: 5, time: Timestamp(physical: 10, logical: 0), operations: [.add(task), .addTag(task, "x")]),
            Commit(firstSeq: 7, time: Timestamp(physical: 11, logical: 0), operations: [
                .removeTag(task, "x", observed: [OperationID(replica: r, seq: 6), OperationID(replica: r, seq: 2)]),
            ]),
        ]
        let moved = ForkRule.movedReplica(of: r, at: 5, losingCommit: commits[0])
        let rehomed = ForkRule.rehome(commits, of: r, from: 5, as: moved)
        #expect(rehomed.map(\.firstSeq) == [1, 3])
        #expect(rehomed[1].operations == [.removeTag(task, "x", observed: [OperationID(replica: moved, seq: 2), OperationID(replica: r, seq: 2)])])
        #expect(moved != r && moved == ForkRule.movedReplica(of: r, at: 5, losingCommit: commits[0]))
        #expect(ForkRule.keeps(commits[0], over: commits[1]) != ForkRule.keeps(commits[1], over: commits[0]))
    }

    @Test("a second process on the store whose branch lost follows it to the new replica id and sees the settled state")
    func anotherProcessFollowsTheNewIdentity() throws {
        let (original, copy) = try forkedPair()
        let r = original.replica
        let other = try TaskStore.open(at: copy.path)  // stands for a second process: its own lock and caches
        _ = try other.tasks()
        let fromOriginal = try allCommits(original, r)
        let fromCopy = try allCommits(copy, r)
        // Make the copy's branch the loser so its own id must move.
        let copyLoses = ForkRule.keeps(fromOriginal[1], over: fromCopy[1])
        let loser = copyLoses ? copy : original
        let winnerCommits = copyLoses ? fromOriginal : fromCopy
        let watcher = copyLoses ? other : try TaskStore.open(at: original.path)
        _ = try watcher.tasks()
        let result = try loser.integrate(winnerCommits, from: r)
        #expect(result.fork?.keptHeld == false)
        #expect(loser.replica != r)
        #expect(try watcher.tasks().count == 3, "the other process sees both branches")
        try watcher.add(title: "written by the other process after the fork")
        #expect(watcher.replica == loser.replica)
        #expect(try loser.tasks().count == 4)
        #expect(try loser.commits(of: r, after: 0) == winnerCommits)
    }

    @Test("a rewrite interrupted after the new segment was written is completed when the store is next opened")
    func interruptedRewriteIsCompleted() throws {
        let store = try TaskStore.open(at: dir.sub("s"))
        for i in 0..<3 { try store.add(title: "task \(i)") }
        try store.seal()
        let r = store.replica
        let logDir = store.path + "/logs/" + r.hex
        let commits = try store.commits(of: r, after: 0)
        // As if the crash came after the new segment (here: holding the first commit only) was written.
        let keep = "0000000000000001-" + String(repeating: "0", count: 15) + String(commits[0].endSeq - 1, radix: 16) + ".tlog"
        let seg = SegmentFile.encode(replica: r, commits: [commits[0]])
        try Data(seg).write(to: URL(fileURLWithPath: logDir + "/" + keep))
        try Data("replica \(r.hex)\nkeep \(keep)\n".utf8).write(to: URL(fileURLWithPath: store.path + "/fork-rewrite"))
        let reopened = try TaskStore.open(at: store.path)
        #expect(try reopened.tasks().count == 1)
        #expect(!FileManager.default.fileExists(atPath: store.path + "/fork-rewrite"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: logDir).filter { $0.hasSuffix(".tlog") }.sorted() == [keep])
    }
}
