import Foundation
@_spi(Engine) import OpLogFormat
import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) @testable import TaskStore
import Testing

/// A lease clock moved by hand: timers fire, on the calling thread, when it is advanced past them.
final class ManualLeaseClock: LeaseClock {
    private struct Timers {
        var now: UInt64 = 1_000_000_000
        var pending: [(due: UInt64, body: @Sendable () -> Void)] = []
    }
    private let timers = Mutex(Timers())

    func now() -> UInt64 { timers.withLock { $0.now } }

    func after(nanoseconds: Int, _ body: @escaping @Sendable () -> Void) {
        timers.withLock { $0.pending.append(($0.now + UInt64(max(0, nanoseconds)), body)) }
    }

    /// Moves the clock on and runs every timer that has come due (and any they set that are due).
    func advance(byMilliseconds ms: UInt64) {
        let target = timers.withLock { $0.now += ms * 1_000_000; return $0.now }
        while let body = timers.withLock({ t -> (@Sendable () -> Void)? in
            guard let i = t.pending.indices.min(by: { t.pending[$0].due < t.pending[$1].due }), t.pending[i].due <= target
            else { return nil }
            return t.pending.remove(at: i).body
        }) {
            body()
        }
    }
}

/// A file system that works until its `failAt`-th change (a write, rename or removal), then
/// refuses every change: a seal or merge stopped there, as by a crash.
final class StoppingFileSystem: LogFileSystem {
    let failAt: Int
    private let changes = Atomic<Int>(0)
    private let real = PosixFileSystem()

    init(failAt: Int) { self.failAt = failAt }

    var stopped: Bool { changes.load(ordering: .relaxed) >= failAt }

    private func change() throws(StoreError) {
        let n = changes.add(1, ordering: .relaxed).newValue
        if n > failAt { throw .io(operation: "write (stopped by the test)", path: "", errno: EIO) }
    }

    func read(_ path: String) throws(StoreError) -> [UInt8]? { try real.read(path) }
    func list(_ folder: String) throws(StoreError) -> [String] { try real.list(folder) }
    func size(_ path: String) -> Int? { real.size(path) }
    func exists(_ path: String) -> Bool { real.exists(path) }
    func writeTemporary(beside path: String, _ bytes: [UInt8]) throws(StoreError) -> String {
        try change()
        return try real.writeTemporary(beside: path, bytes)
    }
    func install(_ temporary: String, as path: String) throws(StoreError) {
        try change()
        try real.install(temporary, as: path)
    }
    func remove(_ path: String) {
        if (try? change()) != nil { real.remove(path) }
    }
    func syncFolder(_ folder: String) throws(StoreError) { try real.syncFolder(folder) }
}

@Suite("the tail writer")
struct TailWriterTests {
    let dir = TemporaryDirectory()

    /// Sealed segments and their sizes, in reading order.
    struct Segments {
        var names: [SealedName] = []
        var sizes: [String: Int] = [:]

        init(_ segments: [(UInt64, UInt64, Int)]) {
            for (first, last, size) in segments {
                let name = SealedName(first: first, last: last)
                names.append(name)
                sizes[name.fileName] = size
            }
        }

        func choose(target: Int, everything: Bool, keepingApartAt barrier: UInt64?) -> [SealedName]? {
            MergePlan.choose(
                from: names, size: { sizes[$0.fileName]! }, target: target, everything: everything, keepingApartAt: barrier)?.run
        }
    }

    @Test("a merge joins the newest segments while each older one is at most twice the newer ones, under the target")
    func mergePlanIsSizeTiered() {
        let segments = Segments([(1, 100, 4000), (101, 150, 900), (151, 160, 300), (161, 170, 300)])
        #expect(segments.choose(target: 1 << 20, everything: false, keepingApartAt: nil) == Array(segments.names[1...]))
        #expect(segments.choose(target: 700, everything: false, keepingApartAt: nil) == Array(segments.names[2...]))
        #expect(segments.choose(target: 1 << 20, everything: true, keepingApartAt: nil) == segments.names)
    }

