// Writes the seed corpora of Fuzz/corpus/<target>/: small valid inputs for each target, made
// through the public API (and the golden vectors of Spec/vectors). Run by `Fuzz/run.sh seeds`.
//
//     fuzz-seeds <Fuzz folder>
#if canImport(Glibc)
import Glibc
#endif
@_spi(Engine) import CRDTCore
import FuzzSupport
@_spi(Engine) import TaskInterchange
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
let fixtures = fuzz + "/../Tests/Fixtures"
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

// MARK: fuzz-ical, fuzz-todotxt, fuzz-taskwarrior

let everyTask = must { try rich.tasks(TaskQuery(status: .all)) + other.tasks(TaskQuery(status: .all)) }
for name in FuzzFiles.list(fixtures + "/ical") where name.hasSuffix(".ics") {
    seed(.ical, name, FuzzFiles.read(fixtures + "/ical/" + name)!)
}
seed(.ical, "export.ics", InterchangeFile.icalendar.export(everyTask))
seed(.ical, "one-task.ics", InterchangeFile.icalendar.export([everyTask[0]]))
seed(.ical, "kept-properties.ics", """
    BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:STANDARD\r\n\
    DTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r\n\
    DTSTART:19700329T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:DAYLIGHT\r\nEND:VTIMEZONE\r\n\
    BEGIN:VTODO\r\nUID:not a task id@example.com\r\nSUMMARY:Folded \\, escaped\\; text\\nnext line and a long line th\r\n\
     at continues\r\nDUE;TZID=Europe/Paris:20260301T093000\r\nPRIORITY:2\r\nSTATUS:IN-PROCESS\r\nPERCENT-COMPLETE:40\r\n\
    CATEGORIES:a,b\\,c\r\nX-TASKLOG-META;KEY=k^'^n:v\r\nRRULE:FREQ=WEEKLY\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n\
    TRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VTODO\r\nBEGIN:VTODO\r\nUID:not a task id@example.com\r\n\
    RECURRENCE-ID;TZID=Europe/Paris:20260308T093000\r\nSUMMARY:moved\r\nEND:VTODO\r\nEND:VCALENDAR\r\n
    """)
seed(.todoTxt, "export.txt", InterchangeFile.todoTxt.export(everyTask))
seed(.todoTxt, "hand-written.txt", """
    (A) 2026-01-01 Call Mum +family @phone due:2026-02-01 list:home rating:5
    x 2026-01-03 2026-01-01 Pay rent pri:B uuid:rent-1 https://example.com/pay
    (D) Tidy up @home due:2026-03-01T09:30:00Z escaped%20value:a%25b\r
    x done with no dates
    """)
seed(.taskwarrior, "export.json", InterchangeFile.taskwarrior.export(everyTask))
seed(.taskwarrior, "hand-written.json", """
    [{"id":1,"uuid":"5d6b2a46-0b7a-4f43-9a8a-6a5f0e8b9c01","description":"Buy milk","status":"pending",
    "entry":"20260101T090000Z","modified":"20260102T090000Z","due":"20260110T000000Z","priority":"H",
    "project":"home","tags":["shop","dairy"],"annotations":[{"entry":"20260101T090000Z","description":"two litres"}],
    "urgency":9.8,"estimate":3,"reviewed":true,"note":"kept"},
    {"uuid":"6e7c3b57-1c8b-4054-8b9b-7b6f1f9cad12","description":"Old","status":"deleted","end":"20260103T101500Z"},
    {"uuid":"7f8d4c68-2d9c-4165-9cac-8c7020adbe23","tasklogid":"named-id","description":"Done","status":"completed",
    "due":"20260110T101500Z","priority":"L"}]
    """)

// MARK: fuzz-caldav-request

/// Request index (below 0x20), header flags, then the body (see FuzzHarness.davRequest).
func davSeed(_ name: String, _ request: UInt8, flags: UInt8 = 0, _ body: String = "") {
    seed(.caldavRequest, name, [request, flags] + Array(body.utf8))
}
let xmlHead = #"<?xml version="1.0" encoding="utf-8"?>"#
let davNS = #"xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/""#
let propfindBody = xmlHead + "<d:propfind \(davNS)><d:prop><d:resourcetype/><d:getetag/><d:displayname/><cs:getctag/>"
    + "<d:sync-token/><c:supported-calendar-component-set/><d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>"
