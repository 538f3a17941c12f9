/// An observed-remove set with add-wins semantics.
///
/// Each add carries a unique tag (the ``OperationID`` of the add, its *dot*). A remove
/// deletes only the dots it observed, so an add concurrent with a remove survives. Removed
/// dots are remembered as tombstones, which makes the order in which operations arrive
/// irrelevant: a dot's add arriving after its remove stays removed.
///
/// Invariant: an element is present iff some add dot of it is not tombstoned.
/// Merge is commutative, associative and idempotent (Spec/crdt.md, "OR-set").
///
/// The methods are inlinable so that callers in other modules get code specialised for
/// their element type (the set sits on the hot path of loading and applying operations).
public struct ORSet<Element: Hashable & Sendable>: Sendable, Equatable {
    @usableFromInline var liveDots: [Element: LiveDots] = [:]
    @usableFromInline var removedTags: Set<OperationID> = []

    @inlinable public init() {}

    /// A set from its parts: the live dots of each present element and the tombstones. No
    /// live dot may be a tombstone (the parts of another set, or of a state that keeps them).
    @inlinable public init(dotsByElement: [Element: LiveDots], tombstones: Set<OperationID>) {
        liveDots = dotsByElement
        removedTags = tombstones
    }

    /// Live dots of each present element, as sets (for inspection; ``dots(of:)`` is cheaper).
    public var tags: [Element: Set<OperationID>] { liveDots.mapValues(\.set) }
    /// Every dot that some remove observed.
    @inlinable public var tombstones: Set<OperationID> { removedTags }

    @inlinable public var elements: Set<Element> { Set(liveDots.keys) }
    /// The live dots of each present element.
    @inlinable public var dotsByElement: [Element: LiveDots] { liveDots }
    /// How many elements are present.
    @inlinable public var count: Int { liveDots.count }
    @inlinable public var isEmpty: Bool { liveDots.isEmpty }
    @inlinable public func contains(_ element: Element) -> Bool { liveDots[element] != nil }
    /// The live dots of `element`, nil when it is not present.
    @inlinable public func dots(of element: Element) -> LiveDots? { liveDots[element] }

    /// Adds `element` under the unique dot `tag`.
    @inlinable public mutating func add(_ element: Element, tag: OperationID) {
        guard removedTags.isEmpty || !removedTags.contains(tag) else { return }
        if liveDots[element]?.insert(tag) == nil { liveDots[element] = LiveDots(tag) }
    }

    /// Removes the observed dots of `element`; dots not observed stay.
    @inlinable public mutating func remove(_ element: Element, observed: some Sequence<OperationID>) {
        for tag in observed {
            removedTags.insert(tag)
            if liveDots[element]?.contains(tag) == true {
                liveDots[element] = liveDots[element]!.removing(tag)
            } else if let holder = liveDots.first(where: { $0.value.contains(tag) })?.key {
                // A dot named under another element (a malformed remove): it is dead all the
                // same, exactly as merge would make it, so arrival order cannot matter.
                liveDots[holder] = liveDots[holder]!.removing(tag)
            }
        }
    }

    /// The dots a remove of `element` issued now would observe.
    @inlinable public func observedTags(of element: Element) -> Set<OperationID> { liveDots[element]?.set ?? [] }

    @inlinable public mutating func merge(_ other: ORSet) {
        removedTags.formUnion(other.removedTags)
        for (element, otherDots) in other.liveDots {
            if liveDots[element]?.formUnion(otherDots) == nil { liveDots[element] = otherDots }
        }
        guard !removedTags.isEmpty else { return }
        for (element, live) in liveDots {
            let kept = live.subtracting(removedTags)
            if kept?.count != live.count { liveDots[element] = kept }
        }
    }

    @inlinable public func merging(_ other: ORSet) -> ORSet {
        var m = self
        m.merge(other)
        return m
    }
}

/// The live dots of one present element of an ``ORSet``: never empty, and almost always a
/// single dot, which is held inline (no set is allocated for it).
public struct LiveDots: Sendable, Hashable, Sequence {
    @usableFromInline enum Storage: Sendable, Hashable {
        case one(OperationID)
        /// Two dots or more (a set of one is always stored as `.one`, so equality is plain).
        case many(Set<OperationID>)
    }

    @usableFromInline var storage: Storage

    /// A single dot.
    @inlinable public init(_ dot: OperationID) { storage = .one(dot) }

    /// The dots of `dots`, nil when it is empty.
    @inlinable public init?(_ dots: Set<OperationID>) {
        switch dots.count {
        case 0: return nil
        case 1: storage = .one(dots.first!)
        default: storage = .many(dots)
        }
    }

    @inlinable public var count: Int {
        switch storage {
        case .one: 1
        case .many(let s): s.count
        }
    }

    @inlinable public func contains(_ dot: OperationID) -> Bool {
        switch storage {
        case .one(let d): d == dot
        case .many(let s): s.contains(dot)
        }
    }

    /// The dots as a set.
    @inlinable public var set: Set<OperationID> {
        switch storage {
        case .one(let d): [d]
        case .many(let s): s
        }
    }

    @inlinable public func makeIterator() -> Set<OperationID>.Iterator { set.makeIterator() }

    @inlinable public mutating func insert(_ dot: OperationID) {
        switch storage {
        case .one(let d) where d == dot: return
        case .one(let d): storage = .many([d, dot])
        case .many(var s):
            storage = .one(dot)  // drops the set's reference so the insert below does not copy it
            s.insert(dot)
            storage = .many(s)
        }
    }

    @inlinable public mutating func formUnion(_ other: LiveDots) {
        switch other.storage {
        case .one(let d): insert(d)
        case .many(let s): for d in s { insert(d) }
        }
    }

    /// The dots without `dot`, nil when none is left.
    @inlinable public func removing(_ dot: OperationID) -> LiveDots? {
        switch storage {
        case .one(let d): return d == dot ? nil : self
        case .many(var s):
            s.remove(dot)
            return LiveDots(s)
        }
    }

    /// The dots that are not in `removed`, nil when none is left.
    @inlinable public func subtracting(_ removed: Set<OperationID>) -> LiveDots? {
        switch storage {
        case .one(let d): return removed.contains(d) ? nil : self
        case .many(let s): return LiveDots(s.subtracting(removed))
        }
    }
}
