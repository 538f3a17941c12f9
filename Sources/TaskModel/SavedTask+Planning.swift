@_spi(Engine) import CRDTCore

/// What ranking by urgency reads of a saved task in place, without making it an item.
extension SavedTask {
    package var savedPriority: UInt8? { priority }
    package var savedDue: Due? { due }
    package var savedCreatedAt: Timestamp { createdAt }

    /// The value of the meta entry `key` as a due (a planning register), or nil.
    package func savedDue(meta key: String) -> Due? {
        metaValue(key).flatMap { Due(parsing: String(decoding: $0, as: UTF8.self)) }
    }

    /// The tasks this one depends on (the reserved elements of its tag set).
    package var savedDependencies: [TaskID] {
        tags.compactMap { $0.first == 1 ? PlanningKey.dependency(inElement: String(decoding: $0, as: UTF8.self)) : nil }
    }
}

/// What a listing's filter tests of a saved task in place (Spec/cli.md, "Listing"), with the
/// results it would give the task made an item.
extension SavedTask {
    /// Whether one of its tags (the reserved elements are none) folds to `folded`.
    package func hasTag(folded: String) -> Bool {
        var wanted = folded
        return wanted.withUTF8 { want in
            tags.contains { tag in
                guard tag.first != 1 else { return false }  // a dependency, not a tag
                // ASCII folds to its lowercase, and equal ASCII strings are equal bytes.
                guard WordSearch.isASCII(tag) && WordSearch.isASCII(want) else {
                    return TextFolding.folded(String(decoding: tag, as: UTF8.self)) == folded
                }
                return tag.count == want.count && zip(tag, want).allSatisfy { WordSearch.lowered($0) == $1 }
            }
        }
    }

    /// Whether it is on the list named `name` (names compared as strings).
    package func isOnList(_ name: String) -> Bool {
        guard let list else { return false }
        var name = name
        return name.withUTF8 { want in
            WordSearch.isASCII(list) && WordSearch.isASCII(want)
                ? list.elementsEqual(want) : String(decoding: list, as: UTF8.self) == String(decoding: want, as: UTF8.self)
        }
    }
}

/// What a table shows of a saved task, read in place.
extension SavedTask {
    package var savedTitle: UnsafeBufferPointer<UInt8> { title }
    package var savedList: UnsafeBufferPointer<UInt8>? { list }

    /// The tags a person sees (the reserved elements, dependencies, are none), in byte order.
    package var savedTags: [UnsafeBufferPointer<UInt8>] {
        tags.isEmpty ? [] : tags.filter { $0.first != 1 }
    }

    /// Whether it repeats (as ``TaskItem/recurrence`` says).
    package var isRecurring: Bool {
        metaValue(PlanningKey.recur).map { RecurrenceRule(String(decoding: $0, as: UTF8.self)) != nil } ?? false
    }

    /// Whether it may name a parent or a dependency.
    var holdsLink: Bool { metaValue(PlanningKey.parent) != nil || tags.contains { $0.first == 1 } }

    /// Whether work on it started (as ``TaskItem/startedAt`` says).
    package var isStarted: Bool { savedDue(meta: PlanningKey.start) != nil }
}

extension TaskRecord {
    /// Whether it may name a parent or a dependency: its parent register holds a value, or
    /// its tag set a reserved element.
    var holdsLink: Bool {
        (meta[PlanningKey.parent]?.value ?? nil) != nil || tags.dotsByElement.keys.contains(where: PlanningKey.isReservedTag)
    }
}

extension TaskState {
    /// Whether a live task may name a parent or a dependency: when none does, a listing
    /// shows each task on its own (no task's place or STATE depends on another).
    package var holdsLinks: Bool {
        records.indices.contains { records.liveDots(at: $0) != nil && records.values[$0].holdsLink }
    }
}