    @Test("a merge never joins segments across a gap or across what peers were last sent, and needs two segments")
    func mergePlanKeepsGapsAndTheSharedBarrierApart() {
        let gap = Segments([(1, 10, 100), (12, 20, 100)])
        #expect(gap.choose(target: 1 << 20, everything: true, keepingApartAt: nil) == nil)
        let shared = Segments([(1, 10, 100), (11, 20, 100), (21, 30, 100)])
        #expect(shared.choose(target: 1 << 20, everything: false, keepingApartAt: 20) == nil, "the newest segment alone lies past the barrier")
        #expect(shared.choose(target: 1 << 20, everything: false, keepingApartAt: 10) == Array(shared.names[1...]))
        #expect(Segments([(1, 10, 100)]).choose(target: 1 << 20, everything: true, keepingApartAt: nil) == nil)
    }

    @Test("a segment inside another is a leftover only when the wider one reads cleanly")
    func coveredSegmentsNeedACleanCover() throws {
        let wide = SealedName(first: 1, last: 20)
        let names = [wide, SealedName(first: 1, last: 10), SealedName(first: 11, last: 20), SealedName(first: 21, last: 30)]
        #expect(try MergePlan.covered(in: names) { _ in true } == [names[1], names[2]])
        #expect(try MergePlan.covered(in: names) { $0 != wide }.isEmpty)
    }

    @Test("a lease ends when its clock says so: the reserved tail space is given back with no waiting")
    func leaseEndsOnTheInjectedClock() throws {
        let clock = ManualLeaseClock()
        var options = TaskStore.Options()
        options.durable = false
        options.lockLease = .milliseconds(10)
        options.leaseClock = clock
        options.sealsInBackground = false
        let writer = try TaskStore.open(at: dir.sub("store"), options: options)
        let tail = dir.sub("store/logs/\(writer.replica.hex)/tail.tlog")
        func tailSize() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: tail)[.size] as? Int) }
        let reader = try TaskStore.open(at: dir.sub("store"))
        for round in 0..<3 {
            let task = try writer.add(title: "task \(round)")
            _ = try writer.add(title: "more \(round)")
            #expect(try tailSize() >= 1 << 20, "round \(round): no space reserved during the lease")
            #expect(writer.tailViolations().isEmpty)
            #expect(try reader.task(task.id)?.title == "task \(round)")
            clock.advance(byMilliseconds: 9)
            #expect(try tailSize() >= 1 << 20, "round \(round): the lease ended early")
            clock.advance(byMilliseconds: 1)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: tail)))
            let scan = try bytes.withUnsafeBytes { try SegmentScanner.scan($0) }
            #expect(scan.ending == .clean && scan.validEnd == bytes.count, "round \(round): the reserved space was kept")
            #expect(writer.tailViolations().isEmpty)
        }
        #expect(try reader.tasks().count == 6)
    }

    @Test("a seal or merge stopped between any two of its file steps loses no acknowledged commit")
    func sealsAndMergesStoppedMidwayLoseNothing() throws {
        var step = 0
        var stoppedSomewhere = true
        while stoppedSomewhere {
            let files = StoppingFileSystem(failAt: step)
            var options = TaskStore.Options()
            options.durable = false
            options.sealThreshold = 2 << 10
            options.mergeTarget = 64 << 10
            options.sealsInBackground = false
            options.lockLease = .zero
            options.fileSystem = files
            let path = dir.sub("store-\(step)")
            var acknowledged: [TaskID] = []
            do {
                let store = try TaskStore.open(at: path, options: options)
                for i in 0..<120 { acknowledged.append(try store.add(title: "task \(i) of step \(step)").id) }
                _ = try store.compact()
            } catch {}
            stoppedSomewhere = files.stopped
            let reopened = try TaskStore.open(at: path, create: false)
            let held = Set(try reopened.tasks(TaskQuery(status: .all)).map(\.id))
            #expect(Set(acknowledged).isSubset(of: held), "stopped at change \(step): acknowledged commits were lost")
            _ = try reopened.compact()
            #expect(try reopened.verify().operations == (try reopened.state()).version.operationCount)
            step += 1
        }
        #expect(step > 5, "the run made only \(step) file changes")
    }
}
