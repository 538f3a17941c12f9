/// The hash index of a ``TaskTable``: from a task id to the position of its record.
///
/// Open addressing with linear probing over slots that hold only positions; a slot's id is
/// read from the table's id array at that position. A dictionary of ids kept a copy of every
/// id beside its position (28 bytes a slot instead of 4) and went through the generic
/// dictionary's machinery on every operation applied. Positions are only added, never
/// removed (records are never removed), so no slot is ever emptied again.
///
/// Invariants (``invariantViolations(ids:)`` checks them): the slot count is a power of two,
/// at least 8; at most half the slots are filled, so every probe ends; the filled slots hold
/// the positions `0..<count`, once each; each lies where a probe for its id ends.
@usableFromInline struct PositionIndex: Sendable {
    /// Positions, or `empty`; the count is a power of two.
    @usableFromInline var slots: [Int32]
    /// How many positions are held.
    @usableFromInline var count = 0

    @usableFromInline static var empty: Int32 { -1 }

    init() { slots = [Int32](repeating: Self.empty, count: 8) }

    /// Room for `capacity` positions without growing: at most half the slots are filled.
    mutating func reserveCapacity(_ capacity: Int, ids: [TaskID]) {
        let wanted = Self.slotCount(for: capacity)
        if wanted > slots.count { rehash(slotCount: wanted, ids: ids) }
    }

    static func slotCount(for capacity: Int) -> Int {
        var n = 8
        while n < 2 * capacity { n *= 2 }
        return n
    }

    /// The position of `id`, given the table's ids by position.
    @inlinable @inline(__always)
    func position(of id: TaskID, ids: [TaskID]) -> Int32? {
        let (_, found) = probe(id, ids: ids)
        return found
    }

    /// The hash an id is placed by.
    @inlinable @inline(__always)
    static func hash(_ id: TaskID) -> Int { id._rawHashValue(seed: 0) }

    /// The slot where `id` is, or the empty slot where it would go; and its position if found.
    /// - Parameter hash: `Self.hash(id)`, when the caller has it already.
    @inlinable @inline(__always)
    func probe(_ id: TaskID, hash: Int? = nil, ids: [TaskID]) -> (slot: Int, position: Int32?) {
        let mask = slots.count - 1
        var i = (hash ?? Self.hash(id)) & mask
        while true {
            let p = slots[i]
            if p == Self.empty { return (i, nil) }
            if ids[Int(p)] == id { return (i, p) }
            i = (i + 1) & mask
        }
    }

    /// Puts `position` in `slot`, the empty slot ``probe(_:ids:)`` gave for its id (nothing
    /// changed since); `ids` already holds the new id at `position`, for growing.
    @inlinable @inline(__always)
    mutating func fill(_ slot: Int, with position: Int32, ids: [TaskID]) {
        slots[slot] = position
        count += 1
        if 2 * count > slots.count { rehash(slotCount: slots.count * 2, ids: ids) }
    }

    /// Moves every position into `slotCount` fresh slots.
    @usableFromInline mutating func rehash(slotCount: Int, ids: [TaskID]) {
        var fresh = [Int32](repeating: Self.empty, count: slotCount)
        let mask = slotCount - 1
        fresh.withUnsafeMutableBufferPointer { f in
            for position in 0..<count {
                var i = Self.hash(ids[position]) & mask
                while f[i] != Self.empty { i = (i + 1) & mask }
                f[i] = Int32(position)
            }
        }
        slots = fresh
    }
}
