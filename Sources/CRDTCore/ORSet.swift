/// An observed-remove set with add-wins semantics.
///
/// Each add carries a unique tag (the ``OperationID`` of the add). A remove deletes only
/// the tags it observed, so an add concurrent with a remove survives. Removed tags are
/// remembered as tombstones, which makes the order in which operations arrive irrelevant:
/// a tag's add arriving after its remove stays removed.
///
/// Invariant: an element is present iff some add tag of it is not tombstoned.
/// Merge is commutative, associative and idempotent (Spec/crdt.md, "OR-set").
public struct ORSet<Element: Hashable & Sendable>: Sendable, Equatable {
    /// Live tags of each present element.
    public private(set) var tags: [Element: Set<OperationID>] = [:]
    /// Every tag that some remove observed.
    public private(set) var tombstones: Set<OperationID> = []

    public init() {}

    public var elements: Set<Element> { Set(tags.keys) }
    public var isEmpty: Bool { tags.isEmpty }
    public func contains(_ element: Element) -> Bool { tags[element] != nil }

    /// Adds `element` under the unique tag `tag`.
    public mutating func add(_ element: Element, tag: OperationID) {
        guard !tombstones.contains(tag) else { return }
        tags[element, default: []].insert(tag)
    }

    /// Removes the observed tags of `element`; tags not observed stay.
    public mutating func remove(_ element: Element, observed: some Sequence<OperationID>) {
        for tag in observed {
            tombstones.insert(tag)
            if var live = tags[element], live.remove(tag) != nil {
                tags[element] = live.isEmpty ? nil : live
            } else if let holder = tags.first(where: { $0.value.contains(tag) })?.key {
                // A tag named under another element (a malformed remove): it is dead all the
                // same, exactly as merge would make it, so arrival order cannot matter.
                tags[holder]!.remove(tag)
                if tags[holder]!.isEmpty { tags[holder] = nil }
            }
        }
    }

    /// The tags a remove of `element` issued now would observe.
    public func observedTags(of element: Element) -> Set<OperationID> { tags[element] ?? [] }

    public mutating func merge(_ other: ORSet) {
        tombstones.formUnion(other.tombstones)
        for (element, otherTags) in other.tags {
            tags[element, default: []].formUnion(otherTags)
        }
        for (element, live) in tags {
            let kept = live.subtracting(tombstones)
            if kept.count != live.count { tags[element] = kept.isEmpty ? nil : kept }
        }
    }

    public func merging(_ other: ORSet) -> ORSet {
        var m = self
        m.merge(other)
        return m
    }
}
