// Writes the seed corpora of Fuzz/corpus/<target>/: small valid inputs for each target, made
// through the public API (and the golden vectors of Spec/vectors). Run by `Fuzz/run.sh seeds`.
//
//     fuzz-seeds <Fuzz folder>
#if canImport(Glibc)
import Glibc
#endif
@_spi(Engine) import CRDTCore
import FuzzSupport
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore
@_spi(Engine) import TaskSync
@_spi(Engine) import TaskSyncHTTP

guard CommandLine.arguments.count == 2 else {
    print("usage: fuzz-seeds <Fuzz folder>")
    exit(2)
}
let fuzz = CommandLine.arguments[1]
let corpus = fuzz + "/corpus"
let vectors = fuzz + "/../Spec/vectors"
FuzzFiles.makeDirectory(corpus)
for t in FuzzTarget.allCases {
    FuzzFiles.removeTree(corpus + "/" + t.rawValue)
    FuzzFiles.makeDirectory(corpus + "/" + t.rawValue)
}
nonisolated(unsafe) var written = 0

func seed(_ target: FuzzTarget, _ name: String, _ bytes: [UInt8]) {
    FuzzFiles.write("\(corpus)/\(target.rawValue)/\(name)", bytes)
    written += 1
}

func seed(_ target: FuzzTarget, _ name: String, _ text: String) { seed(target, name, Array(text.utf8)) }