davSeed("propfind-root.bin", 0, flags: 1, propfindBody)
davSeed("propfind-home.bin", 1, flags: 2, propfindBody)
davSeed("propfind-collection-allprop.bin", 2, flags: 2, xmlHead + "<d:propfind xmlns:d=\"DAV:\"><d:allprop/></d:propfind>")
davSeed("propfind-object-empty-body.bin", 3, flags: 1)
seed(.caldavRequest, "fuzzed-method-and-path.bin", [15, 1] + text("PROPFIND") + text("../principal/") + Array(propfindBody.utf8))
davSeed("report-query.bin", 4, flags: 2, xmlHead + "<c:calendar-query \(davNS)><d:prop><d:getetag/><c:calendar-data/></d:prop>"
    + "<c:filter><c:comp-filter name=\"VCALENDAR\"><c:comp-filter name=\"VTODO\"><c:time-range start=\"20260101T000000Z\" "
    + "end=\"20270101T000000Z\"/><c:prop-filter name=\"STATUS\"><c:text-match negate-condition=\"yes\">COMPLETED</c:text-match>"
    + "</c:prop-filter></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>")
davSeed("report-multiget.bin", 4, flags: 2, xmlHead + "<c:calendar-multiget \(davNS)><d:prop><d:getetag/><c:calendar-data/></d:prop>"
    + "<d:href>/dav/home/work/alpha.ics</d:href><d:href>/dav/home/work/missing.ics</d:href><d:href>/dav/home/_/beta.ics</d:href>"
    + "</c:calendar-multiget>")
davSeed("report-sync-initial.bin", 5, flags: 2, xmlHead + "<d:sync-collection \(davNS)><d:sync-token/><d:sync-level>1</d:sync-level>"
    + "<d:prop><d:getetag/></d:prop></d:sync-collection>")
davSeed("report-sync-token.bin", 4, flags: 2, xmlHead + "<d:sync-collection \(davNS)><d:sync-token>urn:tasklog:sync:AA</d:sync-token>"
    + "<d:sync-level>1</d:sync-level><d:prop><d:getetag/><c:calendar-data/></d:prop></d:sync-collection>")
