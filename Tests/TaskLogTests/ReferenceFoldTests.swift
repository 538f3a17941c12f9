@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TestSupport
import Testing

/// The materialising rules of Spec/crdt.md written for clarity, with plain dictionaries and
/// no index, ordering or memory tricks: what the fast fold of `TaskState` must agree with.
struct ReferenceFold {
    /// A field's register: the value of the write with the greatest stamp.
    private struct Register<Value> {
        var value: Value
        var stamp: Stamp
        mutating func offer(_ v: Value, _ s: Stamp) { if s > stamp { (value, stamp) = (v, s) } }
    }

    private var addDots: [TaskID: Set<OperationID>] = [:]
    private var membershipTombstones = Set<OperationID>()
    private var firstAdd: [TaskID: Timestamp] = [:]
    private var lastTouch: [TaskID: Timestamp] = [:]
    private var fields: [TaskID: [String: Register<FieldWrite>]] = [:]
    private var tagDots: [TaskID: [String: Set<OperationID>]] = [:]
    private var tagTombstones: [TaskID: Set<OperationID>] = [:]
    private var names: [ReplicaID: Register<String>] = [:]

    /// Each device's name: the newest it gave itself, control characters replaced and cut to
    /// 64 bytes of UTF-8 (Spec/crdt.md, "Device names").
    var deviceNames: [ReplicaID: String] { names.mapValues(\.value) }

    private static func bounded(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            let v = scalar.value
            let control = v < 0x20 || (0x7f...0x9f).contains(v) || (0x202a...0x202e).contains(v) || (0x2066...0x2069).contains(v)
            let kept = control ? "\u{FFFD}" : String(scalar)
            if out.utf8.count + kept.utf8.count > 64 { break }
            out += kept
        }
        return out
    }

    /// Applies every operation of `commit`, whatever order commits come in.
    mutating func apply(_ commit: Commit, from replica: ReplicaID) {
        for (i, op) in commit.operations.enumerated() {
            let stamp = Stamp(time: commit.time, operation: OperationID(replica: replica, seq: commit.firstSeq + UInt64(i)))
            apply(op, stamp)
        }
    }

    private mutating func apply(_ op: TaskOperation, _ stamp: Stamp) {
        if case .deviceName(let name) = op {
            names[stamp.operation.replica, default: Register(value: Self.bounded(name), stamp: stamp)].offer(Self.bounded(name), stamp)
        }
        guard let id = op.task else { return }  // an unknown kind or a device name changes no task
        lastTouch[id] = max(lastTouch[id] ?? .zero, stamp.time)
        switch op {
        case .add:
            addDots[id, default: []].insert(stamp.operation)
            firstAdd[id] = min(firstAdd[id] ?? stamp.time, stamp.time)
        case .remove(_, let observed):
            membershipTombstones.formUnion(observed)
        case .set(_, let write):
            guard let key = Self.key(of: write) else { return }
            fields[id, default: [:]][key, default: Register(value: write, stamp: stamp)].offer(write, stamp)
        case .addTag(_, let tag):
            tagDots[id, default: [:]][tag, default: []].insert(stamp.operation)
        case .removeTag(_, _, let observed):
            tagTombstones[id, default: []].formUnion(observed)
        case .deviceName, .unknown:
            break
        }
    }

    /// Which register a write goes to; nil for a field this build does not know.
    private static func key(of write: FieldWrite) -> String? {
        switch write {
        case .title: "title"
        case .notes: "notes"
        case .done: "done"
        case .priority: "priority"
        case .due: "due"
        case .list: "list"
        case .meta(let k, _): "meta." + k
        case .unknown: nil
        }
    }

    /// A task as users see it: every field of `TaskItem`.
    struct Shown: Equatable {
        var title = ""
        var notes: String?
        var isDone = false
        var completedAt: Timestamp?
        var priority: UInt8?
        var due: Due?
        var tags: [String] = []
        var list: String?
        var meta: [String: String] = [:]
        var createdAt = Timestamp.zero
        var updatedAt = Timestamp.zero
        var isDeleted = false

        init() {}

        init(_ t: TaskItem) {
            (title, notes, isDone, completedAt, priority, due) = (t.title, t.notes, t.isDone, t.completedAt, t.priority, t.due)
            (tags, list, meta, createdAt, updatedAt, isDeleted) = (t.tags, t.list, t.meta, t.createdAt, t.updatedAt, t.isDeleted)
        }
    }

    /// Every task ever added, deleted ones included, by id.
    var tasks: [TaskID: Shown] {
        var out: [TaskID: Shown] = [:]
        for (id, created) in firstAdd {
            var item = Shown()
            item.createdAt = created
            item.updatedAt = lastTouch[id]!
            item.isDeleted = addDots[id]!.subtracting(membershipTombstones).isEmpty
            for (_, register) in fields[id] ?? [:] {
                switch register.value {
                case .title(let v): item.title = v
                case .notes(let v): item.notes = v
                case .done(let v):
                    item.isDone = v
                    item.completedAt = v ? register.stamp.time : nil
                case .priority(let v): item.priority = v
                case .due(let v): item.due = v
                case .list(let v): item.list = v
                case .meta(let k, let v): item.meta[k] = v
                case .unknown: break
                }
            }
            let dead = tagTombstones[id] ?? []
            item.tags = (tagDots[id] ?? [:]).filter { !$0.value.subtracting(dead).isEmpty }.keys
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            out[id] = item
        }
        return out
    }
}

@Suite("reference fold")
struct ReferenceFoldTests {
    @Test("the state folded commit by commit, in any interleaving, shows what the reference fold of the same operations shows")
    func foldMatchesTheReference() {
        forEachSeed(300) { seed, rng in
            let history = Gen.history(&rng)
            var reference = ReferenceFold()
            for (r, c) in history.sequential { reference.apply(c, from: r) }
            let state = Gen.state(applying: Gen.interleaving(history, &rng))
            let folded = Dictionary(uniqueKeysWithValues: state.allTasks.map { ($0.id, ReferenceFold.Shown($0)) })
            #expect(folded == reference.tasks, "seed \(seed)")
            #expect(state.deviceNameRegisters.mapValues(\.value) == reference.deviceNames, "seed \(seed)")
        }
    }

    @Test("the fast fold, applying runs of commits and moving their values out, shows what the reference fold shows")
    func runsTakenMatchTheReference() {
        forEachSeed(300) { seed, rng in
            let history = Gen.history(&rng)
            var reference = ReferenceFold()
            var state = TaskState()
            for r in history.replicas {
                let log = history.logs[r]!
                for c in log { reference.apply(c, from: r) }
                var start = 0
                while start < log.count {
                    let end = min(log.count, start + rng.int(1...4))
                    #expect(state.apply(taking: log[start..<end], from: r) == end - start, "seed \(seed)")
                    start = end
                }
            }
            let folded = Dictionary(uniqueKeysWithValues: state.allTasks.map { ($0.id, ReferenceFold.Shown($0)) })
            #expect(folded == reference.tasks, "seed \(seed)")
            #expect(state.deviceNameRegisters.mapValues(\.value) == reference.deviceNames, "seed \(seed)")
        }
    }
}
