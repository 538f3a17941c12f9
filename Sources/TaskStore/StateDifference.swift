@_spi(Engine) import TaskModel

/// Human-readable differences between two states (for `replay --verify`).
enum StateDifference {
    static func list(expected: TaskState, actual: TaskState) -> [String] {
        var out: [String] = []
        if expected.version != actual.version {
            out.append("version vector: logs \(expected.version), saved \(actual.version)")
        }
        let ids = Set(expected.records.ids).union(actual.records.ids)
        let (expectedMembers, actualMembers) = (expected.membership, actual.membership)
        for id in ids.sorted() {
            let e = expected.records[id]
            let a = actual.records[id]
            if e != a {
                switch (e, a) {
                case (nil, _): out.append("task \(id): in the saved state only")
                case (_, nil): out.append("task \(id): in the logs only")
                default: out.append("task \(id): fields differ")
                }
            }
            if expected.isLive(id) != actual.isLive(id) || expectedMembers.observedTags(of: id) != actualMembers.observedTags(of: id) {
                out.append("task \(id): membership differs")
            }
        }
        if expectedMembers.tombstones != actualMembers.tombstones {
            out.append("removed-task tags differ")
        }
        if expected.deviceNameRegisters != actual.deviceNameRegisters {
            out.append("device names differ")
        }
        if out.isEmpty && expected != actual { out.append("states differ") }
        return out
    }
}