let putBody = String(decoding: InterchangeFile.icalendar.export([everyTask[0]]), as: UTF8.self)
davSeed("put-new.bin", 6, flags: 8, putBody)
davSeed("put-over-alpha.bin", 7, flags: 4, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:alpha\r\nSUMMARY:renamed\r\n"
    + "STATUS:COMPLETED\r\nCATEGORIES:$(touch x),y\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
davSeed("mkcalendar.bin", 8, xmlHead + "<c:mkcalendar \(davNS)><d:set><d:prop><d:displayname>Fresh</d:displayname>"
    + "</d:prop></d:set></c:mkcalendar>")
davSeed("move-to-other-list.bin", 9)
davSeed("move-rename.bin", 9, flags: 0x10 | 4)
davSeed("move-other-host.bin", 9, flags: 0x20)
davSeed("delete.bin", 10, flags: 4)
davSeed("proppatch.bin", 11, xmlHead + "<d:propertyupdate xmlns:d=\"DAV:\"><d:set><d:prop><d:displayname>Work</d:displayname>"
    + "</d:prop></d:set></d:propertyupdate>")
davSeed("get.bin", 12)
davSeed("options.bin", 13)
davSeed("delete-collection.bin", 14)
seed(.caldavRequest, "raw-propfind.xml", propfindBody)
seed(.caldavRequest, "raw-vtodo.ics", putBody)

// MARK: fuzz-multistatus

/// Flags, the PROPFIND answer (u16 length) and the calendar-multiget answer (see FuzzHarness.multistatus).
func multistatusSeed(_ name: String, flags: UInt8 = 0, _ listing: String, _ objects: String) {
    seed(.multistatus, name, [flags] + u16le(listing.utf8.count) + Array(listing.utf8) + Array(objects.utf8))
}
func davResponse(_ href: String, _ props: String, status: String = "200 OK") -> String {
    "<d:response><d:href>\(href)</d:href><d:propstat><d:prop>\(props)</d:prop><d:status>HTTP/1.1 \(status)</d:status></d:propstat></d:response>"
}
func davAnswer(_ responses: [String]) -> String { xmlHead + "<d:multistatus \(davNS)>" + responses.joined() + "</d:multistatus>" }
func escapedXML(_ s: String) -> String {
    s.map { $0 == "&" ? "&amp;" : $0 == "<" ? "&lt;" : $0 == ">" ? "&gt;" : String($0) }.joined()
}
let bridgeListing = davAnswer([
    davResponse("/cal/", "<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:getetag>\"c\"</d:getetag>"),
    davResponse("/cal/milk.ics", "<d:getetag>\"1\"</d:getetag><d:resourcetype/>"),
    davResponse("/cal/other-1.ics", "<d:getetag>\"2\"</d:getetag><d:resourcetype/>"),
])
let bridgeObjects = davAnswer([
    davResponse("/cal/milk.ics", "<d:getetag>\"1\"</d:getetag><c:calendar-data>\(escapedXML(String(decoding: InterchangeFile.icalendar.export([everyTask[0]]), as: UTF8.self)))</c:calendar-data>"),
    davResponse("/cal/other-1.ics", "<d:getetag>\"2\"</d:getetag><c:calendar-data><![CDATA[\(String(decoding: InterchangeFile.icalendar.export([everyTask.last!]), as: UTF8.self))]]></c:calendar-data>"),
])
multistatusSeed("pull-two.bin", bridgeListing, bridgeObjects)
multistatusSeed("pull-and-push-twice.bin", flags: 3, bridgeListing, bridgeObjects)
multistatusSeed("push-to-empty.bin", flags: 1, davAnswer([davResponse("/cal/", "<d:resourcetype><d:collection/></d:resourcetype>")]), "")
multistatusSeed("missing-and-404.bin", davAnswer([
    davResponse("/cal/gone.ics", "<d:getetag>\"9\"</d:getetag>"), davResponse("/cal/x.ics", "<d:getetag/>", status: "404 Not Found"),
]), davAnswer(["<d:response><d:href>/cal/gone.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>"]))
multistatusSeed("foreign-hrefs.bin", davAnswer([
    davResponse("http://127.0.0.1:1/cal/a%20b.ics", "<d:getetag>W/\"3\"</d:getetag>"), davResponse("/other/evil.ics", "<d:getetag>\"4\"</d:getetag>"),
]), davAnswer([davResponse("/other/evil.ics", "<d:getetag>\"4\"</d:getetag><c:calendar-data>BEGIN:VCALENDAR\nEND:VCALENDAR</c:calendar-data>")]))

// MARK: fuzz-epoch

/// Every file under `dir` (one level of folders), as paths relative to it.
func files(under dir: String, _ prefix: String = "") -> [String] {
    FuzzFiles.list(dir).flatMap { name in
        FuzzFiles.isDirectory(dir + "/" + name) ? files(under: dir + "/" + name, prefix + name + "/") : [prefix + name]
    }
}

/// Count, flags, flipped bit's position, then per file its path and contents (see FuzzHarness.epoch).
func epochSeed(_ name: String, flags: UInt8 = 0, _ folder: String) {
    let paths = files(under: folder).filter { !$0.contains(".tmp") }.prefix(8)
    var out: [UInt8] = [UInt8(paths.count - 1), flags] + u16le(100)
    for (i, path) in paths.enumerated() {
        let contents = FuzzFiles.read(folder + "/" + path)!
        out += text(path) + (i == paths.count - 1 ? [] : u16le(contents.count)) + contents
    }
    seed(.epoch, name, out)
}
let sealedFolder = scratch + "/sealed"
FuzzFiles.makeDirectory(sealedFolder)
let sealer = store("sealer", ReplicaID(high: 0xc4c4_c4c4_c4c4_c4c4, low: 0xc4c4_c4c4_c4c4_c4c4))
let firstKeyring = must {
    _ = try sealer.add(NewTask(title: "Sealed task", priority: 1, tags: ["secret"], meta: [:]), id: TaskID("sealed-1")!)
    let k = try FolderKeyring.encrypt(folder: sealedFolder, store: sealer, passphrase: FuzzHarness.epochPassphrase, cost: FuzzHarness.cheapestCost)
    _ = try FolderSync(store: sealer, folder: sealedFolder, keyring: k).sync()
    return k
}
epochSeed("one-epoch.bin", sealedFolder)
epochSeed("one-epoch-flipped-segment.bin", flags: 4, sealedFolder)
epochSeed("one-epoch-flipped-epoch.bin", flags: 2, sealedFolder)
epochSeed("one-epoch-wrong-passphrase.bin", flags: 1, sealedFolder)
must {
    let k = try firstKeyring.rekey(folder: sealedFolder, store: sealer, passphrase: FuzzHarness.epochPassphrase, cost: FuzzHarness.cheapestCost)
    _ = try sealer.add(NewTask(title: "After the rekey", tags: [], meta: [:]), id: TaskID("sealed-2")!)
    _ = try FolderSync(store: sealer, folder: sealedFolder, keyring: k).sync()
}
epochSeed("two-epochs.bin", sealedFolder)
epochSeed("two-epochs-flipped-segments.bin", flags: 4, sealedFolder)

print("fuzz-seeds: wrote \(written) seeds into \(corpus)")
