@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskStore

/// The memory of a sync with a storage that keeps a change marker, kept in the store so that
/// a later process (each one-shot `tasklog sync`) starts from it: one text file per folder,
/// `<store>/folder-memory/<digest of the folder's location>`, replaced whole (write-temp and
/// rename) after a sync that changed it. The file is a cache: a missing, damaged, oversized
/// or foreign one is ignored, which costs only requests (the next sync lists).
extension FolderMemory {
    /// The most a memory file holds; a larger memory keeps only its listing and mark.
    static let largestFile = 4 << 20
    /// The first line of a memory file, before the folder's location.
    private static let magic = "tasklog-folder-memory 1 "

    /// Where the store at `store` keeps the memory of the folder at `location`.
    static func path(store: String, location: String) -> String {
        let hash = ContentHash.xxh3_128(Array(location.utf8))
        return Posix.join(Posix.join(store, "folder-memory"), hex64(hash.high) + hex64(hash.low))
    }

    /// Reads the memory kept at `path` the first time it is asked. A file that cannot be used
    /// loads nothing, and is rewritten once the storage turns out to keep a marker.
    func loadOnce(from path: String, location: String) {
        let first = state.withLock { s in
            defer { s.loaded = true }
            return !s.loaded
        }
        guard first, let size = Posix.fileSize(path), size <= Self.largestFile,
            let bytes = try? Posix.readFile(path), bytes.count <= Self.largestFile,
            let kept = Self.decode(bytes, location: location)
        else { return }
        state.withLock { s in
            (s.agreed, s.heads, s.listing, s.owesMark) = (kept.agreed, kept.heads, kept.listing, kept.owesMark)
            (s.persists, s.dirty) = (true, false)
        }
    }

    /// Keeps this memory in the store from now on: the storage keeps a change marker.
    func persist() {
        state.withLock { s in
            guard !s.persists else { return }
            (s.persists, s.dirty) = (true, true)
        }
    }

    /// Writes the memory to `path` when it is kept in the store and changed since it was read
    /// or written. A failure to write costs only requests: a later process lists.
    func saveIfChanged(to path: String, location: String) {
        let snapshot: State? = state.withLock { s in
            guard s.persists, s.dirty else { return nil }
            s.dirty = false
            return s
        }
        guard let snapshot else { return }
        do {
            try Posix.makeDirectories(Posix.directory(of: path))
            try Posix.writeAtomically(path, Self.encode(snapshot, location: location))
        } catch {
            state.withLock { $0.dirty = true }
        }
    }

    /// Lines of hex fields: the location, the listing, the owed mark, agreed objects and
    /// heads (dropped when they would pass ``largestFile``), and a checksum of all before it.
    static func encode(_ s: State, location: String) -> [UInt8] {
        var text = magic + hex(location) + "\n"
        text += s.listing.map { "listing \(hex($0.marker)) \(hex($0.version)) \($0.at)\n" } ?? "listing -\n"
        text += "owes \(s.owesMark ? 1 : 0)\n"
        var objects = s.agreed.sorted().map { "agreed \(hex($0))\n" }.joined()
        objects += s.heads.sorted { $0.key < $1.key }.map { "head \(hex($0.key)) \(Sodium.hex($0.value))\n" }.joined()
        if text.utf8.count + objects.utf8.count + 64 > largestFile { objects = "" }
        text += objects
        let sum = ContentHash.xxh3_128(Array(text.utf8))
        return Array((text + "sum \(hex64(sum.high))\(hex64(sum.low))\n").utf8)
    }

    /// The memory `bytes` hold for the folder at `location`; nil unless every line is sound.
    static func decode(_ bytes: [UInt8], location: String) -> State? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n"), let sumLine = text.dropLast().lastIndex(of: "\n").map({ text.index(after: $0) }) else { return nil }
        let body = text[..<sumLine]
        let sum = ContentHash.xxh3_128(Array(body.utf8))
        guard text[sumLine...] == "sum \(hex64(sum.high))\(hex64(sum.low))\n" else { return nil }
        let lines = body.split(separator: "\n")
        guard lines.first == Substring(magic + hex(location)) else { return nil }
        var s = State()
        for line in lines.dropFirst() {
            guard read(line.split(separator: " ", omittingEmptySubsequences: false), into: &s) else { return nil }
        }
        return s
    }

    /// Takes one line's fields into `s`; false when the line is not sound.
    private static func read(_ fields: [Substring], into s: inout State) -> Bool {
        let text = { (i: Int) in unhex(fields[i]).map { String(decoding: $0, as: UTF8.self) } }
        switch (fields.first, fields.count) {
        case ("listing", 2): return fields[1] == "-"
        case ("listing", 4):
            guard let marker = text(1), let version = text(2), let at = UInt64(fields[3]) else { return false }
            s.listing = Listing(marker: marker, version: version, at: at)
        case ("owes", 2):
            guard fields[1] == "0" || fields[1] == "1" else { return false }
            s.owesMark = fields[1] == "1"
        case ("agreed", 2):
            guard let key = text(1) else { return false }
            s.agreed.insert(key)
        case ("head", 3):
            guard let key = text(1), let head = unhex(fields[2]), head.count <= 12 else { return false }
            s.heads[key] = head
        default: return false
        }
        return true
    }

    private static func hex(_ text: String) -> String { Sodium.hex(Array(text.utf8)) }

    private static func hex64(_ v: UInt64) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func unhex(_ field: Substring) -> [UInt8]? {
        let digits = Array(field.utf8)
        guard digits.count % 2 == 0 else { return nil }
        let nibble = { (c: UInt8) -> UInt8? in
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
