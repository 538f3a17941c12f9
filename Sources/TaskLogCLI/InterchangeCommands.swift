@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// The file formats `export` writes and `import` reads.
enum InterchangeFormat: String, CaseIterable {
    case json, ics, todotxt, taskwarrior

    /// The format `--format` names, or one guessed from the file's name and content.
    static func chosen(_ named: InterchangeFormat?, file: String?, content: [UInt8]?) -> InterchangeFormat {
        if let named { return named }
        if let file, file.hasSuffix(".txt") { return .todotxt }
        if let file, file.hasSuffix(".ics") { return .ics }
        guard let content, let start = content.firstIndex(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return .json }
        let first = content[start]
        if String(decoding: content[start...].prefix(15), as: UTF8.self).uppercased() == "BEGIN:VCALENDAR" { return .ics }
        guard first == UInt8(ascii: "[") || first == UInt8(ascii: "{") else { return .todotxt }
        // Taskwarrior's export names every task by "uuid" and "description"; the task form by "id" and "title".
        return String(decoding: content.prefix(4096), as: UTF8.self).contains("\"description\"") ? .taskwarrior : .json
    }
}

/// `export` and `import`: every task in JSON or todo.txt, and back.
extension Context {
    func export() throws -> Int32 {
        _ = try positionals(0...0, "")
        let format = try arguments.value(Options.exportFormat) ?? .json
        let tasks = try readableStore().map { try $0.tasks(TaskQuery(status: .all)) } ?? []
        switch format {
        case .json:
            var w = JSONWriter()
            w.taskArray(tasks)
            w.raw("\n")
            Output.bytes(w.bytes)
        case .ics:
            Output.bytes(Array(ICalendar.calendar(of: tasks).utf8))
        case .todotxt:
            Output.bytes(Array(TodoTxt.text(of: tasks).utf8))
        case .taskwarrior:
            Output.bytes(TaskwarriorJSON.export(tasks))
        }
        return 0
    }

    func importTasks() throws -> Int32 {
        let file = try positionals(1...1, "FILE")[0]
        let bytes = try readInput(file)
        let format = InterchangeFormat.chosen(try arguments.value(Options.importFormat), file: file == "-" ? nil : file, content: bytes)
        let store = try writableStore()
        let patches: [TaskPatch]
        switch format {
        case .json: patches = try jsonPatches(bytes, file: file)
        case .ics: patches = try filePatches(.icalendar, bytes, file: file, store: store)
        case .todotxt: patches = try filePatches(.todoTxt, bytes, file: file, store: store)
        case .taskwarrior: patches = try filePatches(.taskwarrior, bytes, file: file, store: store)
        }
        let result: (ids: [TaskID], created: Int, changed: Int, next: [TaskID])
        do {
            result = try store.apply(patches)
        } catch StoreError.invalidArgument(let why) {
            throw CommandFailure(message: "\(file): \(why); nothing was imported")
        }
        let unchanged = result.ids.count - result.created - result.changed
        let next = result.next.isEmpty ? "" : "; \(Render.count(result.next.count, "next occurrence")) made"
        Output.line("imported \(Render.count(result.ids.count, "task")): \(result.created) created, \(result.changed) changed, \(unchanged) unchanged\(next)")
        return 0
    }

    private func jsonPatches(_ bytes: [UInt8], file: String) throws -> [TaskPatch] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw CommandFailure(message: "\(file): \(error); nothing was imported")
        }
        guard case .array(let items) = value else {
            throw CommandFailure(message: "\(file): expected a JSON array of tasks; nothing was imported")
        }
        var patches: [TaskPatch] = []
        for (i, item) in items.enumerated() {
            do {
                patches.append(try TaskPatch(json: item))
            } catch {
                throw CommandFailure(message: "\(file): task \(i + 1): \(error); nothing was imported")
            }
        }
        return patches
    }

    /// The tasks of an iCalendar, todo.txt or Taskwarrior file as patches over the store's.
    private func filePatches(_ format: InterchangeFile, _ bytes: [UInt8], file: String, store: TaskStore) throws -> [TaskPatch] {
        do {
            return try format.patches(bytes, today: TaskStore.localToday()) { ids in try store.tasks(TaskQuery(status: .all, ids: ids)) }
        } catch let error as InterchangeError {
            throw CommandFailure(message: "\(file): \(error); nothing was imported")
        }
    }
}
