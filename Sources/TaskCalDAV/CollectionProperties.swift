import Synchronization
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// The collections made with MKCALENDAR and the properties clients set on collections, kept
/// in `<store>/caldav/collections.json`. The store has no synced place for list metadata, so
/// this file stays on this machine (Spec/interop.md, "CalDAV server").
final class CollectionProperties: Sendable {
    /// One collection's record: whether a client made it, and its properties by name.
    struct Entry: Equatable {
        var made = false
        var values: [PropertyName: String] = [:]
    }

    /// The properties a client may set, each with what makes a value acceptable.
    static let settable: [PropertyName: @Sendable (String) -> Bool] = [
        PropertyName(NS.dav, "displayname"): { !$0.isEmpty },
        PropertyName(NS.caldav, "calendar-description"): { _ in true },
        PropertyName(NS.apple, "calendar-color"): isColour,
        PropertyName(NS.apple, "calendar-order"): { $0.utf8.count <= 9 && !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } },
    ]
    /// The bytes one value may take.
    static let maxValueBytes = 1024
    /// The collections with a record at most.
    static let maxEntries = 1000

    let path: String
    private let entries = Mutex<[String?: Entry]?>(nil)

    init(store: TaskStore) { path = store.path + "/caldav/collections.json" }

    /// `#RRGGBB` or `#RRGGBBAA` in hexadecimal digits, or a CSS colour name (`blue`): ASCII
    /// letters, at most 20.
    static func isColour(_ value: String) -> Bool {
        let u = value.utf8
        if u.first != 0x23 { return (1...20).contains(u.count) && u.allSatisfy { (0x41...0x5A).contains($0 & 0xDF) } }
        return (u.count == 7 || u.count == 9)
            && u.dropFirst().allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A list's record (a list of nil is the collection of tasks with no list).
    func entry(_ list: String?) throws(DAVRefusal) -> Entry { try loaded()[list] ?? Entry() }

    /// The lists made with MKCALENDAR.
    func madeLists() throws(DAVRefusal) -> [String] { try loaded().compactMap { $0.value.made ? $0.key : nil } }

    /// Replaces a list's record (none when empty) and saves the file atomically.
    func replace(_ list: String?, with entry: Entry) throws(DAVRefusal) {
        var all = try loaded()
        all[list] = entry == Entry() ? nil : entry
        guard all.count <= Self.maxEntries else {
            throw DAVRefusal(status: 507, message: "at most \(Self.maxEntries) collections may have properties; delete one first")
        }
        do {
            try Posix.makeDirectories(Posix.directory(of: path))
            try Posix.writeAtomically(path, Self.encoded(all))
        } catch {
            throw DAVRefusal(status: 500, message: "cannot save \(path): \(error)")
        }
        entries.withLock { $0 = all }
    }

    private func loaded() throws(DAVRefusal) -> [String?: Entry] {
        if let known = entries.withLock({ $0 }) { return known }
        let read: [String?: Entry]
        do {
            read = try Posix.readFile(path).map(Self.decoded) ?? [:]
        } catch {
            throw DAVRefusal(status: 500, message: "cannot read \(path): \(error); move it away to start afresh")
        }
        entries.withLock { $0 = read }
        return read
    }

    struct Unreadable: Error, CustomStringConvertible {
        var description: String { "not the JSON this server writes" }
    }

    static func decoded(_ bytes: [UInt8]) throws -> [String?: Entry] {
        guard case .array(let items)? = try JSONParser.parse(bytes)["collections"] else { throw Unreadable() }
        var all: [String?: Entry] = [:]
        for item in items {
            var entry = Entry()
            if case .bool(let made)? = item["made"] { entry.made = made }
            guard case .array(let values)? = item["properties"] else { throw Unreadable() }
            for v in values {
                guard case .string(let ns)? = v["namespace"], case .string(let name)? = v["name"], case .string(let value)? = v["value"]
                else { throw Unreadable() }
                entry.values[PropertyName(ns, name)] = value
            }
            if case .string(let list)? = item["list"] { all[list] = entry } else { all[nil] = entry }
        }
        return all
    }

    static func encoded(_ all: [String?: Entry]) -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"collections\":[")
        for (i, (list, entry)) in all.sorted(by: { ($0.key ?? "") < ($1.key ?? "") }).enumerated() {
            w.raw(i == 0 ? "\n{\"list\":" : ",\n{\"list\":")
            if let list { w.string(list) } else { w.raw("null") }
            w.raw(entry.made ? ",\"made\":true,\"properties\":[" : ",\"made\":false,\"properties\":[")
            for (j, (name, value)) in entry.values.sorted(by: { $0.key.name < $1.key.name }).enumerated() {
                w.raw(j == 0 ? "{\"namespace\":" : ",{\"namespace\":")
                w.string(name.namespace)
                w.raw(",\"name\":")
                w.string(name.name)
                w.raw(",\"value\":")
                w.string(value)
                w.raw("}")
            }
            w.raw("]}")
        }
        w.raw("\n]}\n")
        return w.bytes
    }
}
