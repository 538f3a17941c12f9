/// An observed-remove set with add-wins semantics.
///
/// Each add carries a unique tag (the ``OperationID`` of the add). A remove deletes only
/// the tags it observed, so an add concurrent with a remove survives. Removed tags are
/// remembered as tombstones, which makes the order in which operations arrive irrelevant:
/// a tag's add arriving after its remove stays removed.
///
/// Invariant: an element is present iff some add tag of it is not tombstoned.
/// Merge is commutative, associative and idempotent (Spec/crdt.md, "OR-set").
///
/// The methods are inlinable so that callers in other modules get code specialised for
/// their element type (the set sits on the hot path of loading and applying operations).
public struct ORSet<Element: Hashable & Sendable>: Sendable, Equatable {
    @usableFromInline var liveTags: [Element: Set<OperationID>] = [:]
    @usableFromInline var removedTags: Set<OperationID> = []

    @inlinable public init() {}

    /// Live tags of each present element.
    @inlinable public var tags: [Element: Set<OperationID>] { liveTags }
    /// Every tag that some remove observed.
    @inlinable public var tombstones: Set<OperationID> { removedTags }

    @inlinable public var elements: Set<Element> { Set(liveTags.keys) }
    @inlinable public var isEmpty: Bool { liveTags.isEmpty }
    @inlinable public func contains(_ element: Element) -> Bool { liveTags[element] != nil }

    /// Makes room for `count` present elements (for decoders that know the size up front).
    @inlinable public mutating func reserveCapacity(_ count: Int) { liveTags.reserveCapacity(count) }

    /// Adds `element` under the unique tag `tag`.
    @inlinable public mutating func add(_ element: Element, tag: OperationID) {
        guard removedTags.isEmpty || !removedTags.contains(tag) else { return }
        liveTags[element, default: []].insert(tag)
    }

    /// Removes the observed tags of `element`; tags not observed stay.
    @inlinable public mutating func remove(_ element: Element, observed: some Sequence<OperationID>) {
        for tag in observed {
            removedTags.insert(tag)
            if var live = liveTags[element], live.remove(tag) != nil {
                liveTags[element] = live.isEmpty ? nil : live
            } else if let holder = liveTags.first(where: { $0.value.contains(tag) })?.key {
                // A tag named under another element (a malformed remove): it is dead all the
                // same, exactly as merge would make it, so arrival order cannot matter.
                liveTags[holder]!.remove(tag)
                if liveTags[holder]!.isEmpty { liveTags[holder] = nil }
            }
        }
    }

    /// The tags a remove of `element` issued now would observe.
    @inlinable public func observedTags(of element: Element) -> Set<OperationID> { liveTags[element] ?? [] }

    @inlinable public mutating func merge(_ other: ORSet) {
        removedTags.formUnion(other.removedTags)
        for (element, otherTags) in other.liveTags {
            liveTags[element, default: []].formUnion(otherTags)
        }
        for (element, live) in liveTags {
            let kept = live.subtracting(removedTags)
            if kept.count != live.count { liveTags[element] = kept.isEmpty ? nil : kept }
        }
    }

    @inlinable public func merging(_ other: ORSet) -> ORSet {
        var m = self
        m.merge(other)
        return m
    }
}
