/// The registers of a task beyond its core fields (Spec/crdt.md, "Subtasks, dependencies and
/// dates"). Each is a last-writer-wins register kept under a reserved meta key, so every
/// build relays it; dependencies are elements of the task's tag OR-set under a reserved prefix.
public enum PlanningKey {
    /// The parent task's id.
    public static let parent = "parent"
    /// The date or time before which the task is hidden from `list` and `top`.
    public static let wait = "wait"
    /// The date or time the task is planned for.
    public static let scheduled = "scheduled"
    /// The instant work on the task started; absent when it is not in progress.
    public static let start = "start"
    /// The recurrence rule's text (``RecurrenceRule/text``).
    public static let recur = "recur"
    /// The id of the first task of a recurring series.
    public static let series = "series"
    /// The meta keys that hold these registers: shown and exchanged as fields, never as meta.
    public static let all: Set<String> = [parent, wait, scheduled, start, recur, series]

    /// The prefix that marks a tag-set element as a dependency on the task whose id follows.
    /// No tag a person writes can start with it (``isReservedTag(_:)``).
    public static let dependencyPrefix = "\u{1}depends:"

    /// Whether `tag` is a dependency element rather than a tag.
    public static func isReservedTag(_ tag: String) -> Bool { tag.utf8.first == 1 }

    /// The tag-set element that records a dependency on `id`.
    public static func dependencyElement(_ id: TaskID) -> String { dependencyPrefix + id.rawValue }

    /// The task whose canonical text `text` is, or nil.
    public static func canonicalID(_ text: String) -> TaskID? {
        TaskID(text).flatMap { $0.rawValue == text ? $0 : nil }
    }

    /// The task a dependency element names, or nil if `tag` is none.
    public static func dependency(inElement tag: String) -> TaskID? {
        tag.hasPrefix(dependencyPrefix) ? TaskID(String(tag.dropFirst(dependencyPrefix.count))) : nil
    }
}

extension TaskItem {
    /// The parent task, if this is a subtask. Only an id's canonical text (``TaskID/rawValue``)
    /// names a parent, so a saved task can be tested on its bytes.
    public var parent: TaskID? { meta[PlanningKey.parent].flatMap(PlanningKey.canonicalID) }
    /// Before this the task is hidden from `list` and `top`.
    public var waitUntil: Due? { meta[PlanningKey.wait].flatMap(Due.init(parsing:)) }
    /// When the task is planned for.
    public var scheduled: Due? { meta[PlanningKey.scheduled].flatMap(Due.init(parsing:)) }
    /// When work on the task started; nil when it is not in progress.
    public var startedAt: Due? { meta[PlanningKey.start].flatMap(Due.init(parsing:)) }
    /// How the task repeats, if it does.
    public var recurrence: RecurrenceRule? { meta[PlanningKey.recur].flatMap(RecurrenceRule.init) }
    /// The meta entries that are not planning registers: what interchange keeps as extra data.
    public var userMeta: [String: String] { meta.filter { !PlanningKey.all.contains($0.key) } }
}

extension TaskItem {
    /// Splits a raw tag set into the tags a person sees and the dependencies, each in the
    /// order given.
    static func splitting(_ elements: [String]) -> (tags: [String], dependencies: [TaskID]) {
        guard elements.contains(where: PlanningKey.isReservedTag) else { return (elements, []) }
        return (
            elements.filter { !PlanningKey.isReservedTag($0) },
            elements.compactMap(PlanningKey.dependency(inElement:))
        )
    }
}
