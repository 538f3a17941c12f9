/// A value that converges by keeping the write with the greatest ``Stamp``.
///
/// Merging is commutative, associative and idempotent, so replicas may exchange
/// registers in any order, any number of times. Distinct writes never tie: the
/// replica id and sequence number are the last tie-breakers (Spec/crdt.md, "LWW register").
///
/// - Complexity: O(1) for ``merge(_:)`` and ``assign(_:at:)``.
public struct LWWRegister<Value: Sendable & Equatable>: Sendable, Equatable {
    @usableFromInline var winningValue: Value
    @usableFromInline var winningStamp: Stamp

    /// The value of the winning write.
    @inlinable public var value: Value { winningValue }
    /// The stamp of the winning write.
    @inlinable public var stamp: Stamp { winningStamp }

    @inlinable public init(value: Value, stamp: Stamp) {
        winningValue = value
        winningStamp = stamp
    }

    /// Applies a write; it wins only if its stamp is greater than the current one.
    /// - Returns: whether the write won.
    @discardableResult
    @inlinable public mutating func assign(_ newValue: consuming Value, at newStamp: Stamp) -> Bool {
        guard newStamp > winningStamp else { return false }
        winningValue = newValue
        winningStamp = newStamp
        return true
    }

    @inlinable public mutating func merge(_ other: LWWRegister) {
        assign(other.value, at: other.stamp)
    }

    @inlinable public func merging(_ other: LWWRegister) -> LWWRegister {
        var m = self
        m.merge(other)
        return m
    }
}

extension Optional {
    /// Applies a write to an optional register, creating it on the first write.
    @discardableResult
    @inlinable public mutating func assign<V>(_ newValue: consuming V, at stamp: Stamp) -> Bool
    where Wrapped == LWWRegister<V> {
        // Only the stamp is read: the winning value is replaced whole, never copied out.
        if let current = self?.winningStamp, stamp <= current { return false }
        self = LWWRegister(value: newValue, stamp: stamp)
        return true
    }

    /// ``assign(_:at:)`` that hands back the value it lets go, moved rather than dropped, so
    /// that the caller chooses where it is released: the previous value when the write wins
    /// (nil if there was none), else `newValue` itself.
    @inlinable public mutating func replace<V>(with newValue: consuming V, at stamp: Stamp) -> V?
    where Wrapped == LWWRegister<V> {
        if let current = self?.winningStamp, stamp <= current { return newValue }
        let previous = take()
        self = LWWRegister(value: newValue, stamp: stamp)
        return previous?.winningValue
    }

    /// Merges two optional registers; an absent register is the identity.
    @inlinable public func merging<V>(_ other: LWWRegister<V>?) -> LWWRegister<V>? where Wrapped == LWWRegister<V> {
        guard let a = self else { return other }
        guard let b = other else { return a }
        return a.merging(b)
    }
}
