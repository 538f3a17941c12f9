@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
import TestSupport
import Testing

@Suite struct JSONTests {
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue { try JSONParser.parse(text) }

    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    // MARK: Parser

    @Test func parserAcceptsValidDocuments() throws {
        #expect(try Self.parse("null") == .null)
        #expect(try Self.parse(" \t\r\n true \n") == .bool(true))
        #expect(try Self.parse("false") == .bool(false))
        #expect(try Self.parse("0") == .number(0))
        #expect(try Self.parse("-0") == .number(-0.0))
        #expect(try Self.parse("-12.5e+2") == .number(-1250))
        #expect(try Self.parse("1E-3") == .number(0.001))
        #expect(try Self.parse("123456789012") == .number(123_456_789_012))
        #expect(try Self.parse(#""""#) == .string(""))
        #expect(try Self.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try Self.parse(#""\u00e9\u00C9""#) == .string("éÉ"))
        #expect(try Self.parse(#""\ud83d\ude00 😀""#) == .string("😀 😀"))
        #expect(try Self.parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try Self.parse("[]") == .array([]))
        #expect(try Self.parse("{}") == .object([]))
        #expect(try Self.parse(#"[1, "two", [null], {"k": false}]"#)
            == .array([.number(1), .string("two"), .array([.null]), .object([(key: "k", value: .bool(false))])]))
        let obj = try Self.parse(#" { "b" : 1 , "a" : { "c" : [ ] } , "d" : 2 } "#)
        guard case .object(let members) = obj else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["b", "a", "d"], "keys keep document order")
        #expect(obj["b"] == .number(1) && obj["a"]?["c"] == .array([]) && obj["zz"] == nil)
        // A key given twice is ambiguous, so it is refused.
        #expect(throws: JSONParseError.self) { try Self.parse(#"{"b":1,"b":2}"#) }
        #expect(try Self.parse(Self.nested(JSONParser.maxDepth)) != .null)
        #expect(try Self.parse("{\"a\":" + Self.nested(JSONParser.maxDepth - 1) + "}") != .null)
    }

    @Test(arguments: [
        "", " ", "[1,]", "[,1]", "[1 2]", #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":}"#, "{1:2}", "{'a':1}", #"{"a":1"#, "[1",
        "01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "0x10", "NaN", "Infinity", "tru", "nul", "True", "[true false]",
        #""abc"#, #""\x""#, #""\u12""#, #""\u12g4""#, #""\'""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
        #""\ud800x""#, #""\ud800\ud800""#, "\"a\u{01}b\"", "\"tab\there\"", "\"line\nbreak\"", "\"\u{1F}\"",
        "1 2", "{} {}", "[] x", "\u{FEFF}1",
    ])
    func parserRejectsMalformedDocuments(_ text: String) {
        #expect(throws: JSONParseError.self, "\(text.debugDescription)") { try Self.parse(text) }
    }

    @Test func parserRejectsNestingDeeperThan64() {
        #expect(throws: JSONParseError.self) { try Self.parse(Self.nested(JSONParser.maxDepth + 1)) }
        #expect(throws: JSONParseError.self) { try Self.parse(String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)) }
        #expect(throws: JSONParseError.self) { try Self.parse(String(repeating: "[", count: 100_000)) }
    }

    @Test func parserRejectsInvalidUTF8AndReportsTheOffset() throws {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC3, 0x22]) }
        do {
            _ = try Self.parse(#"{"a": [1, 2,]}"#)
            Issue.record("accepted a trailing comma")
        } catch {
            #expect(error.offset == 12)
            #expect(error.description.hasPrefix("invalid JSON at byte 12"))
        }
    }

    // MARK: Writer

    static func written(_ s: String) -> String {
        var w = JSONWriter()
        w.string(s)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    @Test func writerEscapesStrings() {
        #expect(Self.written("plain") == #""plain""#)
        #expect(Self.written("q\"b\\s/") == #""q\"b\\s/""#)
        #expect(Self.written("\n\r\t") == #""\n\r\t""#)
        #expect(Self.written("\u{0}\u{1}\u{8}\u{C}\u{1F}") == #""\u0000\u0001\u0008\u000c\u001f""#)
        #expect(Self.written("\u{7F} é 😀 \u{2028}") == "\"\u{7F} é 😀 \u{2028}\"")
        #expect(Self.written("") == #""""#)
    }

    @Test func writtenStringsParseBackToThemselves() throws {
        try forEachSeed { seed, rng in
            var scalars = String.UnicodeScalarView()
            for _ in 0..<rng.int(0...24) {
                let v: UInt32 =
                    switch rng.int(0...4) {
                    case 0: UInt32(rng.int(0...0x1F))
                    case 1: UInt32(rng.pick(Array("\"\\/ab".unicodeScalars)).value)
                    case 2: UInt32(rng.int(0x20...0x7F))
                    case 3: UInt32(rng.int(0x80...0xD7FF))
                    default: UInt32(rng.int(0x10000...0x10FFFF))
                    }
                scalars.append(Unicode.Scalar(v)!)
            }
            let s = String(scalars)
            let parsed = try Self.parse(Self.written(s))
            #expect(parsed == .string(s), "seed \(seed)")
        }
    }

    @Test func writerEscapesACharacterAtEveryPlaceInALongPlainString() {
        for length in 1...40 {
            for place in 0..<length {
                for (special, escaped) in [("\u{0}", #"\u0000"#), ("\u{1F}", #"\u001f"#), ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#)] {
                    let plain = (0..<length).map { i in String(UnicodeScalar(UInt8(65 + i % 26))) }
                    var s = plain
                    s[place] = special
                    var expected = plain
                    expected[place] = escaped
                    #expect(Self.written(s.joined()) == "\"" + expected.joined() + "\"", "length \(length), place \(place)")
                }
            }
        }
    }

    @Test func writerFormatsUUIDIdsAsTheirCanonicalText() {
        forEachSeed { seed, rng in
            let id = TaskID(uuidHigh: rng.next(), low: rng.next())
            var w = JSONWriter()
            w.id(id)
            #expect(String(decoding: w.bytes, as: UTF8.self) == "\"" + id.rawValue + "\"", "seed \(seed)")
        }
    }

    @Test func writerWritesRepeatedAndAlternatingTimesAlike() {
        let times: [Int64] = [1_767_225_600_000, 1_767_225_600_000, 1_767_312_000_500, 1_767_225_600_000, 0, -1, 253_402_300_799_999]
        var w = JSONWriter()
        for t in times {
            w.time(Timestamp(physical: UInt64(max(t, 0))))
            w.due(.instant(milliseconds: t))
            w.due(.date(days: t / 86_400_000))
        }
        var expected = ""
        for t in times {
            expected += "\"" + CivilTime.instantString(milliseconds: max(t, 0)) + "\""
            expected += "\"" + Due.instant(milliseconds: t).description + "\""
            expected += "\"" + Due.date(days: t / 86_400_000).description + "\""
        }
        #expect(String(decoding: w.bytes, as: UTF8.self) == expected)
    }

    static let created = Timestamp(physical: 1_767_225_600_000)  // 2026-01-01T00:00:00.000Z
    static let completed = Timestamp(physical: 1_767_312_000_500, logical: 3)  // 2026-01-02T00:00:00.500Z

    static func knownState() -> TaskState {
        let t = TaskID("task3")!
        let r = ReplicaID(high: 7, low: 7)
        var s = TaskState()
        let first = Commit(
            firstSeq: 1, time: created,
            operations: [
                .add(t), .set(t, .title("Buy \"milk\"")), .set(t, .notes("2%\nfull fat")), .set(t, .done(false)),
                .set(t, .priority(2)), .set(t, .due(.date(days: 20_513))), .set(t, .list("home")),
                .set(t, .meta(key: "k2", value: "v2")), .set(t, .meta(key: "k1", value: "v1")),
                .set(t, .meta(key: "k0", value: nil)), .addTag(t, "b"), .addTag(t, "a\tb"),
                .add(TaskID("plain")!),
            ])
        let second = Commit(firstSeq: 14, time: completed, operations: [.set(t, .done(true))])
        let ok1 = s.apply(first, from: r)
        let ok2 = s.apply(second, from: r)
        precondition(ok1 && ok2)
        return s
    }

    static func json(_ item: TaskItem) -> String {
        var w = JSONWriter()
        w.task(item)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    @Test func taskJSONForAKnownTaskIsExact() throws {
        let item = try #require(Self.knownState().task(TaskID("task3")!))
        let expected =
            #"{"id":"task3","title":"Buy \"milk\"","notes":"2%\nfull fat","done":true,"#
            + #""completedAt":"2026-01-02T00:00:00.500Z","priority":2,"due":"2026-03-01","tags":["a\tb","b"],"#
            + #""list":"home","meta":{"k1":"v1","k2":"v2"},"createdAt":"2026-01-01T00:00:00.000Z","#
            + #""updatedAt":"2026-01-02T00:00:00.500Z"}"#
        #expect(Self.json(item) == expected)
    }

    @Test func taskJSONOfABareTaskUsesNulls() throws {
        let item = try #require(Self.knownState().task(TaskID("plain")!))
        #expect(
            Self.json(item)
                == #"{"id":"plain","title":"","notes":null,"done":false,"completedAt":null,"priority":null,"due":null,"#
                + #""tags":[],"list":null,"meta":{},"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}"#)
    }

    @Test func taskArrayPutsOneTaskPerLine() throws {
        let s = Self.knownState()
        let items = s.allTasks.sorted { $0.id < $1.id }
        var w = JSONWriter()
        w.taskArray(items)
        #expect(String(decoding: w.bytes, as: UTF8.self) == "[\n" + Self.json(items[0]) + ",\n" + Self.json(items[1]) + "\n]")
        var empty = JSONWriter()
        empty.taskArray([])
        #expect(empty.bytes == Array("[]".utf8))
    }

    @Test func taskJSONParsesBackForRandomStates() throws {
        try forEachSeed(100) { seed, rng in
            let h = Gen.history(&rng)
            for item in Gen.state(applying: h.sequential).allTasks {
                let v = try Self.parse(Self.json(item))
                #expect(v["id"] == .string(item.id.rawValue), "seed \(seed)")
                #expect(v["title"] == .string(item.title), "seed \(seed)")
                #expect(v["notes"] == item.notes.map(JSONValue.string) ?? .null, "seed \(seed)")
                #expect(v["done"] == .bool(item.isDone), "seed \(seed)")
                #expect(v["priority"] == item.priority.map { .number(Double($0)) } ?? .null, "seed \(seed)")
                #expect(v["due"] == item.due.map { .string($0.description) } ?? .null, "seed \(seed)")
                #expect(v["tags"] == .array(item.tags.map(JSONValue.string)), "seed \(seed)")
                #expect(v["list"] == item.list.map(JSONValue.string) ?? .null, "seed \(seed)")
                guard case .object(let meta)? = v["meta"] else {
                    Issue.record("meta is not an object, seed \(seed)")
                    continue
                }
                #expect(Dictionary(uniqueKeysWithValues: meta.map { ($0.key, $0.value) }) == item.meta.mapValues(JSONValue.string), "seed \(seed)")
                #expect(v["createdAt"] == .string(isoTime(item.createdAt)), "seed \(seed)")
            }
        }
    }
}
