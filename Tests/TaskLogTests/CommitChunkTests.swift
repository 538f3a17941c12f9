@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) @testable import TaskModel
import TestSupport
import Testing

/// The chunks a payload is decoded into (`CommitChunk`, a fast path) keep their invariants,
/// and hand over exactly the commits a whole decode gives.
@Suite("commit chunks")
struct CommitChunkTests {
    @Test("a chunk filled commit by commit keeps its invariants through every hand-over, and gives the commits back")
    func chunksKeepTheirInvariantsAndCommits() {
        forEachSeed(100) { seed, rng in
            let commits = Gen.commits(&rng)
            let total = commits.reduce(0) { $0 + $1.operations.count }
            let chunkOperations = rng.int(1...8)
            var chunk = CommitChunk(firstSeq: commits.first?.firstSeq ?? 1, opCount: UInt64(total), chunkOperations: chunkOperations)
            chunk.reserve(remaining: total * 8)
            var handed: [Commit] = []
            for c in commits {
                chunk.beginCommit(at: c.time)
                chunk.ops.append(contentsOf: c.operations)
                chunk.seq += UInt64(c.operations.count)
                #expect(chunk.violations().isEmpty, "seed \(seed): \(chunk.violations())")
                if chunk.ops.count >= chunkOperations {
                    handed += chunk.commits()
                    chunk.startNext(remaining: total * 8)
                    #expect(chunk.violations().isEmpty && chunk.isEmpty, "seed \(seed) after a hand-over")
                }
            }
            handed += chunk.commits()
            #expect(handed == commits, "seed \(seed)")
        }
    }

    @Test("the chunk check reports a commit starting out of order and a sequence number that does not follow")
    func theChunkCheckReportsBrokenChunks() {
        let id = TaskID("t1")!
        var chunk = CommitChunk(firstSeq: 1, opCount: 4, chunkOperations: 8)
        chunk.beginCommit(at: Timestamp(physical: 1, logical: 0))
        chunk.ops.append(.add(id))
        chunk.seq += 1
        #expect(chunk.violations().isEmpty)
        chunk.beginCommit(at: Timestamp(physical: 2, logical: 0))  // a commit with no operation yet
        chunk.beginCommit(at: Timestamp(physical: 3, logical: 0))  // starts where the last one did
        #expect(chunk.violations().contains { $0.contains("a commit starts at 1") })
        var skipped = CommitChunk(firstSeq: 1, opCount: 4, chunkOperations: 8)
        skipped.beginCommit(at: Timestamp(physical: 1, logical: 0))
        skipped.ops.append(.add(id))
        skipped.seq += 2
        #expect(skipped.violations().contains { $0.contains("does not follow") })
    }
}