func u64le(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
func u16le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
func text(_ s: String) -> [UInt8] { [UInt8(s.utf8.count)] + Array(s.utf8) }

func must<T>(_ body: () throws -> T) -> T {
    do { return try body() } catch {
        print("fuzz-seeds: \(error)")
        exit(1)
    }
}

// MARK: Stores made through the API

let scratch = "/tmp/tasklog-fuzz-seeds-\(getpid())"
FuzzFiles.removeTree(scratch)
FuzzFiles.makeDirectory(scratch)
defer { FuzzFiles.removeTree(scratch) }

let options: TaskStore.Options = {
    var o = TaskStore.Options()
    o.durable = false
    o.wallClock = { 1_767_225_600_000 }
    return o
}()

/// A store with a fixed replica id (so the seeds come out the same each time): the identity
/// file and an empty tail, as `TaskStore.open` would make them.
func store(_ name: String, _ replica: ReplicaID) -> TaskStore {
    let path = scratch + "/" + name
    FuzzFiles.makeDirectory(path)
    FuzzFiles.write(path + "/tasklog-store", Array("tasklog-store 1\nreplica \(replica.hex)\n".utf8))
    FuzzFiles.makeDirectory(path + "/logs")
    FuzzFiles.makeDirectory(path + "/logs/" + replica.hex)
    let header = Array("TLOG".utf8) + [1, 1, 0, 0] + replica.bytes + u64le(1) + [0, 0, 0, 0]
    let clockRecord: [UInt8] = [0, 0, 0, 0, 2, 1, 0, 2, 2, 0, 0]
    FuzzFiles.write(path + "/logs/\(replica.hex)/tail.tlog", FuzzSegments.repairChecksums(header + clockRecord))
    return must { try TaskStore.open(at: path, create: false, options: options) }
}

/// A store holding every kind of operation: fields of each type, tags, meta, removal, restore.
let rich = store("rich", ReplicaID(high: 0xa1a1_a1a1_a1a1_a1a1, low: 0xa1a1_a1a1_a1a1_a1a1))
must {
    let a = try rich.add(NewTask(
        title: "Buy milk", notes: "two litres", priority: 2, due: .date(days: 20_600), list: "home",
        tags: ["shop", "dairy"], meta: ["aisle": "6"]), id: TaskID("milk")!)
    let b = try rich.add(NewTask(title: "Call Ana", due: .instant(milliseconds: 1_780_000_000_123), tags: ["phone"], meta: [:]),
                         id: TaskID("0b1e4a8e-62a4-4c3e-9d2b-1f0a3c5e7d9b")!)
    try rich.edit(a.id, [.notes(nil), .priority(nil), .meta(key: "aisle", value: nil), .meta(key: "é", value: "ü")])
    try rich.tag(a.id, add: ["urgent"], remove: ["dairy"])
    try rich.complete([b.id])
    try rich.reopen([b.id])
    try rich.remove([b.id])
    try rich.restore(b.id)
    _ = try rich.add(NewTask(title: String(repeating: "long title to make the payload compress ", count: 8), tags: [], meta: [:]),
                     id: TaskID("long")!)
    try rich.commit([.unknown(kind: 0x91, body: [1, 2, 3]), .set(a.id, .unknown(field: 9, value: [0x12])),
                     .set(a.id, .unknown(field: 40, value: [0x04, 1, 0x41]))])
}

/// A second replica's store, with its own tasks.
let other = store("other", ReplicaID(high: 0xb2b2_b2b2_b2b2_b2b2, low: 0xb2b2_b2b2_b2b2_b2b2))
must {
    _ = try other.add(NewTask(title: "Other device", priority: 3, tags: ["x"], meta: [:]), id: TaskID("other-1")!)
    try other.complete([TaskID("other-1")!])
}

let richCommits = must { try rich.commits(of: rich.replica, after: 0) }
let otherCommits = must { try other.commits(of: other.replica, after: 0) }
let richTail = FuzzFiles.read("\(scratch)/rich/logs/\(rich.replica.hex)/tail.tlog")!

// MARK: fuzz-segment

for name in FuzzFiles.list(vectors) where name.hasSuffix(".tlog") {
    seed(.segment, name, FuzzFiles.read(vectors + "/" + name)!)
}
let richSealed = SegmentFile.encode(replica: rich.replica, commits: richCommits)
let richFirst = SegmentFile.encode(replica: rich.replica, commits: [richCommits[0]])
let otherSealed = SegmentFile.encode(replica: other.replica, commits: otherCommits)
seed(.segment, "api-sealed-all-kinds.tlog", richSealed)
seed(.segment, "api-sealed-one-commit.tlog", richFirst)
seed(.segment, "api-tail.tlog", richTail)

// MARK: fuzz-commit-payload

/// flags 0: first sequence number - 1 and the operation count as one byte each.
func payloadSeed(_ name: String, _ commits: [Commit]) {
    let ops = commits.reduce(0) { $0 + $1.operations.count }
    let prefix: [UInt8] = ops < 256 && commits[0].firstSeq <= 256
        ? [0, UInt8(commits[0].firstSeq - 1), UInt8(ops)]
        : [3] + u64le(commits[0].firstSeq) + u64le(UInt64(ops))
    seed(.commitPayload, name, prefix + CommitCodec.encode(commits))
}
payloadSeed("all-commits.bin", richCommits)
payloadSeed("first-commit.bin", [richCommits[0]])
payloadSeed("last-commit.bin", [richCommits.last!])
payloadSeed("other-replica.bin", otherCommits)
seed(.commitPayload, "big-numbers.bin", [3] + u64le(1 << 40) + u64le(1) + CommitCodec.encode([
    Commit(firstSeq: 1 << 40, time: Timestamp(physical: (1 << 48) - 1, logical: .max), operations: [.add(TaskID("x")!)]),
]))

// MARK: fuzz-snapshot

seed(.snapshot, "empty.bin", StateCodec.encode(TaskState()))
let richState = must { try rich.state() }
seed(.snapshot, "one-replica.bin", StateCodec.encode(richState))
seed(.snapshot, "two-replicas.bin", StateCodec.encode(richState.merging(must { try other.state() })))

// MARK: fuzz-json

let bodies = [
    "task-full.json": #"{"id":"import-1","title":"Imported one","notes":"from a file","priority":1,"due":"2027-01-01","tags":["z","a"],"list":"inbox","meta":{"k":"v","b":"\u00e9"}}"#,
    "task-nulls.json": #"{"title":"T","notes":null,"priority":null,"due":null,"list":null,"done":true}"#,
    "task-instant.json": #"{"title":"Meet","due":"2026-03-01T09:30:00.250+01:00","createdAt":"x","updatedAt":1,"completedAt":null}"#,
    "task-escapes.json": "{\"title\":\"tab\\t quote\\\" \\ud83d\\ude00 \\/\",\"tags\":[\"a b\"],\"meta\":{}}",
    "numbers.json": #"[0,-0,1.5e3,-2E-2,123456789012345678901234567890,1e400,{"a":[true,false,null]}]"#,
    "nested.json": "[[[[[[[[[[[[[[[[{\"a\":[[[[[[\"deep\"]]]]]]}]]]]]]]]]]]]]]]]",
]
for (name, body) in bodies.sorted(by: { $0.key < $1.key }) { seed(.json, name, body) }

// MARK: fuzz-http

/// Method index, path mode, auth mode (1 right token, 2 wrong), flags, then the texts the path
/// and auth modes read, then the body (see FuzzHarness.http).
func request(_ method: UInt8, _ path: UInt8, auth: UInt8 = 1, flags: UInt8 = 0, pathText: String? = nil,
             query: String = "", authText: String? = nil, body: [UInt8] = []) -> [UInt8] {
    var out: [UInt8] = [method, path, auth, flags]
    if let pathText { out += text(pathText) }
    out += text(query)
    if let authText { out += text(authText) }
    return out + body
}
let taskBody = Array(#"{"title":"From REST","tags":["a"],"due":"2026-05-01","meta":{"k":"v"}}"#.utf8)
seed(.http, "list.bin", request(0, 0))
seed(.http, "get-known.bin", request(0, 1))
seed(.http, "get-deleted.bin", request(0, 1 | 1 << 3))
seed(.http, "put-new.bin", request(1, 2, flags: 4, pathText: "new-task", body: taskBody))
seed(.http, "put-known.bin", request(1, 1, body: Array(#"{"id":"alpha","title":"renamed","done":true}"#.utf8)))
seed(.http, "patch.bin", request(2, 1, body: Array(#"{"priority":3,"tags":[],"notes":null}"#.utf8)))
seed(.http, "delete.bin", request(3, 1))
seed(.http, "changes.bin", request(0, 3, query: "timeout=0"))
seed(.http, "changes-since.bin", request(0, 3, query: "since=AA&timeout=5"))
seed(.http, "pull.bin", request(4, 4, body: Array(#"{"version":{}}"#.utf8)))
seed(.http, "push-then-pull.bin", request(4, 5, flags: 6, body: SegmentBundle.encode([otherSealed, richFirst])))
seed(.http, "wrong-token-put.bin", request(1, 1, auth: 2, body: taskBody))
seed(.http, "no-token-delete.bin", request(3, 1, auth: 0))
seed(.http, "raw-auth.bin", request(0, 0, auth: 4, authText: "bearer \tt "))
seed(.http, "fuzzed-path.bin", request(0, 7, pathText: "/v1//tasks/", query: "a=b&c"))

// MARK: fuzz-folder

/// Files after the count and flags bytes: name mode, writer mode, the bytes the modes read,
/// u16 length unless last, contents.
func folderSeed(_ name: String, flags: UInt8 = 0, _ files: [(name: UInt8, writer: UInt8, extra: [UInt8], contents: [UInt8])]) {
    var out: [UInt8] = [UInt8(files.count - 1), flags]
    for (i, f) in files.enumerated() {
        out += [f.name, f.writer] + f.extra
        if i < files.count - 1 { out += u16le(f.contents.count) }
        out += f.contents
    }
    seed(.folder, name, out)
}
folderSeed("one-segment.bin", [(0, 0, [], richSealed)])
folderSeed("two-replicas.bin", flags: 2, [(0, 0, [], richSealed), (0, 1, [], otherSealed)])
// The same files lying outside the folder, linked in: nothing may be imported.
folderSeed("linked.bin", flags: 4, [(0, 0, [], richSealed)])
folderSeed("linked-two-replicas.bin", flags: 6, [(0, 0, [], richSealed), (0, 1, [], otherSealed)])
folderSeed("own-replica.bin", flags: 2, [(0, 2, [], richFirst)])
let half = richCommits.count / 2
folderSeed("one-replica-two-files.bin", [
    (0, 0, [], SegmentFile.encode(replica: rich.replica, commits: Array(richCommits[..<half]))),
    (0, 0, [], SegmentFile.encode(replica: rich.replica, commits: Array(richCommits[half...]))),
])
folderSeed("misnamed.bin", [(1, 0, [1, 3], otherSealed)])
folderSeed("junk.bin", [(3, 0, text("notes.conflicted copy.txt"), Array("a sync client's note".utf8)),
                        (2, 3, text("0123") + text(".tmp-1"), richTail)])

print("fuzz-seeds: wrote \(written) seeds into \(corpus)")
