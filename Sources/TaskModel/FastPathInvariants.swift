/// Checkers of the invariants the fast paths of this module rely on, named at the top of
/// each fast path's file. Tests call them after real operations; nothing else does, as each
/// one walks the whole structure.

extension PositionIndex {
    /// Every invariant the index breaks, given the table's ids by position (empty: it keeps
    /// them all). Each position is looked up only when a probe for it must end.
    func invariantViolations(ids: [TaskID]) -> [String] {
        var found: [String] = []
        let slotCountIsValid = slots.count >= 8 && slots.count & (slots.count - 1) == 0
        if !slotCountIsValid { found.append("\(slots.count) slots: not a power of two of at least 8") }
        if 2 * count > slots.count { found.append("\(count) positions fill more than half of \(slots.count) slots") }
        if count > ids.count { found.append("\(count) positions but \(ids.count) ids") }
        var seen = [Bool](repeating: false, count: min(max(count, 0), ids.count))
        var filled = 0
        var inRange = true
        for (slot, p) in slots.enumerated() where p != Self.empty {
            filled += 1
            guard p >= 0, Int(p) < seen.count, Int(p) < ids.count else {
                found.append("slot \(slot) holds position \(p), outside 0..<\(seen.count)")
                inRange = false
                continue
            }
            if seen[Int(p)] { found.append("position \(p) is in two slots") }
            seen[Int(p)] = true
        }
        if filled != count { found.append("\(filled) slots filled, but count is \(count)") }
        // A probe ends only at an empty slot or its id, and reads the id of every slot it passes.
        guard slotCountIsValid, inRange, filled < slots.count else { return found }
        for (slot, p) in slots.enumerated() where p != Self.empty {
            let probed = probe(ids[Int(p)], ids: ids)
            if probed.slot != slot || probed.position != p {
                found.append("position \(p), in slot \(slot), is not where a probe for its id \(ids[Int(p)]) ends")
            }
        }
        return found
    }

    /// Stops the process if the index breaks an invariant (``invariantViolations(ids:)``).
    func _checkInvariants(ids: [TaskID]) {
        let violations = invariantViolations(ids: ids)
        precondition(violations.isEmpty, "PositionIndex: " + violations.joined(separator: "; "))
    }
}

extension TaskTable {
    /// Every invariant the table or its index breaks (empty: it keeps them all).
    package func invariantViolations() -> [String] {
        var found: [String] = []
        if taskIDs.count != values.count || live.count != values.count {
            found.append("\(taskIDs.count) ids, \(values.count) records and \(live.count) live dots")
        }
        if positions.count != taskIDs.count { found.append("the index holds \(positions.count) positions for \(taskIDs.count) ids") }
        if Set(taskIDs).count != taskIDs.count { found.append("an id is at two positions") }
        let liveTasks = live.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        if liveCount != liveTasks { found.append("liveCount is \(liveCount), but \(liveTasks) tasks have live dots") }
        if let last = lastFound, !(0..<taskIDs.count).contains(Int(last.position)) || taskIDs[Int(last.position)] != last.id {
            found.append("the id found last, \(last.id), is not at its position \(last.position)")
        }
        return found + positions.invariantViolations(ids: taskIDs).map { "index: " + $0 }
    }

    /// Stops the process if the table breaks an invariant (``invariantViolations()``).
    package func _checkInvariants() {
        let violations = invariantViolations()
        precondition(violations.isEmpty, "TaskTable: " + violations.joined(separator: "; "))
    }
}

extension SideBySide {
    /// How `parts` fails to cover `0..<count` exactly, disjoint and in order (empty: it does).
    static func coverageViolations(_ parts: [Range<Int>], count: Int) -> [String] {
        guard let first = parts.first, let last = parts.last else { return ["no parts"] }
        var found: [String] = []
        if first.lowerBound != 0 { found.append("the first part, \(first), does not start at 0") }
        for (a, b) in zip(parts, parts.dropFirst()) where b.lowerBound != a.upperBound {
            found.append("\(b) does not start where \(a) ends")
        }
        if last.upperBound != count { found.append("the last part, \(last), does not end at \(count)") }
        return found
    }

    /// How ``parts(of:)`` breaks its contract for `count` elements (empty: it keeps it): the
    /// parts cover `0..<count` exactly, disjoint and in order, at most one per core, and
    /// each is at least ``smallestPart`` long when there are two or more.
    static func partsViolations(of count: Int) -> [String] {
        let parts = parts(of: count)
        var found = coverageViolations(parts, count: count)
        if parts.count > cores { found.append("\(parts.count) parts for \(cores) cores") }
        if parts.count > 1, let short = parts.first(where: { $0.count < smallestPart }) {
            found.append("\(short) is shorter than \(smallestPart)")
        }
        return found
    }
}
