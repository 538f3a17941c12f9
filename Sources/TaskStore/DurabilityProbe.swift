import Synchronization

/// A hook for simulations of power loss: told of every fsync the store makes, with the
/// descriptor and path it made durable, so a simulator can keep what was synced and drop the
/// rest. Not for applications (it runs inside the store's write path).
package enum DurabilityProbe {
    /// The observer, boxed: a function value kept in the mutex itself would be wrapped in a
    /// new reabstraction thunk at each read, a chain that grows with every fsync.
    private final class Observer: Sendable {
        let observe: @Sendable (_ descriptor: Int32, _ path: String) -> Void
        init(_ observe: @escaping @Sendable (Int32, String) -> Void) { self.observe = observe }
    }

    private static let observer = Mutex<Observer?>(nil)

    /// Installs (or, with nil, removes) the observer for this process.
    package static func install(_ observe: (@Sendable (_ descriptor: Int32, _ path: String) -> Void)?) {
        let box = observe.map(Observer.init)
        observer.withLock { $0 = box }
    }

    static func synced(_ descriptor: Int32, _ path: String) {
        if let box = observer.withLock({ $0 }) { box.observe(descriptor, path) }
    }
}
