@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel

/// One logical operation of a workload, as the peer harness defines them.
enum LogicalOp: Equatable {
    case create(id: TaskID, title: String, priority: UInt8, time: UInt64)
    case set(id: TaskID, write: FieldWrite, time: UInt64)
    case delete(id: TaskID, time: UInt64)

    var time: UInt64 {
        switch self {
        case .create(_, _, _, let t), .set(_, _, let t), .delete(_, let t): t
        }
    }
}

/// A seeded generator of the W1 shape: N creates, then U updates of uniformly random tasks
/// (title 30%, done 30% toggles, priority 20%, due 10%, notes 10%), ~1 s apart.
struct W1Generator {
    var rng: SplitMix64

    static let baseMilliseconds: UInt64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    static let verbs = "buy call email fix review write plan book clean pay update prepare send check renew cancel order finish draft submit read file install replace repair test deploy merge research return invite confirm water feed print sign scan upload".split(separator: " ").map(String.init)
    static let nouns = "groceries milk bread dentist doctor invoice report slides budget taxes insurance passport car bike garage kitchen laundry plants dog newsletter presentation meeting agenda contract rent bill laptop phone printer tickets hotel flight gift package library books homework project proposal roadmap release tests pipeline survey receipts calendar".split(separator: " ").map(String.init)
    static let links = "for with before after about from at on to the my our new old weekly".split(separator: " ").map(String.init)
    static let noteWords = "remember to ask about the price and check whether the store is open on sunday also bring the receipt so they can compare it call back if nobody answers maybe next week is better the deadline moved again so double check before sending anything use the shared folder".split(separator: " ").map(String.init)

    mutating func phrase(_ target: Int, _ first: [String], _ rest: [String], _ links: [String]) -> String {
        var s = first[Int(rng.next() % UInt64(first.count))]
        while s.count < target {
            let pool = rng.next() % 4 == 0 ? links : rest
            s += " " + pool[Int(rng.next() % UInt64(pool.count))]
        }
        return s.prefix(1).uppercased() + s.dropFirst()
    }

    mutating func make(tasks n: Int, updates u: Int) -> [LogicalOp] {
        var ops: [LogicalOp] = []
        ops.reserveCapacity(n + u)
        forEach(tasks: n, updates: u) { ops.append($0) }
        return ops
    }

    /// The same stream as ``make(tasks:updates:)``, one operation at a time (for sizes that
    /// do not fit in memory as a list).
    mutating func forEach(tasks n: Int, updates u: Int, _ body: (LogicalOp) throws -> Void) rethrows {
        var time = W1Generator.baseMilliseconds
        var ids: [TaskID] = []
        ids.reserveCapacity(n)
        for _ in 0..<n {
            let id = TaskID.random(using: &rng)
            ids.append(id)
            try body(.create(id: id, title: phrase(22 + Int(rng.next() % 11), Self.verbs, Self.nouns, Self.links),
                             priority: UInt8(rng.next() % 4), time: time))
            time += 900 + rng.next() % 200
        }
        var done: [TaskID: Bool] = [:]
        for _ in 0..<u {
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            let pick = rng.next() % 100
            let write: FieldWrite
            switch pick {
            case 0..<30: write = .title(phrase(22 + Int(rng.next() % 11), Self.verbs, Self.nouns, Self.links))
            case 30..<60:
                let v = !(done[id] ?? false)
                done[id] = v
                write = .done(v)
            case 60..<80: write = .priority(UInt8(rng.next() % 4))
            case 80..<90: write = .due(.date(days: Int64(W1Generator.baseMilliseconds / 86_400_000 + rng.next() % 366)))
            default: write = .notes(phrase(72 + Int(rng.next() % 15), Self.noteWords, Self.noteWords, Self.noteWords))
            }
            try body(.set(id: id, write: write, time: time))
            time += 900 + rng.next() % 200
        }
    }
}

/// Reads the `ops.jsonl` that `peer_baseline.py --dump DIR` writes (the identical W1 stream).
enum OpsFile {
    static func load(_ bytes: [UInt8]) throws -> [LogicalOp] {
        var ops: [LogicalOp] = []
        var start = 0
        for i in 0..<bytes.count where bytes[i] == 10 {
            if i > start { ops.append(try parse(Array(bytes[start..<i]))) }
            start = i + 1
        }
        return ops
    }

    static func parse(_ line: [UInt8]) throws -> LogicalOp {
        let v = try JSONParser.parse(line)
        guard case .string(let op)? = v["op"], case .number(let ts)? = v["ts"], case .string(let idText)? = v["id"],
            let id = TaskID(idText)
        else { throw BenchError("bad line in ops.jsonl") }
        let time = UInt64(ts)
        switch op {
        case "create":
            guard case .string(let title)? = v["title"], case .number(let p)? = v["priority"] else { throw BenchError("bad create") }
            return .create(id: id, title: title, priority: UInt8(p), time: time)
        case "del":
            return .delete(id: id, time: time)
        default:
            guard case .string(let field)? = v["f"], let value = v["v"] else { throw BenchError("bad set") }
            let write: FieldWrite
            switch (field, value) {
            case ("title", .string(let s)): write = .title(s)
            case ("notes", .string(let s)): write = .notes(s)
            case ("done", .bool(let b)): write = .done(b)
            case ("priority", .number(let n)): write = .priority(UInt8(n))
            case ("due", .number(let ms)):
                let m = Int64(ms)
                write = .due(m % 86_400_000 == 0 ? .date(days: m / 86_400_000) : .instant(milliseconds: m))
            default: throw BenchError("bad field \(field)")
            }
            return .set(id: id, write: write, time: time)
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A small, fast, seeded generator.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
