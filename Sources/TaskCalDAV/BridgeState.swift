@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// What a CalDAV bridge remembers of one remote collection, in
/// `<store>/caldav/<XXH3 of the URL>.json`: for each object there, the task it holds, its
/// ETag, and the data both sides last agreed on (the base of the next three-way merge).
struct BridgeState: Sendable {
    struct Item: Equatable {
        var id: TaskID
        var etag: String
        var base: String
    }

    let path: String
    let url: String

    init(store: TaskStore, url: String) {
        let h = ContentHash.xxh3_128(Array(url.utf8))
        path = store.path + "/caldav/" + String(h.high, radix: 16) + ".json"
        self.url = url
    }

    /// The items by href; none before the first sync.
    func load() throws(CalDAVBridgeError) -> [String: Item] {
        let bytes: [UInt8]?
        do {
            bytes = try Posix.readFile(path)
        } catch {
            throw .state(path: path, reason: "\(error)")
        }
        guard let bytes else { return [:] }
        guard let value = try? JSONParser.parse(bytes), case .array(let entries)? = value["items"] else {
            throw .state(path: path, reason: "not the JSON this bridge writes")
        }
        var items: [String: Item] = [:]
        for e in entries {
            guard case .string(let href)? = e["href"], case .string(let id)? = e["id"], let taskID = TaskID(id),
                case .string(let etag)? = e["etag"], case .string(let base)? = e["base"]
            else { throw .state(path: path, reason: "an item lacks its href, id, etag or base") }
            items[href] = Item(id: taskID, etag: etag, base: base)
        }
        return items
    }

    /// Replaces the file atomically (fsynced), so a crash leaves the old state or the new.
    func save(_ items: [String: Item]) throws {
        var w = JSONWriter()
        w.raw("{\"url\":")
        w.string(url)
        w.raw(",\"items\":[")
        for (i, (href, item)) in items.sorted(by: { $0.key < $1.key }).enumerated() {
            w.raw(i == 0 ? "\n{\"href\":" : ",\n{\"href\":")
            w.string(href)
            w.raw(",\"id\":")
            w.id(item.id)
            w.raw(",\"etag\":")
            w.string(item.etag)
            w.raw(",\"base\":")
            w.string(item.base)
            w.raw("}")
        }
        w.raw("\n]}\n")
        try Posix.makeDirectories(Posix.directory(of: path))
        try Posix.writeAtomically(path, w.bytes)
    }
}
