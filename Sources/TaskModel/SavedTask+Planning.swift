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
